//===- Output.cpp - Diff, clang-apply-replacements YAML, in-place writes -===//
#include "kloop/Edit/Apply.h"
#include "kloop/Support/Diff.h"
#include "kloop/Support/FileTransaction.h"

#include "clang/Tooling/Core/Replacement.h"
#include "clang/Tooling/ReplacementsYaml.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/YAMLTraits.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace kloop {


std::string renderDiff(const std::vector<FileChange> &Changes, const Proposal &P, StringRef Name) {
  std::string S;
  raw_string_ostream OS(S);
  OS << "kloop proposal: " << Name << " (" << P.Edits.size() << " edit" << (P.Edits.size() == 1 ? "" : "s") << ")\n";
  for (StringRef R = P.Rationale; !R.empty();) {
    auto [Line, Rest] = R.split('\n');
    OS << "rationale: " << Line << "\n";
    R = Rest;
  }
  for (size_t I = 0; I < P.Edits.size(); ++I)
    OS << "edit #" << I + 1 << ": " << P.Edits[I].label() << "\n";
  OS << "\n";
  for (const FileChange &C : Changes)
    OS << unifiedDiff(C.RelPath, C.Before, C.After);
  return S;
}

ByteReplacement smallestReplacement(StringRef Before, StringRef After) {
  size_t Pre = 0;
  while (Pre < Before.size() && Pre < After.size() && Before[Pre] == After[Pre])
    ++Pre;
  size_t Suf = 0;
  while (Suf < Before.size() - Pre && Suf < After.size() - Pre &&
         Before[Before.size() - 1 - Suf] == After[After.size() - 1 - Suf])
    ++Suf;
  return {Pre, Before.size() - Pre - Suf, After.substr(Pre, After.size() - Pre - Suf).str()};
}

std::string exportFixesYaml(const std::vector<FileChange> &Changes, StringRef MainSourceFile) {
  clang::tooling::TranslationUnitReplacements TUR;
  TUR.MainSourceFile = MainSourceFile.str();
  for (const FileChange &C : Changes) {
    ByteReplacement R = smallestReplacement(C.Before, C.After); // one replacement per file
    TUR.Replacements.emplace_back(C.File, R.Offset, R.Length, R.Text);
  }
  std::string S;
  raw_string_ostream OS(S);
  yaml::Output Y(OS);
  Y << TUR;
  return S;
}

Error writeChangesInPlace(const std::vector<FileChange> &Changes) {
  std::vector<FileReplacement> Files;
  for (const FileChange &C : Changes)
    Files.push_back({C.File, C.Before, C.After});
  return replaceFilesAtomically(Files);
}

} // namespace kloop
