//===- ApplyOutcome.cpp - ApplyOutcome <-> JSON ---------------------------===//
#include "kloop/Optimize/Optimize.h"

using json = nlohmann::json;
using llvm::Expected;

namespace kloop {
namespace optimize {

std::string ApplyOutcome::refusalText() const {
  std::string Out;
  for (const Refusal &R : Refusals)
    Out += (Out.empty() ? "" : "; ") + R.str();
  return Out;
}

json toJSON(const ApplyOutcome &A) {
  json Rs = json::array();
  for (const Refusal &R : A.Refusals)
    Rs.push_back({{"edit_index", R.EditIndex >= 0 ? json(R.EditIndex) : json(nullptr)},
                  {"edit", R.EditLabel},
                  {"reason", R.Reason}});
  json J = {{"applied", A.Applied}, {"refusals", Rs}};
  if (A.Failure)
    J["failure"] = *A.Failure;
  if (!A.LaunchFormulas.empty()) {
    json &F = J["launch_formulas"] = json::object();
    for (const auto &[ID, L] : A.LaunchFormulas)
      F[ID] = inv::toJSON(L);
  }
  return J;
}

static llvm::Error bad(llvm::StringRef Source, const llvm::Twine &Why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Source + ": not an apply outcome: " + Why);
}

/// One element of "refusals" (at index \p I).
static Expected<Refusal> refusalFromJSON(const json &R, size_t I, llvm::StringRef Source) {
  std::string At = "refusals[" + std::to_string(I) + "]";
  if (!R.is_object())
    return bad(Source, At + " is not an object");
  for (const auto &[K, V] : R.items())
    if (K != "edit_index" && K != "edit" && K != "reason")
      return bad(Source, At + " has an unknown key '" + K + "'");
  Refusal Out;
  const json &Idx = R.value("edit_index", json());
  if (!Idx.is_null() && !(Idx.is_number_integer() && Idx.get<int64_t>() >= 0 && Idx.get<int64_t>() < (1 << 30)))
    return bad(Source, At + ".edit_index must be a non-negative integer or null");
  Out.EditIndex = Idx.is_null() ? -1 : Idx.get<int>();
  if (!R.contains("reason") || !R["reason"].is_string() || (R.contains("edit") && !R["edit"].is_string()))
    return bad(Source, At + " needs a string \"reason\" (and \"edit\", when given, must be a string)");
  Out.Reason = R["reason"].get<std::string>();
  Out.EditLabel = R.value("edit", std::string());
  return Out;
}

Expected<ApplyOutcome> applyOutcomeFromJSON(const json &J, llvm::StringRef Source) {
  if (!J.is_object())
    return bad(Source, "expected an object, found " + std::string(J.type_name()));
  for (const auto &[K, V] : J.items())
    if (K != "applied" && K != "refusals" && K != "failure" && K != "launch_formulas")
      return bad(Source, "unknown key '" + K + "'");
  if (!J.contains("applied") || !J["applied"].is_boolean())
    return bad(Source, "\"applied\" must be a boolean");
  ApplyOutcome A;
  A.Applied = J["applied"].get<bool>();
  const json &Rs = J.value("refusals", json::array());
  if (!Rs.is_array())
    return bad(Source, "\"refusals\" must be an array");
  for (size_t I = 0; I < Rs.size(); ++I) {
    Expected<Refusal> R = refusalFromJSON(Rs[I], I, Source);
    if (!R)
      return R.takeError();
    A.Refusals.push_back(std::move(*R));
  }
  if (J.contains("failure")) {
    if (!J["failure"].is_string())
      return bad(Source, "\"failure\" must be a string");
    A.Failure = J["failure"].get<std::string>();
  }
  const json &Fs = J.value("launch_formulas", json::object());
  if (!Fs.is_object())
    return bad(Source, "\"launch_formulas\" must be an object");
  for (const auto &[ID, F] : Fs.items()) {
    Expected<inv::LaunchFormula> L = inv::launchFormulaFromJSON(F, "launch_formulas." + ID);
    if (!L)
      return bad(Source, llvm::toString(L.takeError()));
    A.LaunchFormulas[ID] = std::move(*L);
  }
  if (A.Applied && (!A.Refusals.empty() || A.Failure))
    return bad(Source, "an applied outcome has neither refusals nor a failure");
  if (!A.Applied && A.Refusals.empty() && !A.Failure)
    return bad(Source, "an outcome that is not applied needs refusals or a failure");
  return A;
}

} // namespace optimize
} // namespace kloop
