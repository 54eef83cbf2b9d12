//===- Profile.cpp - Read the JSON written by libkloop-cupti.so -----------===//
#include "kloop/Verify/Profile.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "kloop/Support/BufferHash.h"

using namespace llvm;
using nlohmann::json;

namespace kloop {
namespace verify {

uint64_t bufferHashOf(ArrayRef<uint8_t> Bytes) { return bufferHash(Bytes.data(), Bytes.size()); }

namespace {

/// Reads members of one JSON document, prefixing errors with the file name.
class Reader {
public:
  explicit Reader(StringRef File) : File(File.str()) {}

  Error error(const std::string &Field, const Twine &What) const {
    return createStringError(inconvertibleErrorCode(),
                             File + ": " + Field + ": " + What);
  }

  static std::string child(const std::string &Path, StringRef Key) {
    return Path.empty() ? Key.str() : Path + "." + Key.str();
  }

  /// Member Key of object J; nullptr when absent and !Required.
  Expected<const json *> get(const json &J, StringRef Key,
                             const std::string &Path, bool Required) const {
    if (!J.is_object())
      return error(Path.empty() ? "<root>" : Path, "expected an object");
    auto It = J.find(Key.str());
    if (It == J.end()) {
      if (Required)
        return error(child(Path, Key), "missing");
      return nullptr;
    }
    return &*It;
  }

  /// Reads member Key of J into Out when it passes the type test \p Is; absent and
  /// !Required leaves Out alone. Errors name the file, the field and \p Expected.
  template <typename T>
  Error typed(const json &J, StringRef Key, const std::string &Path, T &Out, bool Required,
              bool (json::*Is)() const noexcept, const char *Expected) const {
    auto M = get(J, Key, Path, Required);
    if (!M)
      return M.takeError();
    if (!*M)
      return Error::success();
    if (!((**M).*Is)())
      return error(child(Path, Key), Expected);
    Out = (*M)->get<T>();
    return Error::success();
  }

  Error u64(const json &J, StringRef Key, const std::string &Path,
            uint64_t &Out, bool Required = true) const {
    return typed(J, Key, Path, Out, Required, &json::is_number_unsigned,
                 "expected a non-negative integer");
  }

  Error i64(const json &J, StringRef Key, const std::string &Path,
            int64_t &Out, bool Required = true) const {
    return typed(J, Key, Path, Out, Required, &json::is_number_integer, "expected an integer");
  }

  Error str(const json &J, StringRef Key, const std::string &Path,
            std::string &Out, bool Required = true) const {
    return typed(J, Key, Path, Out, Required, &json::is_string, "expected a string");
  }

  Error boolean(const json &J, StringRef Key, const std::string &Path,
                bool &Out, bool Required = true) const {
    return typed(J, Key, Path, Out, Required, &json::is_boolean, "expected true or false");
  }

  /// An optional count where -1 means "unknown": absent or -1 gives
  /// std::nullopt.
  Error countOrUnknown(const json &J, StringRef Key, const std::string &Path,
                       std::optional<uint64_t> &Out) const {
    auto M = get(J, Key, Path, /*Required=*/false);
    if (!M)
      return M.takeError();
    Out.reset();
    if (!*M || ((**M).is_number_integer() && (**M).get<int64_t>() == -1))
      return Error::success();
    if (!(**M).is_number_unsigned())
      return error(child(Path, Key), "expected -1 or a non-negative integer");
    Out = (**M).get<uint64_t>();
    return Error::success();
  }

  /// An integer, or -1/absent for unknown (a temperature: any other negative value is a reading).
  Error integerOrUnknown(const json &J, StringRef Key, const std::string &Path,
                         std::optional<int64_t> &Out) const {
    auto M = get(J, Key, Path, /*Required=*/false);
    if (!M)
      return M.takeError();
    Out.reset();
    if (*M && !(**M).is_number_integer())
      return error(child(Path, Key), "expected an integer");
    if (*M && (**M).get<int64_t>() != -1)
      Out = (**M).get<int64_t>();
    return Error::success();
  }

  Error dim3(const json &J, StringRef Key, const std::string &Path,
             std::array<uint64_t, 3> &Out) const {
    auto M = get(J, Key, Path, /*Required=*/true);
    if (!M)
      return M.takeError();
    const json &A = **M;
    if (!A.is_array() || A.size() != 3)
      return error(child(Path, Key),
                   "expected an array of 3 non-negative integers");
    for (size_t I = 0; I < 3; ++I) {
      if (!A[I].is_number_unsigned())
        return error(child(Path, Key),
                     "expected an array of 3 non-negative integers");
      Out[I] = A[I].get<uint64_t>();
    }
    return Error::success();
  }

  /// Member Key as an array (required) or empty when optional and absent.
  Expected<const json *> array(const json &J, StringRef Key,
                               const std::string &Path, bool Required) const {
    auto M = get(J, Key, Path, Required);
    if (!M)
      return M.takeError();
    if (*M && !(*M)->is_array())
      return error(child(Path, Key), "expected an array");
    return *M;
  }

  std::string File;
};

/// Parses "0x..." or plain hex.
bool parseHex(StringRef S, uint64_t &Out) {
  S.consume_front("0x") || S.consume_front("0X");
  if (S.empty() || S.size() > 16)
    return false;
  return !S.getAsInteger(16, Out);
}

Error parseLaunch(const Reader &R, const json &J, const std::string &P,
                  LaunchRecord &L) {
  // libkloop-cupti writes -1 for a record whose launch call it did not see
  // (docs/cupti.md); such a launch sorts last.
  int64_t Seq = 0;
  if (Error E = R.i64(J, "seq", P, Seq))
    return E;
  if (Seq < -1)
    return R.error(Reader::child(P, "seq"), "expected -1 or a non-negative integer");
  L.Seq = Seq == -1 ? UnseenLaunchSeq : static_cast<uint64_t>(Seq);
  if (Error E = R.str(J, "kernel", P, L.Kernel))
    return E;
  if (Error E = R.str(J, "name", P, L.Name, false))
    return E;
  if (Error E = R.dim3(J, "grid", P, L.Grid))
    return E;
  if (Error E = R.dim3(J, "block", P, L.Block))
    return E;
  if (Error E = R.u64(J, "registers", P, L.Registers, false))
    return E;
  if (Error E = R.u64(J, "static_smem", P, L.StaticSmem, false))
    return E;
  if (Error E = R.u64(J, "dynamic_smem", P, L.DynamicSmem, false))
    return E;
  if (Error E = R.u64(J, "stream", P, L.Stream, false))
    return E;
  if (Error E = R.str(J, "stream_kind", P, L.StreamKind, false))
    return E;
  if (Error E = R.u64(J, "context", P, L.Context, false))
    return E;
  if (Error E = R.u64(J, "start_ns", P, L.StartNs))
    return E;
  if (Error E = R.u64(J, "end_ns", P, L.EndNs))
    return E;
  if (Error E = R.u64(J, "duration_ns", P, L.DurationNs))
    return E;
  return Error::success();
}

Error parseEnv(const Reader &R, const json &J, const std::string &P,
               EnvSample &S) {
  if (Error E = R.u64(J, "t_ns", P, S.TimeNs))
    return E;
  if (Error E = R.countOrUnknown(J, "sm_clock_mhz", P, S.SmClockMHz))
    return E;
  if (Error E = R.countOrUnknown(J, "mem_clock_mhz", P, S.MemClockMHz))
    return E;
  if (Error E = R.integerOrUnknown(J, "temp_c", P, S.TempC))
    return E;
  if (Error E = R.countOrUnknown(J, "power_mw", P, S.PowerMw))
    return E;
  if (Error E = R.countOrUnknown(J, "throttle_reasons", P, S.ThrottleReasons))
    return E;
  if (Error E = R.countOrUnknown(J, "compute_processes", P, S.ComputeProcesses))
    return E;
  if (Error E = R.countOrUnknown(J, "foreign_processes", P, S.ForeignProcesses))
    return E;
  if (Error E = R.countOrUnknown(J, "gpu_util_pct", P, S.GpuUtilPct))
    return E;
  if (Error E = R.countOrUnknown(J, "mem_util_pct", P, S.MemUtilPct))
    return E;
  auto Pids = R.array(J, "foreign_pids", P, false);
  if (!Pids)
    return Pids.takeError();
  if (*Pids)
    for (const json &Pid : **Pids) {
      if (!Pid.is_number_unsigned())
        return R.error(Reader::child(P, "foreign_pids"),
                       "expected an array of process ids");
      S.ForeignPids.push_back(Pid.get<uint64_t>());
    }
  return Error::success();
}

Error parseCapture(const Reader &R, const json &J, const std::string &P,
                   StringRef BaseDir, CaptureRecord &C) {
  if (Error E = R.u64(J, "seq", P, C.Seq))
    return E;
  if (Error E = R.str(J, "kernel", P, C.Kernel))
    return E;
  if (Error E = R.str(J, "name", P, C.Name, false))
    return E;
  if (Error E = R.u64(J, "kernel_ordinal", P, C.KernelOrdinal))
    return E;
  if (Error E = R.u64(J, "arg", P, C.Arg))
    return E;
  std::string Ptr;
  if (Error E = R.str(J, "ptr", P, Ptr, false))
    return E;
  if (!Ptr.empty() && !parseHex(Ptr, C.Ptr))
    return R.error(Reader::child(P, "ptr"),
                   "expected a hexadecimal address like \"0x7f00\", found \"" +
                       Ptr + "\"");
  if (Error E = R.u64(J, "bytes", P, C.Bytes))
    return E;
  std::string Hash;
  if (Error E = R.str(J, "hash", P, Hash))
    return E;
  if (Hash.size() != 16 || !all_of(Hash, isHexDigit) || !parseHex(Hash, C.Hash))
    return R.error(Reader::child(P, "hash"),
                   "expected 16 hex digits (the capture hash), found \"" + Hash +
                       "\"");
  auto Dump = R.get(J, "dump", P, false);
  if (!Dump)
    return Dump.takeError();
  if (*Dump && !(*Dump)->is_null()) {
    if (!(*Dump)->is_string())
      return R.error(Reader::child(P, "dump"), "expected a string or null");
    std::string Rel = (*Dump)->get<std::string>();
    if (Rel.empty())
      return R.error(Reader::child(P, "dump"), "empty file name");
    if (sys::path::is_absolute(Rel)) {
      C.DumpPath = Rel;
    } else {
      SmallString<256> Full(BaseDir);
      sys::path::append(Full, Rel);
      C.DumpPath = std::string(Full);
    }
  }
  if (Error E = R.boolean(J, "poisoned", P, C.Poisoned, false))
    return E;
  return Error::success();
}

} // namespace

Expected<Profile> parseProfile(StringRef Text, StringRef Path) {
  std::string File = Path.empty() ? "<memory>" : Path.str();
  Reader R(File);
  json J = json::parse(Text.begin(), Text.end(), nullptr,
                       /*allow_exceptions=*/false);
  if (J.is_discarded())
    return createStringError(inconvertibleErrorCode(),
                             File + ": not valid JSON");
  Profile Out;
  Out.Path = File;
  std::string Schema;
  if (Error E = R.str(J, "schema", "", Schema))
    return E;
  if (Schema != ProfileSchema)
    return R.error("schema", formatv("expected \"{0}\", found \"{1}\"",
                                     ProfileSchema, Schema));

  auto Device = R.get(J, "device", "", false);
  if (!Device)
    return Device.takeError();
  if (*Device) {
    if (Error E = R.str(**Device, "name", "device", Out.Device.Name, false))
      return E;
    if (Error E = R.str(**Device, "cc", "device",
                        Out.Device.ComputeCapability, false))
      return E;
    if (Error E =
            R.u64(**Device, "l2_bytes", "device", Out.Device.L2Bytes, false))
      return E;
    if (Error E = R.str(**Device, "pci_bus_id", "device", Out.Device.PciBusId, false))
      return E;
  }

  auto Launches = R.array(J, "launches", "", true);
  if (!Launches)
    return Launches.takeError();
  for (size_t I = 0; I < (*Launches)->size(); ++I) {
    LaunchRecord L;
    if (Error E = parseLaunch(R, (**Launches)[I],
                              formatv("launches[{0}]", I).str(), L))
      return E;
    Out.Launches.push_back(std::move(L));
  }

  auto Env = R.array(J, "env_samples", "", false);
  if (!Env)
    return Env.takeError();
  if (*Env)
    for (size_t I = 0; I < (*Env)->size(); ++I) {
      EnvSample S;
      if (Error E =
              parseEnv(R, (**Env)[I], formatv("env_samples[{0}]", I).str(), S))
        return E;
      Out.EnvSamples.push_back(S);
    }
  if (Error E = R.boolean(J, "nvml", "", Out.Nvml, false))
    return E;

  SmallString<256> BaseDir(sys::path::parent_path(File));
  if (BaseDir.empty())
    BaseDir = ".";
  auto Caps = R.array(J, "captures", "", true);
  if (!Caps)
    return Caps.takeError();
  std::map<std::tuple<std::string, uint64_t, uint64_t>, size_t> Seen;
  for (size_t I = 0; I < (*Caps)->size(); ++I) {
    CaptureRecord C;
    std::string P = formatv("captures[{0}]", I).str();
    if (Error E = parseCapture(R, (**Caps)[I], P, BaseDir, C))
      return E;
    auto Key = std::make_tuple(C.Kernel, C.KernelOrdinal, C.Arg);
    auto [It, New] = Seen.emplace(Key, I);
    if (!New)
      return R.error(P, formatv("duplicate capture of kernel {0} ordinal {1} "
                                "arg {2} (also captures[{3}])",
                                C.Kernel, C.KernelOrdinal, C.Arg, It->second));
    Out.Captures.push_back(std::move(C));
  }

  auto Overhead = R.get(J, "overhead", "", false);
  if (!Overhead)
    return Overhead.takeError();
  if (*Overhead)
    if (Error E = R.u64(**Overhead, "wall_ns_in_callbacks", "overhead",
                        Out.OverheadWallNs, false))
      return E;
  if (Error E = R.str(J, "kernel_trace", "", Out.KernelTrace, false))
    return E;
  if (Error E = R.u64(J, "dropped_records", "", Out.DroppedRecords, false))
    return E;
  if (auto Errs = R.get(J, "errors", "", false); !Errs) {
    return Errs.takeError();
  } else if (*Errs) {
    if (!(*Errs)->is_array())
      return R.error("errors", "expected an array of strings");
    for (size_t I = 0; I < (*Errs)->size(); ++I) {
      const json &M = (**Errs)[I];
      if (!M.is_string())
        return R.error("errors[" + std::to_string(I) + "]", "expected a string");
      Out.Errors.push_back(M.get<std::string>());
    }
  }
  auto Memory = R.get(J, "memory", "", false);
  if (!Memory)
    return Memory.takeError();
  if (*Memory) {
    Out.Memory.Known = true;
    for (auto [Key, Field] :
         {std::pair<const char *, uint64_t *>{"live_allocations",
                                              &Out.Memory.LiveAllocations},
          {"live_bytes", &Out.Memory.LiveBytes},
          {"peak_bytes", &Out.Memory.PeakBytes}})
      if (Error E = R.u64(**Memory, Key, "memory", *Field, true))
        return E;
  }
  auto Flush = R.get(J, "l2_flush", "", false);
  if (!Flush)
    return Flush.takeError();
  if (*Flush) {
    Out.L2Flush.Known = true;
    if (Error E = R.boolean(**Flush, "enabled", "l2_flush",
                            Out.L2Flush.Enabled, true))
      return E;
    if (Error E = R.u64(**Flush, "flushes", "l2_flush", Out.L2Flush.Flushes,
                        true))
      return E;
    if (Error E = R.u64(**Flush, "skipped", "l2_flush", Out.L2Flush.Skipped,
                        false))
      return E;
  }
  return Out;
}

std::string profileProblems(const Profile &P) {
  if (P.Errors.empty() && P.DroppedRecords == 0)
    return "";
  std::string S = "profile " + P.Path + " is incomplete:";
  if (!P.Errors.empty()) {
    S += " " + std::to_string(P.Errors.size()) + " error(s) recorded by libkloop-cupti.so (";
    for (size_t I = 0; I < P.Errors.size() && I < 3; ++I)
      S += (I ? "; '" : "'") + P.Errors[I] + "'";
    S += P.Errors.size() > 3 ? "; ...)" : ")";
  }
  if (P.DroppedRecords)
    S += (P.Errors.empty() ? " " : ", ") + std::to_string(P.DroppedRecords) +
         " kernel record(s) dropped by CUPTI (those launches are missing from the samples)";
  return S;
}

Expected<Profile> readProfile(StringRef Path) {
  auto Buf = MemoryBuffer::getFile(Path, /*IsText=*/true);
  if (!Buf)
    return createStringError(Buf.getError(), "cannot read profile %s: %s",
                             Path.str().c_str(),
                             Buf.getError().message().c_str());
  return parseProfile((*Buf)->getBuffer(), Path);
}

Expected<std::unique_ptr<MemoryBuffer>> readDump(const CaptureRecord &C) {
  if (C.DumpPath.empty())
    return createStringError(
        inconvertibleErrorCode(),
        formatv("capture of {0} ordinal {1} arg {2} has no dump", C.Kernel,
                C.KernelOrdinal, C.Arg));
  auto Buf = MemoryBuffer::getFile(C.DumpPath, /*IsText=*/false,
                                   /*RequiresNullTerminator=*/false);
  if (!Buf)
    return createStringError(Buf.getError(), "cannot read dump %s: %s",
                             C.DumpPath.c_str(),
                             Buf.getError().message().c_str());
  ArrayRef<uint8_t> Bytes = dumpBytes(**Buf);
  if (Bytes.size() != C.Bytes)
    return createStringError(
        inconvertibleErrorCode(),
        formatv("dump {0} has {1} bytes but the capture records {2}",
                C.DumpPath, Bytes.size(), C.Bytes));
  uint64_t H = bufferHashOf(Bytes);
  if (H != C.Hash)
    return createStringError(
        inconvertibleErrorCode(),
        formatv("dump {0} hashes to {1:x16} but the capture records {2:x16} "
                "(corrupt or stale dump)",
                C.DumpPath, H, C.Hash));
  return std::move(*Buf);
}

} // namespace verify
} // namespace kloop
