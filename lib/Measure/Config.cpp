//===- Config.cpp - Reading and validating .kloop.yaml ---------------------===//
//
// The YAML is read into "raw" structs whose numbers and enumerations are kept
// as strings, so that validate() (which llvm::yaml calls with the mapping's
// location) can report a bad value with the field's name rather than the
// generic "invalid number".
//
//===----------------------------------------------------------------------===//
#include "kloop/Measure/Config.h"
#include "kloop/Capture/Manifest.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLParser.h"
#include "llvm/Support/YAMLTraits.h"
#include "llvm/Support/raw_ostream.h"
#include <cmath>
#include <set>

using namespace llvm;

namespace kloop {
namespace measure {


StringRef toString(L2Policy P) {
  switch (P) {
  case L2Policy::Rotate:
    return "rotate";
  case L2Policy::Flush:
    return "flush";
  case L2Policy::None:
    return "none";
  }
  return "none";
}

StringRef toString(KernelTrace T) { return T == KernelTrace::Concurrent ? "concurrent" : "serial"; }

StringRef toString(OutputAccess A) { return A == OutputAccess::ReadWrite ? "readwrite" : "write"; }

std::string warmupProblem(unsigned Warmup, const WorkloadConfig &C) {
  if (Warmup < C.Iters)
    return "";
  return "--warmup " + std::to_string(Warmup) + " discards every launch of a run (" + C.Path +
         " has iters: " + std::to_string(C.Iters) + "); use fewer warm-up launches than iters";
}

StringRef searchTimingName(SearchTiming T) {
  return T == SearchTiming::Auto ? "auto" : T == SearchTiming::Replay ? "replay" : "workload";
}

std::string replayL2Of(const WorkloadConfig &C) {
  if (!C.Search.ReplayL2.empty())
    return C.Search.ReplayL2;
  switch (C.L2) {
  case L2Policy::Rotate:
    return "rotate-sets";
  case L2Policy::Flush:
    return "flush-dirty";
  case L2Policy::None:
    break;
  }
  return "steady";
}

const ShapeSpec *WorkloadConfig::findShape(StringRef N) const {
  for (const ShapeSpec &S : Shapes)
    if (S.Name == N)
      return &S;
  return nullptr;
}

std::vector<unsigned> WorkloadConfig::seedList(bool IncludeHeldOut) const {
  std::vector<unsigned> R;
  for (unsigned I = 0; I < Seeds; ++I)
    R.push_back(I);
  if (IncludeHeldOut)
    for (unsigned I = 0; I < HeldOutSeeds; ++I)
      R.push_back(Seeds + I);
  return R;
}

bool WorkloadConfig::isTarget(StringRef DemangledName) const {
  return any_of(Targets, [&](const std::string &T) { return DemangledName.contains(T); });
}

//===----------------------------------------------------------------------===//
// Placeholders
//===----------------------------------------------------------------------===//

static bool isIdentStart(char C) { return isAlpha(C) || C == '_'; }
static bool isIdentChar(char C) { return isAlnum(C) || C == '_'; }

namespace {
/// One lexical piece of a command template.
struct Piece {
  bool IsPlaceholder;
  StringRef Text; // literal text or placeholder name
};
} // namespace

/// Splits a template into literal text and `{name}` placeholders. `{{`/`}}`
/// become literal braces; `${...}` and braces not around an identifier are
/// literal. Returns an error message for an unterminated placeholder.
static std::string lexTemplate(StringRef T, std::vector<Piece> &Out, std::string &Storage) {
  Storage.clear();
  Storage.reserve(T.size());
  // Literal pieces point into Storage, which is not reallocated after reserve.
  size_t LitStart = 0;
  auto FlushLit = [&] {
    if (Storage.size() > LitStart)
      Out.push_back({false, StringRef(Storage.data() + LitStart, Storage.size() - LitStart)});
    LitStart = Storage.size();
  };
  for (size_t I = 0; I < T.size(); ++I) {
    char C = T[I];
    if ((C == '{' || C == '}') && I + 1 < T.size() && T[I + 1] == C) {
      Storage.push_back(C);
      ++I;
      continue;
    }
    if (C == '{' && (I == 0 || T[I - 1] != '$') && I + 1 < T.size() && isIdentStart(T[I + 1])) {
      size_t J = I + 1;
      while (J < T.size() && isIdentChar(T[J]))
        ++J;
      if (J >= T.size())
        return ("unterminated placeholder '" + T.substr(I) + "'").str();
      if (T[J] == '}') {
        FlushLit();
        Out.push_back({true, T.slice(I + 1, J)});
        I = J;
        continue;
      }
    }
    Storage.push_back(C);
  }
  FlushLit();
  return "";
}

std::vector<std::string> placeholdersIn(StringRef Template) {
  std::vector<Piece> Pieces;
  std::string Storage;
  lexTemplate(Template, Pieces, Storage);
  std::vector<std::string> R;
  for (const Piece &P : Pieces)
    if (P.IsPlaceholder && !is_contained(R, P.Text.str()))
      R.push_back(P.Text.str());
  return R;
}

std::string shellQuote(StringRef S) {
  bool Safe = !S.empty() && all_of(S, [](char C) {
    return isAlnum(C) || StringRef("_./:=+,@%-").contains(C);
  });
  if (Safe)
    return S.str();
  std::string R = "'";
  for (char C : S) {
    if (C == '\'')
      R += "'\\''";
    else
      R += C;
  }
  R += "'";
  return R;
}

static Expected<std::string> expand(StringRef Template, const PlaceholderValues &V, StringRef Field, bool Quote);

Expected<std::string> expandCommand(StringRef Template, const PlaceholderValues &V, StringRef Field) {
  return expand(Template, V, Field, /*Quote=*/true);
}

Expected<std::string> expandPath(StringRef Template, const PlaceholderValues &V, StringRef Field) {
  return expand(Template, V, Field, /*Quote=*/false);
}

static Expected<std::string> expand(StringRef Template, const PlaceholderValues &V, StringRef Field, bool Quote) {
  std::vector<Piece> Pieces;
  std::string Storage;
  std::string LexErr = lexTemplate(Template, Pieces, Storage);
  if (!LexErr.empty())
    return createStringError(inconvertibleErrorCode(), "%s: %s", Field.str().c_str(), LexErr.c_str());
  std::string Out;
  for (const Piece &P : Pieces) {
    if (!P.IsPlaceholder) {
      Out += P.Text;
      continue;
    }
    std::optional<std::string> Val;
    bool Known = true;
    if (P.Text == "build_dir")
      Val = V.BuildDir;
    else if (P.Text == "source_dir")
      Val = V.SourceDir;
    else if (P.Text == "seed") {
      if (V.Seed)
        Val = std::to_string(*V.Seed);
    } else if (P.Text == "iters") {
      if (V.Iters)
        Val = std::to_string(*V.Iters);
    } else if (auto It = V.Args.find(P.Text.str()); It != V.Args.end())
      Val = It->second;
    else
      Known = false;
    if (!Known) {
      std::string Avail = "build_dir, source_dir, seed, iters";
      for (const auto &KV : V.Args)
        Avail += ", " + KV.first;
      return createStringError(inconvertibleErrorCode(),
                               "%s: unknown placeholder '{%s}' (known: %s; write '{{' for a literal brace)",
                               Field.str().c_str(), P.Text.str().c_str(), Avail.c_str());
    }
    if (!Val)
      return createStringError(inconvertibleErrorCode(), "%s: placeholder '{%s}' is not available here",
                               Field.str().c_str(), P.Text.str().c_str());
    Out += Quote ? shellQuote(*Val) : *Val;
  }
  return Out;
}

//===----------------------------------------------------------------------===//
// Raw YAML structs
//===----------------------------------------------------------------------===//

namespace {

using OptStr = std::optional<std::string>;

/// Parses a non-negative integer field; on failure returns a message naming it.
std::string parseUInt(const OptStr &S, StringRef Field, uint64_t Max, uint64_t &Out) {
  if (!S)
    return "";
  StringRef T = StringRef(*S).trim();
  uint64_t V;
  if (T.getAsInteger(10, V))
    return (Field + ": expected a non-negative integer, got '" + *S + "'").str();
  if (V > Max)
    return (Field + ": " + *S + " is out of range (at most " + Twine(Max) + ")").str();
  Out = V;
  return "";
}

std::string parseBool(const OptStr &S, StringRef Field, bool &Out) {
  if (!S)
    return "";
  std::string L = StringRef(*S).trim().lower();
  if (L == "true" || L == "yes" || L == "on")
    Out = true;
  else if (L == "false" || L == "no" || L == "off")
    Out = false;
  else
    return (Field + ": expected true or false, got '" + *S + "'").str();
  return "";
}

/// True when validate() should not run: an error was already reported, or the
/// mapping has keys outside \p Known, which llvm::yaml reports at the key's own
/// line:col when the mapping ends ("unknown key 'x'").
bool skipValidation(llvm::yaml::IO &IO, std::initializer_list<StringRef> Known) {
  if (IO.error())
    return true;
  for (StringRef K : IO.keys())
    if (!is_contained(Known, K))
      return true;
  return false;
}

struct RawTolerance {
  OptStr Kind, Value;
  Tolerance Out;
};

struct RawOutput {
  std::string Kernel;
  OptStr Arg;
  std::string DType;
  OptStr Access;
  std::optional<RawTolerance> Tol;
  OutputSpec Out;
};

struct RawShape {
  std::string Name;
  std::map<std::string, std::string> Args;
  OptStr Bytes, Flops, HeldOut;
  ShapeSpec Out;
};

struct RawCommand {
  std::string Command;
  OptStr Cwd;
  std::map<std::string, std::string> Env;
  OptStr Timeout;
  CommandSpec Out;
};
struct RawBuild : RawCommand {};
struct RawRun : RawCommand {
  OptStr DrainTimeout;
};

struct RawSearch {
  OptStr Timing, CubinCommand, ReplayL2, ReplayPlacements, ReplayTrain;
  SearchSpec Out;
};

struct RawConfig {
  OptStr Version;
  std::string Name;
  std::vector<std::string> Sources, Protected, Targets;
  std::optional<RawBuild> Build;
  std::optional<RawRun> Run;
  OptStr Iters, Seeds, HeldOutSeeds, L2, Tracing, PlacementPadMiB;
  std::optional<std::vector<RawShape>> Shapes;
  std::vector<RawOutput> Outputs;
  std::optional<RawSearch> Search;
  WorkloadConfig Out;
};

/// State shared by the validators of one document.
struct ParseContext {
  std::set<std::string> ShapeNames;
  unsigned ShapeIndex = 0;
  unsigned OutputIndex = 0;
};

std::string validateCommand(RawCommand &C, StringRef Section, unsigned DefaultTimeout) {
  if (StringRef(C.Command).trim().empty())
    return (Section + ".command: missing or empty (the shell command to " +
            (Section == "build" ? "build" : "run") + " the workload)")
        .str();
  C.Out.Command = C.Command;
  if (C.Cwd) {
    if (C.Cwd->empty())
      return (Section + ".cwd: must not be empty (use \".\")").str();
    C.Out.Cwd = *C.Cwd;
  }
  C.Out.Env = C.Env;
  for (const auto &KV : C.Env)
    if (KV.first.empty() || !isIdentStart(KV.first[0]) || !all_of(KV.first, isIdentChar))
      return (Section + ".env: '" + KV.first + "' is not a valid environment variable name").str();
  uint64_t T = DefaultTimeout;
  std::string E = parseUInt(C.Timeout, (Section + ".timeout_s").str(), 7 * 24 * 3600, T);
  if (!E.empty())
    return E;
  if (T == 0)
    return (Section + ".timeout_s: must be positive").str();
  C.Out.TimeoutS = static_cast<unsigned>(T);
  return "";
}

} // namespace
} // namespace measure
} // namespace kloop

using namespace kloop::measure;

LLVM_YAML_IS_STRING_MAP(std::string)
LLVM_YAML_IS_SEQUENCE_VECTOR(kloop::measure::RawShape)
LLVM_YAML_IS_SEQUENCE_VECTOR(kloop::measure::RawOutput)

namespace llvm {
namespace yaml {

template <> struct MappingTraits<RawTolerance> {
  static void mapping(IO &IO, RawTolerance &T) {
    IO.mapOptional("kind", T.Kind);
    IO.mapOptional("value", T.Value);
  }
  static std::string validate(IO &IO, RawTolerance &T) {
    if (skipValidation(IO, {"kind", "value"}))
      return "";
    if (!T.Kind)
      return "tolerance.kind: missing (one of abs|rel|ulp|exact)";
    StringRef K = StringRef(*T.Kind).trim();
    Expected<kloop::verify::ToleranceKind> Parsed = kloop::verify::parseToleranceKind(K);
    if (!Parsed) {
      llvm::consumeError(Parsed.takeError());
      return "tolerance.kind: '" + *T.Kind + "' is not one of abs|rel|ulp|exact";
    }
    T.Out.Kind = *Parsed;
    if (!T.Value) {
      if (T.Out.Kind != ToleranceKind::Exact)
        return ("tolerance.value: missing (required for kind " + K + ")").str();
      return "";
    }
    double V;
    if (StringRef(*T.Value).trim().getAsDouble(V) || !std::isfinite(V))
      return "tolerance.value: expected a number, got '" + *T.Value + "'";
    if (V < 0)
      return "tolerance.value: must not be negative, got '" + *T.Value + "'";
    if (T.Out.Kind == ToleranceKind::Exact && V != 0)
      return "tolerance.value: must be 0 or absent for kind exact";
    if (T.Out.Kind == ToleranceKind::Ulp && V != std::floor(V))
      return "tolerance.value: must be a whole number of ULPs for kind ulp, got '" + *T.Value + "'";
    T.Out.Value = V;
    return "";
  }
};

template <> struct MappingTraits<RawOutput> {
  static void mapping(IO &IO, RawOutput &O) {
    IO.mapOptional("kernel", O.Kernel);
    IO.mapOptional("arg", O.Arg);
    IO.mapOptional("dtype", O.DType);
    IO.mapOptional("tolerance", O.Tol);
    IO.mapOptional("access", O.Access);
  }
  static std::string validate(IO &IO, RawOutput &O) {
    if (skipValidation(IO, {"kernel", "arg", "dtype", "tolerance", "access"}))
      return "";
    auto *Ctx = static_cast<ParseContext *>(IO.getContext());
    std::string Where = "outputs[" + std::to_string(Ctx->OutputIndex++) + "]";
    if (O.Kernel.empty())
      return Where + ".kernel: missing (the target kernel whose argument is an output)";
    if (!O.Arg)
      return Where + ".arg: missing (zero-based index of the output pointer parameter)";
    uint64_t A = 0;
    std::string E = parseUInt(O.Arg, Where + ".arg", 255, A);
    if (!E.empty())
      return E;
    // The element types kloopVerify compares (verify::parseDType).
    static const char *DTypes[] = {"f16", "f32", "f64", "i32", "u8", "bytes"};
    if (O.DType.empty())
      return Where + ".dtype: missing (one of f16 f32 f64 i32 u8 bytes)";
    if (!is_contained(DTypes, StringRef(O.DType)))
      return Where + ".dtype: '" + O.DType + "' is not one of f16 f32 f64 i32 u8 bytes";
    O.Out.Kernel = O.Kernel;
    O.Out.Arg = static_cast<unsigned>(A);
    O.Out.DType = O.DType;
    if (O.Tol)
      O.Out.Tol = O.Tol->Out;
    if (O.Access) {
      StringRef A = StringRef(*O.Access).trim();
      if (A == toString(OutputAccess::Write))
        O.Out.Access = OutputAccess::Write;
      else if (A == toString(OutputAccess::ReadWrite))
        O.Out.Access = OutputAccess::ReadWrite;
      else
        return Where + ".access: '" + *O.Access +
               "' is not one of write|readwrite (readwrite: the kernel reads the buffer before writing it)";
    }
    return "";
  }
};

template <> struct MappingTraits<RawShape> {
  static void mapping(IO &IO, RawShape &S) {
    IO.mapOptional("name", S.Name);
    IO.mapOptional("args", S.Args);
    IO.mapOptional("bytes", S.Bytes);
    IO.mapOptional("flops", S.Flops);
    IO.mapOptional("held_out", S.HeldOut);
  }
  static std::string validate(IO &IO, RawShape &S) {
    if (skipValidation(IO, {"name", "args", "bytes", "flops", "held_out"}))
      return "";
    auto *Ctx = static_cast<ParseContext *>(IO.getContext());
    std::string Where = "shapes[" + std::to_string(Ctx->ShapeIndex++) + "]";
    if (StringRef(S.Name).trim().empty())
      return Where + ".name: missing (every shape needs a unique name)";
    if (!all_of(S.Name, [](char C) { return isAlnum(C) || StringRef("_.-").contains(C); }))
      return Where + ".name: '" + S.Name + "' may contain only letters, digits, '_', '.' and '-'";
    if (!Ctx->ShapeNames.insert(S.Name).second)
      return Where + ".name: duplicate shape name '" + S.Name + "'";
    Where = "shapes[" + S.Name + "]";
    for (const auto &KV : S.Args) {
      if (KV.first.empty() || !isIdentStart(KV.first[0]) || !all_of(KV.first, isIdentChar))
        return Where + ".args: '" + KV.first + "' is not a valid placeholder name";
      if (is_contained({"build_dir", "source_dir", "seed", "iters"}, KV.first))
        return Where + ".args: '" + KV.first + "' is reserved for kloop's own placeholder";
    }
    S.Out.Name = S.Name;
    S.Out.Args = S.Args;
    uint64_t V = 0;
    if (S.Bytes) {
      std::string E = parseUInt(S.Bytes, Where + ".bytes", UINT64_MAX, V);
      if (!E.empty())
        return E;
      S.Out.Bytes = V;
    }
    if (S.Flops) {
      std::string E = parseUInt(S.Flops, Where + ".flops", UINT64_MAX, V);
      if (!E.empty())
        return E;
      S.Out.Flops = V;
    }
    return kloop::measure::parseBool(S.HeldOut, Where + ".held_out", S.Out.HeldOut);
  }
};

template <> struct MappingTraits<RawBuild> {
  static void mapping(IO &IO, RawBuild &C) {
    IO.mapOptional("command", C.Command);
    IO.mapOptional("cwd", C.Cwd);
    IO.mapOptional("env", C.Env);
    IO.mapOptional("timeout_s", C.Timeout);
  }
  static std::string validate(IO &IO, RawBuild &C) {
    if (skipValidation(IO, {"command", "cwd", "env", "timeout_s"}))
      return "";
    return validateCommand(C, "build", 600);
  }
};

template <> struct MappingTraits<RawRun> {
  static void mapping(IO &IO, RawRun &C) {
    IO.mapOptional("command", C.Command);
    IO.mapOptional("cwd", C.Cwd);
    IO.mapOptional("env", C.Env);
    IO.mapOptional("timeout_s", C.Timeout);
    IO.mapOptional("drain_timeout_s", C.DrainTimeout);
  }
  static std::string validate(IO &IO, RawRun &C) {
    if (skipValidation(IO, {"command", "cwd", "env", "timeout_s", "drain_timeout_s"}))
      return "";
    if (std::string E = validateCommand(C, "run", 120); !E.empty())
      return E;
    uint64_t T = C.Out.DrainTimeoutS;
    if (std::string E = parseUInt(C.DrainTimeout, "run.drain_timeout_s", 3600, T); !E.empty())
      return E;
    if (T == 0)
      return "run.drain_timeout_s: must be positive (seconds kloop may wait for the GPU to drain after a failed run)";
    C.Out.DrainTimeoutS = static_cast<unsigned>(T);
    return "";
  }
};

template <> struct MappingTraits<RawSearch> {
  static void mapping(IO &IO, RawSearch &C) {
    IO.mapOptional("timing", C.Timing);
    IO.mapOptional("cubin_command", C.CubinCommand);
    IO.mapOptional("replay_l2", C.ReplayL2);
    IO.mapOptional("replay_placements", C.ReplayPlacements);
    IO.mapOptional("replay_train", C.ReplayTrain);
  }
  static std::string validate(IO &IO, RawSearch &C) {
    if (skipValidation(IO, {"timing", "cubin_command", "replay_l2", "replay_placements", "replay_train"}))
      return "";
    uint64_t Placements = C.Out.ReplayPlacements;
    if (std::string E = parseUInt(C.ReplayPlacements, "search.replay_placements", kloop::capture::MaxPlacements, Placements);
        !E.empty())
      return E;
    if (Placements == 0)
      return "search.replay_placements: 0 is out of range (1 to " + std::to_string(kloop::capture::MaxPlacements) +
             "; 1 times at the captured addresses only)";
    C.Out.ReplayPlacements = static_cast<unsigned>(Placements);
    uint64_t Train = C.Out.ReplayTrain;
    if (std::string E = parseUInt(C.ReplayTrain, "search.replay_train", kloop::capture::MaxTrain, Train); !E.empty())
      return E;
    C.Out.ReplayTrain = static_cast<unsigned>(Train);
    if (C.ReplayL2) {
      std::string Mode = StringRef(*C.ReplayL2).trim().str();
      if (!kloop::capture::isL2Mode(Mode))
        return "search.replay_l2: '" + *C.ReplayL2 + "' is not one of " + kloop::capture::L2Modes;
      C.Out.ReplayL2 = Mode;
    }
    if (C.Timing) {
      StringRef T = StringRef(*C.Timing).trim();
      if (T == "auto")
        C.Out.Timing = SearchTiming::Auto;
      else if (T == "replay")
        C.Out.Timing = SearchTiming::Replay;
      else if (T == "workload")
        C.Out.Timing = SearchTiming::Workload;
      else
        return "search.timing: '" + *C.Timing + "' is not one of auto|replay|workload";
    }
    if (C.CubinCommand) {
      if (StringRef(*C.CubinCommand).trim().empty())
        return "search.cubin_command: must not be empty (leave the key out for the default)";
      for (const std::string &P : placeholdersIn(*C.CubinCommand))
        if (P != "source_dir" && P != "cubin")
          return "search.cubin_command: placeholder '{" + P + "}' is not available (only {source_dir} {cubin})";
      C.Out.CubinCommand = *C.CubinCommand;
    }
    return "";
  }
};

template <> struct MappingTraits<RawConfig> {
  static void mapping(IO &IO, RawConfig &C) {
    IO.mapOptional("version", C.Version);
    IO.mapOptional("name", C.Name);
    IO.mapOptional("sources", C.Sources);
    IO.mapOptional("protected", C.Protected);
    IO.mapOptional("build", C.Build);
    IO.mapOptional("run", C.Run);
    IO.mapOptional("targets", C.Targets);
    IO.mapOptional("iters", C.Iters);
    IO.mapOptional("seeds", C.Seeds);
    IO.mapOptional("held_out_seeds", C.HeldOutSeeds);
    IO.mapOptional("l2", C.L2);
    IO.mapOptional("tracing", C.Tracing);
    IO.mapOptional("placement_pad_mib", C.PlacementPadMiB);
    IO.mapOptional("shapes", C.Shapes);
    IO.mapOptional("outputs", C.Outputs);
    IO.mapOptional("search", C.Search);
  }
  static std::string validate(IO &IO, RawConfig &C);
};

} // namespace yaml
} // namespace llvm

std::string yaml::MappingTraits<RawConfig>::validate(IO &IO, RawConfig &C) {
  if (skipValidation(IO, {"version", "name", "sources", "protected", "build", "run", "targets", "iters", "seeds",
                          "held_out_seeds", "l2", "tracing", "placement_pad_mib", "shapes", "outputs", "search"}))
    return "";
  WorkloadConfig &W = C.Out;
  if (C.Search)
    W.Search = C.Search->Out;
  uint64_t V = 1;
  std::string E = parseUInt(C.Version, "version", UINT32_MAX, V);
  if (!E.empty())
    return E;
  if (V != 1)
    return "version: " + std::to_string(V) + " is not supported (this kloop reads version 1)";
  if (StringRef(C.Name).trim().empty())
    return "name: missing (a short name for the workload)";
  W.Name = C.Name;
  if (!C.Build)
    return "build: missing (build.command is required)";
  if (!C.Run)
    return "run: missing (run.command is required)";
  W.Build = C.Build->Out;
  W.Run = C.Run->Out;
  for (const auto &[Field, List] : {std::pair<const char *, std::vector<std::string> *>{"sources", &C.Sources},
                                    {"protected", &C.Protected}})
    for (const std::string &F : *List)
      if (StringRef(F).trim().empty())
        return std::string(Field) + ": empty file name";
      else if (sys::path::is_absolute(F))
        return std::string(Field) + ": '" + F +
               "' is an absolute path; list files relative to the directory of the workload description";
  W.Sources = C.Sources;
  W.Protected = C.Protected;
  if (C.Targets.empty())
    return "targets: missing or empty (names of the kernels to measure)";
  for (const std::string &T : C.Targets)
    if (StringRef(T).trim().empty())
      return "targets: empty kernel name";
  W.Targets = C.Targets;
  V = 20;
  if (!(E = parseUInt(C.Iters, "iters", 1u << 30, V)).empty())
    return E;
  if (V == 0)
    return "iters: must be at least 1";
  W.Iters = static_cast<unsigned>(V);
  V = 1;
  if (!(E = parseUInt(C.Seeds, "seeds", 1u << 20, V)).empty())
    return E;
  if (V == 0)
    return "seeds: must be at least 1";
  W.Seeds = static_cast<unsigned>(V);
  V = 0;
  if (!(E = parseUInt(C.HeldOutSeeds, "held_out_seeds", 1u << 20, V)).empty())
    return E;
  W.HeldOutSeeds = static_cast<unsigned>(V);
  V = W.PlacementPadMiB;
  if (!(E = parseUInt(C.PlacementPadMiB, "placement_pad_mib", 4096, V)).empty())
    return E;
  W.PlacementPadMiB = static_cast<unsigned>(V);
  if (C.L2) {
    StringRef L = StringRef(*C.L2).trim();
    if (L == "rotate")
      W.L2 = L2Policy::Rotate;
    else if (L == "flush")
      W.L2 = L2Policy::Flush;
    else if (L == "none")
      W.L2 = L2Policy::None;
    else
      return "l2: '" + *C.L2 + "' is not one of rotate|flush|none";
  }
  if (C.Tracing) {
    StringRef T = StringRef(*C.Tracing).trim();
    if (T == "serial")
      W.Tracing = KernelTrace::Serial;
    else if (T == "concurrent")
      W.Tracing = KernelTrace::Concurrent;
    else
      return "tracing: '" + *C.Tracing + "' is not one of serial|concurrent";
  }
  if (!C.Shapes) {
    ShapeSpec Default;
    Default.Name = "default";
    W.Shapes.push_back(Default);
  } else {
    if (C.Shapes->empty())
      return "shapes: empty list (omit the key for a single shape without arguments)";
    for (RawShape &S : *C.Shapes)
      W.Shapes.push_back(S.Out);
  }
  for (RawOutput &O : C.Outputs) {
    if (!W.isTarget(O.Kernel))
      return "outputs: kernel '" + O.Kernel + "' contains none of the targets, so its outputs are never captured";
    W.Outputs.push_back(O.Out);
  }
  // Placeholders: build may use only the directories; run may use every
  // shape's arguments, so each shape must define all that run.command uses.
  for (const std::string &P : placeholdersIn(W.Build.Command))
    if (P != "build_dir" && P != "source_dir")
      return "build.command: placeholder '{" + P + "}' is not available when building (only {build_dir} {source_dir})";
  for (const std::string &P : placeholdersIn(W.Build.Cwd))
    if (P != "build_dir" && P != "source_dir")
      return "build.cwd: placeholder '{" + P + "}' is not available (only {build_dir} {source_dir})";
  for (const std::string &P : placeholdersIn(W.Run.Cwd))
    if (P != "build_dir" && P != "source_dir")
      return "run.cwd: placeholder '{" + P + "}' is not available (only {build_dir} {source_dir})";
  for (const std::string &P : placeholdersIn(W.Run.Command)) {
    if (is_contained({"build_dir", "source_dir", "seed", "iters"}, P))
      continue;
    for (const ShapeSpec &S : W.Shapes)
      if (!S.Args.count(P))
        return "run.command: unknown placeholder '{" + P + "}': shape '" + S.Name +
               "' has no such key in args (kloop's own: build_dir source_dir seed iters)";
  }
  if (all_of(W.Shapes, [](const ShapeSpec &S) { return S.HeldOut; }))
    return "shapes: every shape is held_out; at least one must be used for search";
  return "";
}

namespace kloop {
namespace measure {

namespace {
struct DiagCollector {
  std::string Text;
  static void handle(const SMDiagnostic &D, void *Ctx) {
    auto *Self = static_cast<DiagCollector *>(Ctx);
    raw_string_ostream OS(Self->Text);
    // llvm::yaml::Input has no node for an alias (`*name`) and says "unknown node kind" (issue 12, item 9).
    if (D.getMessage() == "unknown node kind" && D.getSourceMgr()) {
      D.getSourceMgr()
          ->GetMessage(D.getLoc(), D.getKind(),
                       "anchors and aliases are not supported (`&name` / `*name`): write the value out in full")
          .print(nullptr, OS, /*ShowColors=*/false);
      return;
    }
    // llvm::yaml says "unexpected scalar" where it expected a scalar and found a
    // sequence or mapping (`name: [1]`): say that.
    if (D.getMessage() == "unexpected scalar" && D.getSourceMgr()) {
      // `key:` with nothing after it is an empty value, which llvm::yaml reports at the next key: name the
      // key, at its own line.
      if (unsigned Id = D.getSourceMgr()->FindBufferContainingLoc(D.getLoc()); Id && D.getLoc().isValid()) {
        StringRef Text = D.getSourceMgr()->getMemoryBuffer(Id)->getBuffer();
        size_t Here = D.getLoc().getPointer() - Text.data();
        // StringRef::rfind(C, From) looks strictly before From.
        size_t LineStart = Text.rfind('\n', Here); // the newline that ends the previous line
        for (size_t End = LineStart; End != StringRef::npos && End > 0;) {
          size_t Start = Text.rfind('\n', End);
          Start = Start == StringRef::npos ? 0 : Start + 1;
          StringRef Line = Text.slice(Start, End);
          StringRef Body = Line.split('#').first.rtrim(" \t\r");
          if (Body.trim().empty()) { // blank or comment line: look further up
            End = Start ? Start - 1 : StringRef::npos;
            continue;
          }
          StringRef Key = Body.ltrim(" \t-").rtrim(':');
          // The reported node is the next key only when it is not indented deeper than this one; deeper,
          // it is this key's own value, a nested list or mapping where one value belongs.
          size_t HereCol = Here - (LineStart + 1);
          size_t KeyCol = Body.find_first_not_of(" \t-");
          if (HereCol > KeyCol)
            break;
          if (Body.ends_with(":") && !Key.empty() &&
              all_of(Key, [](char C) { return isAlnum(C) || C == '_'; })) {
            size_t Col = Body.find(Key);
            D.getSourceMgr()
                ->GetMessage(SMLoc::getFromPointer(Line.data() + Col), D.getKind(),
                             (Key + ": no value given (write a value after the colon, or leave the key out)").str())
                .print(nullptr, OS, /*ShowColors=*/false);
            return;
          }
          break;
        }
      }
      SMDiagnostic Clear(*D.getSourceMgr(), D.getLoc(), D.getFilename(), D.getLineNo(), D.getColumnNo(),
                         D.getKind(), "expected a single value here, not a list or a mapping",
                         D.getLineContents(), D.getRanges());
      Clear.print(nullptr, OS, /*ShowColors=*/false);
      return;
    }
    // A field rejected by a mapping's validator is reported where the mapping
    // starts (1:1 for a top-level field, the first key of a nested one). When
    // the message names the field ("build.timeout_s: ...", "shapes[2].bytes:
    // ..."), point at the field itself: the first "<key>:" inside the mapping,
    // i.e. from the reported line on, in lines indented at least as deep (for a
    // top-level field: lines without indentation).
    if (const SourceMgr *SM = D.getSourceMgr(); SM && D.getLoc().isValid()) {
      StringRef Msg = D.getMessage();
      StringRef Path = Msg.take_until([](char C) { return C == ':' || C == ' '; });
      StringRef Key = Path.rsplit('.').second.empty() ? Path : Path.rsplit('.').second;
      Key = Key.take_until([](char C) { return C == '['; });
      unsigned Id = SM->FindBufferContainingLoc(D.getLoc());
      if (!Key.empty() && Path.size() < Msg.size() && Msg[Path.size()] == ':' && Id) {
        StringRef Text = SM->getMemoryBuffer(Id)->getBuffer();
        size_t LineStart = StringRef(Text.data(), D.getLoc().getPointer() - Text.data()).rfind('\n');
        LineStart = LineStart == StringRef::npos ? 0 : LineStart + 1;
        size_t Col = D.getLoc().getPointer() - Text.data() - LineStart;
        bool TopLevel = !Path.contains('.') && !Path.contains('[');
        for (size_t Pos = LineStart; Pos < Text.size();) {
          StringRef Line = Text.substr(Pos).take_until([](char C) { return C == '\n'; });
          size_t Indent = Line.find_first_not_of(" \t");
          bool Content = Indent != StringRef::npos && Line[Indent] != '#';
          if (Content && Pos != LineStart && !TopLevel && Indent < Col)
            break; // past the end of the mapping
          if (Content && (!TopLevel || Indent == 0))
            for (size_t At = Line.find(Key); At != StringRef::npos; At = Line.find(Key, At + 1)) {
              bool StartOk = At == 0 || StringRef(" \t{,-").contains(Line[At - 1]);
              if (StartOk && Line.drop_front(At + Key.size()).ltrim(" \t").starts_with(":")) {
                SM->GetMessage(SMLoc::getFromPointer(Line.data() + At), D.getKind(), Msg)
                    .print(nullptr, OS, /*ShowColors=*/false);
                return;
              }
            }
          Pos += Line.size() + 1;
        }
      }
    }
    D.print(nullptr, OS, /*ShowColors=*/false);
  }
};
} // namespace

namespace {
/// Nesting of \p Line's start: `- ` indicators opening sequences, plus indentation / 8.
unsigned blockNesting(StringRef Line) {
  size_t Indent = Line.find_first_not_of(' ');
  if (Indent == StringRef::npos)
    return 0;
  unsigned Dashes = 0;
  for (StringRef R = Line.drop_front(Indent); R.starts_with("- ") || R == "-"; R = R.drop_front(2).ltrim(' '))
    ++Dashes;
  return Dashes + static_cast<unsigned>(Indent / 8);
}

/// The line where \p Text nests deeper than MaxYamlNesting, if any. Flow brackets inside
/// quoted scalars and comments do not count; unbalanced ones are left to the YAML parser.
std::optional<unsigned> tooDeepLine(StringRef Text) {
  unsigned Flow = 0, LineNo = 1;
  char Quote = 0;
  bool LineStart = true;
  for (size_t I = 0; I < Text.size(); ++I) {
    char C = Text[I];
    if (LineStart && blockNesting(Text.substr(I, Text.find('\n', I) - I)) + Flow > MaxYamlNesting)
      return LineNo;
    LineStart = C == '\n';
    if (C == '\n')
      ++LineNo;
    if (Quote) {
      if (C == '\\' && Quote == '"')
        ++I;
      else if (C == Quote)
        Quote = 0;
    } else if ((C == '"' || C == '\'') && (I == 0 || StringRef(" \t\n[{,:").contains(Text[I - 1]))) {
      Quote = C; // a quoted scalar starts only where a token can
    } else if (C == '#' && (I == 0 || isSpace(Text[I - 1]))) {
      size_t End = Text.find('\n', I);
      I = (End == StringRef::npos ? Text.size() : End) - 1;
    } else if (C == '[' || C == '{') {
      if (++Flow > MaxYamlNesting)
        return LineNo;
    } else if ((C == ']' || C == '}') && Flow) {
      --Flow;
    }
  }
  return std::nullopt;
}
} // namespace

Expected<WorkloadConfig> parseConfig(StringRef Text, StringRef Path) {
  SmallString<256> Abs(Path);
  if (Path != "<memory>")
    sys::fs::make_absolute(Abs);
  if (Text.trim().empty())
    return createStringError(inconvertibleErrorCode(), "%s: error: the workload description is empty",
                             Path.str().c_str());
  if (std::optional<unsigned> Line = tooDeepLine(Text))
    return createStringError(inconvertibleErrorCode(),
                             "%s:%u: error: the YAML nests deeper than %u levels (brackets, `- ` or indentation); "
                             "a workload description needs a few",
                             Path.str().c_str(), *Line, MaxYamlNesting);
  // What llvm::yaml::Input cannot be asked safely: a document with no content
  // (only comments, or a bare `---`), and a second document it would ignore.
  {
    SourceMgr SM;
    SM.setDiagHandler([](const SMDiagnostic &, void *) {}, nullptr); // the real parse reports syntax errors
    yaml::Stream Docs(Text, SM);
    unsigned N = 0;
    bool Empty = true;
    for (yaml::Document &D : Docs) {
      ++N;
      if (yaml::Node *Root = D.getRoot(); Root && !isa<yaml::NullNode>(Root))
        Empty = false;
      D.skip();
    }
    if (!SM.getNumBuffers() || Docs.failed()) {
      // fall through: the parse below reports the syntax error with its line and column
    } else if (N == 0 || (N == 1 && Empty)) {
      return createStringError(inconvertibleErrorCode(),
                               "%s: error: the workload description is empty (only comments or `---`)",
                               Path.str().c_str());
    } else if (N > 1) {
      return createStringError(inconvertibleErrorCode(),
                               "%s: error: holds %u YAML documents (separated by `---`); a workload description "
                               "is one document",
                               Path.str().c_str(), N);
    }
  }
  ParseContext Ctx;
  DiagCollector Diags;
  RawConfig Raw;
  MemoryBufferRef Buf(Text, Path);
  yaml::Input In(Buf, &Ctx, &DiagCollector::handle, &Diags);
  In >> Raw;
  if (In.error()) {
    std::string Msg = StringRef(Diags.Text).rtrim().str();
    if (Msg.empty())
      Msg = (Path + ": error: " + In.error().message()).str();
    return createStringError(inconvertibleErrorCode(), Msg);
  }
  WorkloadConfig W = std::move(Raw.Out);
  if (W.Name.empty())
    // The document was not a mapping llvm::yaml could read (e.g. a bare scalar).
    return createStringError(inconvertibleErrorCode(),
                             "%s: error: expected a mapping with version, name, build, run, targets...",
                             Path.str().c_str());
  W.Path = Abs.str().str();
  SmallString<256> Dir(Abs);
  sys::path::remove_filename(Dir);
  if (Dir.empty())
    sys::fs::current_path(Dir);
  W.Dir = Dir.str().str();
  return W;
}

Expected<WorkloadConfig> loadConfig(StringRef Path) {
  auto Buf = MemoryBuffer::getFile(Path, /*IsText=*/true);
  if (!Buf)
    return createStringError(Buf.getError(), "%s: error: cannot read the workload description: %s",
                             Path.str().c_str(), Buf.getError().message().c_str());
  return parseConfig((*Buf)->getBuffer(), Path);
}

} // namespace measure
} // namespace kloop
