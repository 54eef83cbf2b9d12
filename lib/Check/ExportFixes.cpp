//===- ExportFixes.cpp - Findings as clang-tidy's --export-fixes YAML ------===//
#include "kloop/Check/Check.h"

#include "clang/Tooling/DiagnosticsYaml.h"
#include "llvm/Support/YAMLTraits.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace kloop {
namespace check {

std::string exportFixesYaml(const std::vector<Finding> &Findings, StringRef MainSourceFile,
                            function_ref<bool(const Finding &)> IsError) {
  clang::tooling::TranslationUnitDiagnostics TUD;
  TUD.MainSourceFile = MainSourceFile.str();
  for (const Finding &F : Findings) {
    clang::tooling::DiagnosticMessage M(F.Message);
    M.FilePath = F.File;
    M.FileOffset = F.Offset;
    for (const FixIt &X : F.Fixes)
      cantFail(M.Fix[X.File].add(clang::tooling::Replacement(X.File, X.Offset, X.Length, X.Text)));
    TUD.Diagnostics.emplace_back("kloop-" + F.Rule, M, SmallVector<clang::tooling::DiagnosticMessage, 1>(),
                                 IsError(F) ? clang::tooling::Diagnostic::Error : clang::tooling::Diagnostic::Warning,
                                 "");
  }
  std::string S;
  raw_string_ostream OS(S);
  yaml::Output Y(OS);
  Y << TUD;
  return S;
}

} // namespace check
} // namespace kloop
