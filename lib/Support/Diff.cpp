//===- Diff.cpp - Unified diffs of two texts -------------------------------===//
#include "kloop/Support/Diff.h"

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

std::string unifiedDiff(StringRef RelPath, StringRef Before, StringRef After) {
  if (Before == After)
    return "";
  std::string S;
  raw_string_ostream OS(S);
  std::vector<StringRef> A = lines(Before), B = lines(After);
  std::vector<Op> Ops = script(A, B);
  OS << "diff --git a/" << RelPath << " b/" << RelPath << "\n";
  OS << "--- a/" << RelPath << "\n+++ b/" << RelPath << "\n";
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
  return S;
}

} // namespace kloop
