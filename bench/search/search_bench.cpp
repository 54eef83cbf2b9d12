//===- search_bench.cpp - Builtin search against exhaustive search ---------===//
//
// kloop-search-bench: the two halves of bench/search/run.sh (bench/search/README.md).
//
//   kloop-search-bench enumerate --inventory INV.json --out DIR [--kinds K,..] [--max-points N]
//     Enumerates the builtin proposer's tunable space of the inventory (kloop::builtin::enumerateSpace,
//     the very space `kloop optimize --proposer builtin` walks), restricted to the dimension kinds
//     named, and writes every point of the full grid as a proposal: DIR/space.json (the dimensions
//     and the points with their assignments) and DIR/p<N>.json (edits from the baseline).
//     Errors: unreadable inventory, no dimension of the kinds asked, more points than --max-points.
//
//   kloop-search-bench replay --space DIR/space.json --results RESULTS.json [--min-gain G] [--seed S]
//     Replays the builtin coordinate descent (kloop::builtin::nextCandidate, unmodified) with the
//     exhaustive measurements as its oracle: a candidate "wins" when, on EVERY shape, the incumbent's
//     median over the candidate's exceeds 1 + G (kloop compare's per-shape speed rule, on point
//     estimates: a geometric mean never decides). It prints the
//     quality reached (best speed-up found / best speed-up of the exhaustive search) against the
//     evaluations spent, for both searches, and checks the targets: >= 95% of the exhaustive
//     best within <= 20% of its evaluations.
//     RESULTS.json: {"baseline": {"ok": true, "median_ns": {"<shape>": ns}},
//                    "points": [{"id": N, "ok": bool, "median_ns": {...}}]}.
//     The cost of a point is the geometric mean of its per-shape medians (ns); a point that failed
//     (apply, build, run) is never a win. Errors: unreadable files, a point without results, a
//     baseline without medians.
//
//===----------------------------------------------------------------------===//
#include "kloop/Propose/BuiltinProposer.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <set>

using namespace llvm;
using namespace kloop::builtin;
using json = nlohmann::json;

static cl::SubCommand EnumSub("enumerate", "Write every point of the tunable space as a proposal");
static cl::SubCommand ReplaySub("replay", "Replay the builtin search against exhaustive measurements");

static cl::opt<std::string> InventoryOpt("inventory", cl::desc("kloop extract output"), cl::sub(EnumSub),
                                         cl::Required);
static cl::opt<std::string> OutOpt("out", cl::desc("Output directory"), cl::sub(EnumSub), cl::Required);
static cl::opt<std::string> KindsOpt("kinds", cl::desc("Dimension kinds kept (default block_size,tile,unroll)"),
                                     cl::sub(EnumSub), cl::init("block_size,tile,unroll"));
static cl::opt<unsigned> MaxPointsOpt("max-points", cl::desc("Refuse grids larger than this (default 200)"),
                                      cl::sub(EnumSub), cl::init(200));

static cl::opt<std::string> SpaceOpt("space", cl::desc("space.json written by enumerate"), cl::sub(ReplaySub),
                                     cl::Required);
static cl::opt<std::string> ResultsOpt("results", cl::desc("Measurements of every point"), cl::sub(ReplaySub),
                                       cl::Required);
static cl::opt<double> MinGainOpt("min-gain", cl::desc("A win needs cost ratio > 1 + this (default 0.02)"),
                                  cl::sub(ReplaySub), cl::init(0.02));
static cl::opt<uint64_t> SeedOpt("seed", cl::desc("Seed of the builtin search (default 0)"), cl::sub(ReplaySub),
                                 cl::init(0));

[[noreturn]] static void fail(const Twine &Msg) {
  errs() << "kloop-search-bench: error: " << Msg << "\n";
  std::exit(1);
}

static json readJSON(StringRef Path) {
  auto Buf = MemoryBuffer::getFile(Path, /*IsText=*/true);
  if (!Buf)
    fail("cannot read " + Path + ": " + Buf.getError().message());
  json J = json::parse((*Buf)->getBuffer().begin(), (*Buf)->getBuffer().end(), nullptr, false);
  if (J.is_discarded())
    fail(Path + ": not valid JSON");
  return J;
}

static void writeFile(const std::string &Path, const std::string &Text) {
  std::ofstream F(Path, std::ios::binary | std::ios::trunc);
  F << Text;
  if (!F.good())
    fail("cannot write " + Path);
}

static json dimToJSON(const Dimension &D) {
  return {{"key", D.key()},       {"kind", dimKindName(D.Kind)}, {"target", D.Target},
          {"kernel", D.Kernel},   {"values", D.Values},          {"baseline", D.Baseline},
          {"max_threads", D.MaxThreads}, {"max_threads_from", D.MaxThreadsFrom}, {"param_edits", D.ParamEdits}};
}

static Dimension dimFromJSON(const json &J) {
  Dimension D;
  std::string Kind = J.at("kind");
  bool Found = false;
  for (DimKind K : {DimKind::BlockSize, DimKind::Tile, DimKind::Unroll, DimKind::MinBlocks, DimKind::Qualifiers})
    if (Kind == dimKindName(K)) {
      D.Kind = K;
      Found = true;
    }
  if (!Found)
    fail(SpaceOpt + ": unknown dimension kind '" + Kind + "'");
  D.Target = J.at("target");
  D.Kernel = J.at("kernel");
  D.Values = J.at("values").get<std::vector<int64_t>>();
  D.Baseline = J.at("baseline");
  D.MaxThreads = J.at("max_threads");
  D.MaxThreadsFrom = J.at("max_threads_from");
  D.ParamEdits = J.at("param_edits").get<std::vector<std::pair<std::string, std::string>>>();
  return D;
}

/// Runs \p Body, turning a JSON type or key error (nlohmann::json::exception) into a clean error that
/// names \p File.
template <typename Fn> static void guarded(const std::string &File, Fn Body) {
  try {
    Body();
  } catch (const json::exception &E) {
    fail(File + ": malformed: " + E.what());
  }
}

static int enumerate() {
  Expected<kloop::inv::Inventory> Inv = kloop::inv::inventoryFromJSON(readJSON(InventoryOpt), InventoryOpt);
  if (!Inv)
    fail(toString(Inv.takeError()));
  std::optional<TunableSpace> S = enumerateSpace(*Inv);
  std::set<std::string> Kinds;
  for (StringRef K : split(StringRef(KindsOpt), ','))
    Kinds.insert(K.trim().str());
  TunableSpace Kept = *S;
  Kept.Dims.clear();
  for (const Dimension &D : S->Dims)
    if (Kinds.count(dimKindName(D.Kind)))
      Kept.Dims.push_back(D);
  if (Kept.Dims.empty())
    fail(InventoryOpt + ": no tunable dimension of kinds " + KindsOpt);
  uint64_t Points = 1;
  for (const Dimension &D : Kept.Dims) {
    Points *= D.Values.size();
    if (Points > MaxPointsOpt)
      fail(formatv("the grid of {0} dimension(s) has more than {1} points (--max-points)", Kept.Dims.size(),
                   unsigned(MaxPointsOpt)));
  }
  if (std::error_code EC = sys::fs::create_directories(OutOpt))
    fail("--out " + OutOpt + ": " + EC.message());
  // Proposals of an earlier, larger space must not survive next to this one.
  std::error_code EC;
  for (sys::fs::directory_iterator It(OutOpt, EC), End; It != End && !EC; It.increment(EC)) {
    StringRef Name = sys::path::filename(It->path());
    if (Name.starts_with("p") && Name.ends_with(".json") &&
        all_of(Name.drop_front().drop_back(5), [](char C) { return C >= '0' && C <= '9'; }))
      sys::fs::remove(It->path());
  }
  json Space = {{"schema", "kloop-search-space/1"}, {"inventory", InventoryOpt}, {"dims", json::array()},
                {"points", json::array()}};
  for (const Dimension &D : Kept.Dims)
    Space["dims"].push_back(dimToJSON(D));
  // Mixed-radix counter over the value lists; point 0 is the baseline itself.
  std::vector<size_t> Idx(Kept.Dims.size(), 0);
  std::vector<Assignment> All;
  for (uint64_t P = 0; P < Points; ++P) {
    Assignment A;
    uint64_t Rest = P;
    for (size_t I = 0; I < Kept.Dims.size(); ++I) {
      const Dimension &D = Kept.Dims[I];
      A[D.key()] = D.Values[Rest % D.Values.size()];
      Rest /= D.Values.size();
    }
    All.push_back(normalAssignment(Kept, A));
  }
  // Grid order, baseline first (the exhaustive search needs it for its ratios anyway).
  std::stable_partition(All.begin(), All.end(), [](const Assignment &A) { return A.empty(); });
  for (size_t I = 0; I < All.size(); ++I) {
    json Edits = editsFor(Kept, All[I]);
    json Proposal = {{"version", 1},
                     {"edits", Edits},
                     {"rationale", "exhaustive search point " + std::to_string(I)},
                     {"provenance", {{"proposer", "exhaustive"}, {"assignment", All[I]}}}};
    writeFile(OutOpt + "/p" + std::to_string(I) + ".json", Proposal.dump(1) + "\n");
    Space["points"].push_back({{"id", I}, {"assignment", All[I]}, {"edits", Edits.size()}});
  }
  writeFile(OutOpt + "/space.json", Space.dump(1) + "\n");
  outs() << formatv("{0} dimension(s), {1} points written to {2}\n", Kept.Dims.size(), All.size(), OutOpt);
  for (const Dimension &D : Kept.Dims) {
    outs() << "  " << D.key() << ": ";
    ListSeparator LS(" ");
    for (int64_t V : D.Values)
      outs() << LS << V << (V == D.Baseline ? "*" : "");
    outs() << "\n";
  }
  return 0;
}

struct PointResult {
  bool Ok = false;
  double Cost = 0;                       // geometric mean of the per-shape medians, ns (quality only)
  std::map<std::string, double> Medians; // per shape, ns (the win rule)
};

static std::optional<double> costOf(const json &Medians, const std::set<std::string> &Shapes) {
  if (!Medians.is_object() || Medians.empty())
    return std::nullopt;
  double LogSum = 0;
  for (const std::string &Sh : Shapes) {
    if (!Medians.contains(Sh) || !Medians[Sh].is_number() || Medians[Sh].get<double>() <= 0)
      return std::nullopt;
    LogSum += std::log(Medians[Sh].get<double>());
  }
  return std::exp(LogSum / Shapes.size());
}

static int replay() {
  if (!(MinGainOpt >= 0) || std::isinf(MinGainOpt))
    fail(formatv("--min-gain must be a fraction >= 0 (0.02: 2%), not {0}", MinGainOpt.getValue()));
  json SpaceJ = readJSON(SpaceOpt);
  json Res = readJSON(ResultsOpt);
  TunableSpace S;
  std::map<Assignment, size_t> IdOf;
  std::vector<Assignment> Points;
  guarded(SpaceOpt, [&] {
    for (const json &D : SpaceJ.at("dims"))
      S.Dims.push_back(dimFromJSON(D));
    for (const json &P : SpaceJ.at("points")) {
      Assignment A = P.at("assignment").get<Assignment>();
      if (normalAssignment(S, A) != A)
        fail(formatv("{0}: point {1}: assignment names a dimension the space does not have, or a baseline value",
                     SpaceOpt, Points.size()));
      if (!IdOf.emplace(A, Points.size()).second)
        fail(formatv("{0}: point {1} repeats point {2}", SpaceOpt, Points.size(), IdOf[A]));
      Points.push_back(A);
    }
  });
  if (S.Dims.empty())
    fail(SpaceOpt + ": no dimensions");
  std::set<std::string> Keys;
  for (const Dimension &D : S.Dims)
    if (!Keys.insert(D.key()).second)
      fail(SpaceOpt + ": dimension " + D.key() + " appears twice");
  for (const Dimension &D : S.Dims)
    if (D.Values.empty() || !llvm::is_contained(D.Values, D.Baseline))
      fail(SpaceOpt + ": dimension " + D.key() + ": its values must include its baseline value");
  std::set<std::string> Shapes;
  std::optional<double> BaseCost;
  std::vector<PointResult> R(Points.size());
  guarded(ResultsOpt, [&] {
    if (!Res.is_object() || !Res.contains("baseline") || !Res["baseline"].is_object() ||
        !Res["baseline"].contains("median_ns") || !Res["baseline"]["median_ns"].is_object())
      fail(ResultsOpt + ": no baseline.median_ns");
    if (!Res["baseline"].value("ok", true))
      fail(ResultsOpt + ": the baseline failed (baseline.ok is false): there is nothing to compare against");
    for (auto &[K, V] : Res["baseline"]["median_ns"].items())
      Shapes.insert(K);
    BaseCost = costOf(Res["baseline"]["median_ns"], Shapes);
    if (!BaseCost)
      fail(ResultsOpt + ": baseline.median_ns has no positive medians");
    std::vector<bool> Seen(Points.size(), false);
    for (const json &P : Res.at("points")) {
      if (!P.is_object() || !P.contains("id") || !P["id"].is_number_unsigned())
        fail(ResultsOpt + ": every point needs a non-negative integer \"id\"");
      size_t Id = P["id"].get<size_t>();
      if (Id >= Points.size())
        fail(formatv("{0}: point {1} is not in the space ({2} points)", ResultsOpt, Id, Points.size()));
      if (Seen[Id])
        fail(formatv("{0}: point {1} has two results", ResultsOpt, Id));
      Seen[Id] = true;
      if (!P.value("ok", false))
        continue; // failed to apply, build or run: never a win
      std::optional<double> C = costOf(P.value("median_ns", json()), Shapes);
      if (!C)
        fail(formatv("{0}: point {1} is ok but lacks a positive median for every shape ({2})", ResultsOpt, Id,
                     join(Shapes, ", ")));
      R[Id].Ok = true;
      R[Id].Cost = *C;
      for (const std::string &Sh : Shapes)
        R[Id].Medians[Sh] = P["median_ns"][Sh].get<double>();
    }
    for (size_t I = 0; I < Points.size(); ++I)
      if (!Seen[I])
        fail(formatv("{0}: no result for point {1}", ResultsOpt, I));
  });
  // The baseline's own point (if measured as point 0) is not used: the baseline entry is the reference.
  auto Speedup = [&](size_t Id) { return R[Id].Ok ? *BaseCost / R[Id].Cost : 0.0; };

  // A point kloop would accept over the baseline: > 1 + G on every shape.
  auto Acceptable = [&](size_t Id) {
    if (!R[Id].Ok)
      return false;
    for (const std::string &Sh : Shapes)
      if (Res["baseline"]["median_ns"][Sh].get<double>() / R[Id].Medians[Sh] <= 1.0 + MinGainOpt)
        return false;
    return true;
  };
  // Exhaustive search: every point, in grid order, keeping the best acceptable one; quality curve
  // after each evaluation.
  size_t Evaluated = 0, BestId = 0;
  double Best = 1.0; // the baseline is always available
  std::vector<double> ExCurve;
  for (size_t I = 0; I < Points.size(); ++I) {
    if (Points[I].empty())
      continue; // the baseline is not a candidate
    ++Evaluated;
    if (Acceptable(I) && Speedup(I) > Best) {
      Best = Speedup(I);
      BestId = I;
    }
    ExCurve.push_back(Best);
  }
  size_t Failed = 0;
  for (size_t I = 0; I < Points.size(); ++I)
    Failed += !Points[I].empty() && !R[I].Ok;

  // Builtin search, replayed with the measurements as oracle.
  std::vector<Attempt> History;
  SearchOptions O;
  O.Seed = SeedOpt;
  std::map<std::string, double> Incumbent;
  for (const std::string &Sh : Shapes)
    Incumbent[Sh] = Res["baseline"]["median_ns"][Sh].get<double>();
  double BuiltinBest = 1.0;
  std::vector<double> BiCurve;
  std::vector<std::string> Steps;
  while (true) {
    std::optional<Candidate> C = nextCandidate(S, History, {}, O);
    if (!C)
      break;
    auto It = IdOf.find(C->A);
    if (It == IdOf.end())
      fail("the builtin search proposed an assignment outside the enumerated grid (" + C->Why + ")");
    size_t Id = It->second;
    Attempt A;
    A.A = C->A;
    A.Won = R[Id].Ok;
    for (const std::string &Sh : Shapes)
      A.Won = A.Won && Incumbent[Sh] / R[Id].Medians[Sh] > 1.0 + MinGainOpt;
    if (A.Won) {
      Incumbent = R[Id].Medians;
      BuiltinBest = std::max(BuiltinBest, Speedup(Id));
    }
    History.push_back(A);
    BiCurve.push_back(BuiltinBest);
    Steps.push_back(formatv("  {0,2}. p{1,-4} {2,-60} {3}", History.size(), Id, C->Why,
                            !R[Id].Ok ? std::string("failed")
                                      : formatv("{0:f3}x{1}", Speedup(Id), A.Won ? " win" : "").str())
                        .str());
  }

  size_t N = Evaluated, B = History.size();
  double Quality = Best > 0 ? BuiltinBest / Best : 0;
  double Fraction = N ? double(B) / N : 0;
  outs() << "# builtin search vs exhaustive search (kloop-search-bench replay)\n\n";
  outs() << formatv("space: {0} dimension(s), {1} candidate points besides the baseline ({2} failed to apply, "
                    "build or run)\n",
                    S.Dims.size(), N, Failed);
  outs() << formatv("speed-up of a point: baseline/point of the geometric mean over shapes ({0}) of the median "
                    "kernel time; win (both searches): incumbent/candidate > {1:f3} on every shape\n\n",
                    join(Shapes, ", "), 1.0 + MinGainOpt);
  outs() << "builtin walk (seed " << SeedOpt << "):\n";
  for (const std::string &L : Steps)
    outs() << L << "\n";
  outs() << "\n| search | evaluations | best speed-up vs baseline | quality (of exhaustive best) |\n";
  outs() << "| --- | --- | --- | --- |\n";
  outs() << formatv("| exhaustive | {0} | {1:f3}x (p{2}) | 100% |\n", N, Best, BestId);
  outs() << formatv("| builtin | {0} ({1:f1}% of exhaustive) | {2:f3}x | {3:f1}% |\n", B, 100 * Fraction,
                    BuiltinBest, 100 * Quality);
  // Quality of each search after k evaluations, at a few budgets.
  outs() << "\nquality after k evaluations (best speed-up so far / exhaustive best):\n";
  outs() << "| k | exhaustive (grid order) | builtin |\n| --- | --- | --- |\n";
  std::set<size_t> Ks = {1, 2, 4, 8, 16, 32, 64, 128, B, N};
  for (size_t K : Ks) {
    if (K == 0 || K > N)
      continue;
    auto At = [&](const std::vector<double> &Curve) -> std::string {
      if (Curve.empty())
        return "-";
      double V = Curve[std::min(K, Curve.size()) - 1];
      return formatv("{0:f1}%{1}", 100 * V / Best, K > Curve.size() ? " (stopped)" : "").str();
    };
    outs() << formatv("| {0} | {1} | {2} |\n", K, At(ExCurve), At(BiCurve));
  }
  bool QualityOk = Quality >= 0.95, BudgetOk = Fraction <= 0.20;
  outs() << formatv("\ntarget quality >= 95% of the exhaustive best: {0} ({1:f1}%)\n", QualityOk ? "met" : "MISSED",
                    100 * Quality);
  outs() << formatv("target evaluations <= 20% of the exhaustive search's: {0} ({1} of {2}, {3:f1}%)\n",
                    BudgetOk ? "met" : "MISSED", B, N, 100 * Fraction);
  return 0;
}

int main(int argc, char **argv) {
  // libLLVM's own options are registered at top level: keep them out of --help.
  for (auto &KV : cl::getRegisteredOptions(cl::SubCommand::getTopLevel()))
    if (KV.first != "help" && KV.first != "version")
      KV.second->setHiddenFlag(cl::Hidden);
  cl::ParseCommandLineOptions(argc, argv, "kloop-search-bench: builtin search vs exhaustive search\n");
  if (EnumSub)
    return enumerate();
  if (ReplaySub)
    return replay();
  errs() << "kloop-search-bench: error: expected a subcommand: enumerate or replay (see --help)\n";
  return 1;
}
