//===- Output.cpp - Diff, clang-apply-replacements YAML, in-place writes -===//
#include "kloop/Edit/Apply.h"
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

namespace {
std::vector<StringRef> lines(StringRef S) {
  std::vector<StringRef> L;
  while (!S.empty()) {
    size_t N = S.find('\n');
    if (N == StringRef::npos) {
      L.push_back(S);
      break;
    }
    L.push_back(S.substr(0, N + 1));
    S = S.substr(N + 1);
  }
  return L;
}

/// One line of an edit script: ' ' keep, '-' delete, '+' insert.
struct Op {
  char K;
  StringRef Line;
  unsigned A, B; // line indices (0-based) in old and new before this op
};

/// Line-level edit script: common prefix/suffix, LCS (dynamic programming) in between.
std::vector<Op> script(const std::vector<StringRef> &A, const std::vector<StringRef> &B) {
  size_t Pre = 0;
  while (Pre < A.size() && Pre < B.size() && A[Pre] == B[Pre])
    ++Pre;
  size_t Suf = 0;
  while (Suf < A.size() - Pre && Suf < B.size() - Pre && A[A.size() - 1 - Suf] == B[B.size() - 1 - Suf])
    ++Suf;
  size_t N = A.size() - Pre - Suf, M = B.size() - Pre - Suf;
  std::vector<std::vector<unsigned>> L(N + 1, std::vector<unsigned>(M + 1, 0));
  for (size_t I = N; I-- > 0;)
    for (size_t J = M; J-- > 0;)
      L[I][J] = A[Pre + I] == B[Pre + J] ? L[I + 1][J + 1] + 1 : std::max(L[I + 1][J], L[I][J + 1]);
  std::vector<Op> Ops;
  unsigned IA = 0, IB = 0;
  for (size_t I = 0; I < Pre; ++I, ++IA, ++IB)
    Ops.push_back({' ', A[I], IA, IB});
  size_t I = 0, J = 0;
  while (I < N || J < M) {
    if (I < N && J < M && A[Pre + I] == B[Pre + J]) {
      Ops.push_back({' ', A[Pre + I], IA++, IB++});
      ++I, ++J;
    } else if (I < N && (J == M || L[I + 1][J] >= L[I][J + 1])) {
      Ops.push_back({'-', A[Pre + I], IA++, IB});
      ++I;
    } else {
      Ops.push_back({'+', B[Pre + J], IA, IB++});
      ++J;
    }
  }
  for (size_t K = A.size() - Suf; K < A.size(); ++K)
    Ops.push_back({' ', A[K], IA++, IB++});
  return Ops;
}

void emitLine(raw_ostream &OS, char K, StringRef L) {
  OS << K << L;
  if (!L.ends_with("\n"))
    OS << "\n\\ No newline at end of file\n";
}
} // namespace

std::string renderDiff(const std::vector<FileChange> &Changes, const Proposal &P, StringRef Name) {
  std::string S;
  raw_string_ostream OS(S);
  OS << "kloop proposal: " << Name << " (" << P.Edits.size() << " edit" << (P.Edits.size() == 1 ? "" : "s") << ")\n";
  for (StringRef L : lines(P.Rationale))
    OS << "rationale: " << L.rtrim("\n") << "\n";
  for (size_t I = 0; I < P.Edits.size(); ++I)
    OS << "edit #" << I + 1 << ": " << P.Edits[I].label() << "\n";
  OS << "\n";
  for (const FileChange &C : Changes) {
    std::vector<StringRef> A = lines(C.Before), B = lines(C.After);
    std::vector<Op> Ops = script(A, B);
    OS << "diff --git a/" << C.RelPath << " b/" << C.RelPath << "\n";
    OS << "--- a/" << C.RelPath << "\n+++ b/" << C.RelPath << "\n";
    const size_t Ctx = 3;
    size_t I = 0;
    while (I < Ops.size()) {
      while (I < Ops.size() && Ops[I].K == ' ')
        ++I;
      if (I == Ops.size())
        break;
      size_t Begin = I >= Ctx ? I - Ctx : 0, End = I;
      // Extend the hunk while changes are within 2*Ctx lines of each other.
      for (size_t Last = I; End < Ops.size(); ++End) {
        if (Ops[End].K != ' ')
          Last = End;
        else if (End - Last > 2 * Ctx)
          break;
      }
      size_t LastChange = End;
      while (LastChange > Begin && Ops[LastChange - 1].K == ' ')
        --LastChange;
      End = std::min(Ops.size(), LastChange + Ctx);
      unsigned CA = 0, CB = 0;
      for (size_t K = Begin; K < End; ++K) {
        CA += Ops[K].K != '+';
        CB += Ops[K].K != '-';
      }
      unsigned SA = Ops[Begin].A + (CA ? 1 : 0), SB = Ops[Begin].B + (CB ? 1 : 0);
      OS << "@@ -" << SA << "," << CA << " +" << SB << "," << CB << " @@\n";
      for (size_t K = Begin; K < End; ++K)
        emitLine(OS, Ops[K].K, Ops[K].Line);
      I = End;
    }
  }
  return S;
}

std::string exportFixesYaml(const std::vector<FileChange> &Changes, StringRef MainSourceFile) {
  clang::tooling::TranslationUnitReplacements TUR;
  TUR.MainSourceFile = MainSourceFile.str();
  for (const FileChange &C : Changes) {
    // One replacement per file: the smallest range that differs.
    size_t Pre = 0;
    while (Pre < C.Before.size() && Pre < C.After.size() && C.Before[Pre] == C.After[Pre])
      ++Pre;
    size_t Suf = 0;
    while (Suf < C.Before.size() - Pre && Suf < C.After.size() - Pre &&
           C.Before[C.Before.size() - 1 - Suf] == C.After[C.After.size() - 1 - Suf])
      ++Suf;
    TUR.Replacements.emplace_back(C.File, Pre, C.Before.size() - Pre - Suf,
                                  C.After.substr(Pre, C.After.size() - Pre - Suf));
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
