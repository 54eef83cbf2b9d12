//===- VerifyJSON.cpp - Verification results as JSON ----------------------===//
#include "kloop/Verify/VerifyJSON.h"

using nlohmann::json;

namespace kloop {
namespace verify {

json toJSON(const Finding &F) {
  return json{{"kind", findingKindName(F.Kind).str()},
              {"fatal", F.Fatal},
              {"kernel", F.Kernel},
              {"kernel_ordinal", F.KernelOrdinal},
              {"arg", F.Arg},
              {"message", F.Message}};
}

static const char *methodName(CompareMethod M) {
  switch (M) {
  case CompareMethod::Dumps:
    return "dumps";
  case CompareMethod::Hashes:
    return "hashes";
  case CompareMethod::Missing:
    return "missing";
  }
  return "missing";
}

json toJSON(const LaunchComparison &L) {
  json J{{"kernel", L.Kernel},
         {"kernel_ordinal", L.KernelOrdinal},
         {"arg", L.Arg},
         {"baseline_seq", L.BaselineSeq},
         {"candidate_seq", L.CandidateSeq},
         {"method", methodName(L.Method)},
         {"matched", L.Matched},
         {"message", L.Message}};
  if (L.Stats) {
    J["elements"] = L.Stats->Elements;
    J["mismatched"] = L.Stats->Mismatched;
    J["poison"] = L.Stats->Poison;
    J["new_nans"] = L.Stats->NewNaNs;
    J["max_abs_error"] = L.Stats->MaxAbsError;
    J["max_rel_error"] = L.Stats->MaxRelError;
    J["max_ulp_error"] = L.Stats->MaxUlpError;
  }
  return J;
}

json toJSON(const CompareReport &R) {
  json Launches = json::array(), Findings = json::array();
  for (const LaunchComparison &L : R.Launches)
    Launches.push_back(toJSON(L));
  for (const Finding &F : R.Findings)
    Findings.push_back(toJSON(F));
  return json{{"passed", R.Passed},
              {"matched", R.Matched},
              {"mismatched", R.Mismatched},
              {"explanation", R.Explanation},
              {"launches", std::move(Launches)},
              {"findings", std::move(Findings)}};
}

json toJSON(const DeterminismComparison &D) {
  return json{{"output", D.Output},
              {"baseline_deterministic", D.BaselineDeterministic},
              {"candidate_deterministic", D.CandidateDeterministic},
              {"regressed", D.Regressed},
              {"message", D.Message}};
}

json toJSON(const ProtectedChange &C) {
  return json{{"path", C.Path},
              {"before", C.Before},
              {"after", C.After},
              {"message", C.Message}};
}

} // namespace verify
} // namespace kloop
