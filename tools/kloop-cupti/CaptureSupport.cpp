//===- CaptureSupport.cpp - host-only helpers of libkloop-cupti -----------===//
#include <algorithm>
#include "CaptureSupport.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cxxabi.h>

namespace kloop {
namespace cupti {

std::string hex16(uint64_t Value) {
  char Buf[17];
  std::snprintf(Buf, sizeof(Buf), "%016llx", static_cast<unsigned long long>(Value));
  return Buf;
}

std::string hexPointer(uint64_t Value) {
  char Buf[24];
  std::snprintf(Buf, sizeof(Buf), "0x%llx", static_cast<unsigned long long>(Value));
  return Buf;
}

std::string demangle(const std::string &Mangled) {
  if (Mangled.size() < 2 || Mangled[0] != '_' || Mangled[1] != 'Z')
    return Mangled;
  int Status = 0;
  char *Out = abi::__cxa_demangle(Mangled.c_str(), nullptr, nullptr, &Status);
  if (Status != 0 || !Out) {
    std::free(Out);
    return Mangled;
  }
  std::string Result(Out);
  std::free(Out);
  return Result;
}

static std::string trim(const std::string &S) {
  size_t B = 0, E = S.size();
  while (B < E && std::isspace(static_cast<unsigned char>(S[B])))
    ++B;
  while (E > B && std::isspace(static_cast<unsigned char>(S[E - 1])))
    --E;
  return S.substr(B, E - B);
}

static bool endsWithWord(const std::string &S, const std::string &Word) {
  if (S.size() < Word.size() || S.compare(S.size() - Word.size(), Word.size(), Word) != 0)
    return false;
  if (S.size() == Word.size())
    return true;
  char Before = S[S.size() - Word.size() - 1];
  return !(std::isalnum(static_cast<unsigned char>(Before)) || Before == '_');
}

static bool isDataPointer(std::string Type) {
  // Drop trailing qualifiers that apply to the pointer itself: "float* const", "float* restrict".
  static const char *const Qualifiers[] = {"const", "volatile", "restrict", "__restrict", "__restrict__"};
  bool Changed = true;
  while (Changed) {
    Changed = false;
    for (const char *Q : Qualifiers)
      if (endsWithWord(Type, Q)) {
        Type = trim(Type.substr(0, Type.size() - std::string(Q).size()));
        Changed = true;
      }
  }
  return !Type.empty() && Type.back() == '*';
}

std::optional<std::vector<SignatureParam>> parseSignature(const std::string &Demangled) {
  std::string S = trim(Demangled);
  if (S.empty() || S.back() != ')')
    return std::nullopt;
  // Find the '(' matching the final ')'.
  int Depth = 0;
  size_t Open = std::string::npos;
  for (size_t I = S.size(); I-- > 0;) {
    if (S[I] == ')')
      ++Depth;
    else if (S[I] == '(' && --Depth == 0) {
      Open = I;
      break;
    }
  }
  if (Open == std::string::npos || Open == 0)
    return std::nullopt;
  std::string Inner = S.substr(Open + 1, S.size() - Open - 2);
  std::vector<SignatureParam> Params;
  if (trim(Inner).empty() || trim(Inner) == "void")
    return Params;
  int Paren = 0, Angle = 0, Square = 0;
  size_t Start = 0;
  for (size_t I = 0; I <= Inner.size(); ++I) {
    char C = I < Inner.size() ? Inner[I] : ',';
    switch (C) {
    case '(': ++Paren; break;
    case ')': --Paren; break;
    case '<': ++Angle; break;
    case '>': if (Angle > 0) --Angle; break;
    case '[': ++Square; break;
    case ']': --Square; break;
    default: break;
    }
    if (Paren < 0 || Square < 0)
      return std::nullopt;
    if (C == ',' && Paren == 0 && Angle == 0 && Square == 0) {
      SignatureParam P;
      P.Type = trim(Inner.substr(Start, I - Start));
      if (P.Type.empty())
        return std::nullopt;
      P.IsPointer = isDataPointer(P.Type);
      Params.push_back(std::move(P));
      Start = I + 1;
    }
  }
  if (Paren != 0 || Square != 0)
    return std::nullopt;
  return Params;
}

std::vector<std::string> splitList(const std::string &Text) {
  std::vector<std::string> Items;
  size_t Start = 0;
  for (size_t I = 0; I <= Text.size(); ++I) {
    if (I == Text.size() || Text[I] == ',') {
      std::string Item = trim(Text.substr(Start, I - Start));
      if (!Item.empty())
        Items.push_back(std::move(Item));
      Start = I + 1;
    }
  }
  return Items;
}

bool matchesTarget(const std::vector<std::string> &Targets, const std::string &DemangledName) {
  for (const std::string &T : Targets)
    if (!T.empty() && DemangledName.find(T) != std::string::npos)
      return true;
  return false;
}

ProcessCensus censusProcesses(const std::vector<unsigned> &Pids, long OwnGroup,
                              const std::function<long(unsigned)> &GroupOf) {
  ProcessCensus C;
  std::vector<unsigned> Seen;
  for (unsigned Pid : Pids) {
    if (std::find(Seen.begin(), Seen.end(), Pid) != Seen.end())
      continue;
    Seen.push_back(Pid);
    ++C.Compute;
    long Group = GroupOf(Pid);
    if (Group >= 0 && Group == OwnGroup)
      continue;
    ++C.Foreign;
    if (C.ForeignPids.size() < MaxForeignPids)
      C.ForeignPids.push_back(Pid);
  }
  return C;
}

std::optional<uint64_t> parseUnsigned(const std::string &Text) {
  std::string T = trim(Text);
  if (T.empty())
    return std::nullopt;
  uint64_t V = 0;
  for (char C : T) {
    if (C < '0' || C > '9')
      return std::nullopt;
    uint64_t D = static_cast<uint64_t>(C - '0');
    if (V > (UINT64_MAX - D) / 10)
      return std::nullopt;
    V = V * 10 + D;
  }
  return V;
}

std::optional<std::vector<PoisonArg>> parsePoisonArgs(const std::string &Text, std::string &Error, const char *Var) {
  std::vector<PoisonArg> Out;
  for (const std::string &Item : splitList(Text)) {
    PoisonArg P;
    std::string Index = Item;
    size_t Colon = Item.rfind(':');
    if (Colon != std::string::npos) {
      P.KernelSubstring = trim(Item.substr(0, Colon));
      Index = Item.substr(Colon + 1);
      if (P.KernelSubstring.empty()) {
        Error = std::string(Var) + " entry '" + Item + "': empty kernel name before ':'";
        return std::nullopt;
      }
    }
    std::optional<uint64_t> N = parseUnsigned(Index);
    if (!N || *N > 4096) {
      Error = std::string(Var) + " entry '" + Item + "': expected a parameter index (0..4096) or KERNEL:INDEX";
      return std::nullopt;
    }
    P.Arg = static_cast<unsigned>(*N);
    Out.push_back(std::move(P));
  }
  return Out;
}

bool shouldPoison(const std::vector<PoisonArg> &Spec, const std::string &DemangledName, unsigned Arg) {
  for (const PoisonArg &P : Spec)
    if (P.Arg == Arg && (P.KernelSubstring.empty() || DemangledName.find(P.KernelSubstring) != std::string::npos))
      return true;
  return false;
}

std::optional<uint8_t> parsePoisonMode(const std::string &Text, std::string &Error) {
  std::string T = trim(Text);
  if (T.empty() || T == "none" || T == "0")
    return std::nullopt;
  if (T == "nan")
    return uint8_t(0xFF);
  if (T == "sentinel")
    return uint8_t(0xA5);
  Error = "KLOOP_CUPTI_POISON='" + T + "': expected nan, sentinel or none";
  return std::nullopt;
}

std::string expandOutputPath(const std::string &Pattern, long Pid) {
  std::string Out;
  for (size_t I = 0; I < Pattern.size(); ++I) {
    if (Pattern[I] == '%' && I + 1 < Pattern.size()) {
      if (Pattern[I + 1] == 'p') {
        Out += std::to_string(Pid);
        ++I;
        continue;
      }
      if (Pattern[I + 1] == '%') {
        Out += '%';
        ++I;
        continue;
      }
    }
    Out += Pattern[I];
  }
  return Out;
}

std::string dumpFileName(const std::string &JsonPath, uint64_t Seq, unsigned Arg) {
  size_t Slash = JsonPath.rfind('/');
  std::string Base = Slash == std::string::npos ? JsonPath : JsonPath.substr(Slash + 1);
  return Base + ".k" + std::to_string(Seq) + ".a" + std::to_string(Arg) + ".bin";
}

std::string directoryOf(const std::string &Path) {
  size_t Slash = Path.rfind('/');
  if (Slash == std::string::npos)
    return ".";
  if (Slash == 0)
    return "/";
  return Path.substr(0, Slash);
}

void AllocationMap::insert(uint64_t Base, uint64_t Size) {
  if (Size == 0)
    return;
  uint64_t &Slot = Live[Base];
  LiveBytes = LiveBytes - Slot + Size;
  Slot = Size;
  PeakBytes = std::max(PeakBytes, LiveBytes);
}

bool AllocationMap::erase(uint64_t Base) {
  auto It = Live.find(Base);
  if (It == Live.end())
    return false;
  LiveBytes -= It->second;
  Live.erase(It);
  return true;
}

std::optional<AllocationMap::Range> AllocationMap::find(uint64_t Address) const {
  auto It = Live.upper_bound(Address);
  if (It == Live.begin())
    return std::nullopt;
  --It;
  if (Address - It->first >= It->second)
    return std::nullopt;
  return Range{It->first, It->second};
}

} // namespace cupti
} // namespace kloop
