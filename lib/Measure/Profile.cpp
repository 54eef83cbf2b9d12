//===- Profile.cpp - Reading the launches of a kloop-cupti profile --------===//
#include "kloop/Measure/Profile.h"

#include "llvm/Support/MemoryBuffer.h"
#include <nlohmann/json.hpp>

using namespace llvm;
using nlohmann::json;

namespace kloop {
namespace measure {

bool launchThrottled(const Profile &P, const ProfileLaunch &L) {
  if (P.EnvSamples.empty())
    return false;
  const EnvSample *Gov = &P.EnvSamples.front();
  for (const EnvSample &S : P.EnvSamples) {
    if (S.TNs > L.StartNs)
      break;
    Gov = &S;
  }
  return (Gov->ThrottleReasons & ~BenignThrottleMask) != 0;
}

static Error bad(StringRef Name, const Twine &Msg) {
  return createStringError(inconvertibleErrorCode(), (Name + ": corrupt profile: " + Msg).str());
}

/// Reads a non-negative integer member \p Key of \p O into \p Out; absent
/// members leave \p Out unchanged unless \p Required.
static Error getU64(const json &O, const char *Key, uint64_t &Out, StringRef Name, const Twine &Where,
                    bool Required) {
  auto It = O.find(Key);
  if (It == O.end() || It->is_null()) {
    if (Required)
      return bad(Name, Where + ": missing \"" + Key + "\"");
    return Error::success();
  }
  if (It->is_number_unsigned()) {
    Out = It->get<uint64_t>();
    return Error::success();
  }
  if (It->is_number_integer() || It->is_number_float()) {
    double D = It->get<double>();
    if (D >= 0 && D == static_cast<double>(static_cast<uint64_t>(D))) {
      Out = static_cast<uint64_t>(D);
      return Error::success();
    }
  }
  return bad(Name, Where + ": \"" + Key + "\" is not a non-negative integer");
}

Expected<Profile> parseProfile(StringRef Text, StringRef Name) {
  json J = json::parse(Text.begin(), Text.end(), nullptr, /*allow_exceptions=*/false);
  if (J.is_discarded())
    return bad(Name, "not valid JSON");
  if (!J.is_object())
    return bad(Name, "top level is not an object");
  auto Schema = J.find("schema");
  if (Schema == J.end() || !Schema->is_string() || Schema->get<std::string>() != "kloop-cupti/1")
    return bad(Name, "\"schema\" is not \"kloop-cupti/1\"");
  Profile P;
  if (auto D = J.find("device"); D != J.end() && D->is_object()) {
    if (auto N = D->find("name"); N != D->end() && N->is_string())
      P.DeviceName = N->get<std::string>();
    if (auto C = D->find("cc"); C != D->end() && C->is_string())
      P.DeviceCC = C->get<std::string>();
    if (Error E = getU64(*D, "l2_bytes", P.L2Bytes, Name, "device", false))
      return E;
  }
  if (auto N = J.find("nvml"); N != J.end() && N->is_boolean())
    P.Nvml = N->get<bool>();
  auto L = J.find("launches");
  if (L == J.end() || !L->is_array())
    return bad(Name, "\"launches\" is missing or not an array");
  for (size_t I = 0; I < L->size(); ++I) {
    const json &O = (*L)[I];
    std::string Where = "launches[" + std::to_string(I) + "]";
    if (!O.is_object())
      return bad(Name, Where + " is not an object");
    ProfileLaunch PL;
    auto K = O.find("kernel"), N = O.find("name");
    if (K == O.end() || !K->is_string())
      return bad(Name, Where + ": missing \"kernel\"");
    PL.Kernel = K->get<std::string>();
    PL.Name = (N != O.end() && N->is_string()) ? N->get<std::string>() : PL.Kernel;
    if (Error E = getU64(O, "seq", PL.Seq, Name, Where, false))
      return E;
    if (Error E = getU64(O, "start_ns", PL.StartNs, Name, Where, true))
      return E;
    if (Error E = getU64(O, "end_ns", PL.EndNs, Name, Where, true))
      return E;
    if (PL.EndNs < PL.StartNs)
      return bad(Name, Where + ": end_ns is before start_ns");
    PL.DurationNs = PL.EndNs - PL.StartNs;
    if (Error E = getU64(O, "duration_ns", PL.DurationNs, Name, Where, false))
      return E;
    if (Error E = getU64(O, "stream", PL.Stream, Name, Where, false))
      return E;
    P.Launches.push_back(std::move(PL));
  }
  if (auto S = J.find("env_samples"); S != J.end()) {
    if (!S->is_array())
      return bad(Name, "\"env_samples\" is not an array");
    for (size_t I = 0; I < S->size(); ++I) {
      const json &O = (*S)[I];
      std::string Where = "env_samples[" + std::to_string(I) + "]";
      if (!O.is_object())
        return bad(Name, Where + " is not an object");
      EnvSample E;
      uint64_t V = 0;
      if (Error Err = getU64(O, "t_ns", E.TNs, Name, Where, true))
        return Err;
      if (Error Err = getU64(O, "sm_clock_mhz", V = 0, Name, Where, false))
        return Err;
      E.SmClockMHz = static_cast<unsigned>(V);
      if (Error Err = getU64(O, "mem_clock_mhz", V = 0, Name, Where, false))
        return Err;
      E.MemClockMHz = static_cast<unsigned>(V);
      if (Error Err = getU64(O, "temp_c", V = 0, Name, Where, false))
        return Err;
      E.TempC = static_cast<unsigned>(V);
      if (Error Err = getU64(O, "power_mw", E.PowerMw, Name, Where, false))
        return Err;
      if (Error Err = getU64(O, "throttle_reasons", E.ThrottleReasons, Name, Where, false))
        return Err;
      P.EnvSamples.push_back(E);
    }
  }
  if (auto O = J.find("overhead"); O != J.end() && O->is_object())
    if (Error E = getU64(*O, "wall_ns_in_callbacks", P.OverheadNs, Name, "overhead", false))
      return E;
  return P;
}

Expected<Profile> loadProfile(StringRef Path) {
  auto Buf = MemoryBuffer::getFile(Path, /*IsText=*/true);
  if (!Buf)
    return createStringError(Buf.getError(), "%s: cannot read profile: %s", Path.str().c_str(),
                             Buf.getError().message().c_str());
  return parseProfile((*Buf)->getBuffer(), Path);
}

} // namespace measure
} // namespace kloop
