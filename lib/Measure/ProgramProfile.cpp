//===- ProgramProfile.cpp - Where a program's GPU time goes ----------------===//
#include "kloop/Measure/ProgramProfile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

using namespace llvm;
using nlohmann::json;

namespace kloop {
namespace measure {

StringRef toString(KernelOrigin O) {
  switch (O) {
  case KernelOrigin::Unknown: return "unknown";
  case KernelOrigin::Inventory: return "inventory";
  case KernelOrigin::Library: return "library";
  case KernelOrigin::NotInInventory: return "not_in_inventory";
  }
  return "unknown";
}

std::vector<InventoryKernel> inventoryKernels(const inv::Inventory &Inventory) {
  std::vector<InventoryKernel> Out;
  for (const inv::Kernel &K : Inventory.Kernels) {
    for (const inv::Instantiation &I : K.Instantiations)
      Out.push_back({I.ID, K.Library, kernelSymbolOf(I.Sym)});
    for (KernelSymbol &S : inventoryKernelSymbols(K))
      Out.push_back({K.ID, K.Library, std::move(S)});
  }
  return Out;
}

std::string outermostNamespace(StringRef Mangled) {
  std::string Name = Mangled.str(); // the demangler's nodes point into it: it must outlive D's use
  ItaniumPartialDemangler D;
  if (D.partialDemangle(Name.c_str()) || !D.isFunction())
    return "";
  char *Ctx = D.getFunctionDeclContextName(nullptr, nullptr);
  if (!Ctx)
    return "";
  std::string Outer = StringRef(Ctx).split("::").first.str();
  std::free(Ctx);
  if (StringRef(Outer).starts_with("(anonymous"))
    return "";
  return Outer;
}

namespace {

using ConfigKey = std::tuple<std::array<uint64_t, 3>, std::array<uint64_t, 3>, uint64_t, uint64_t, uint64_t>;

ConfigKey configKey(const verify::LaunchRecord &L) {
  return {L.Grid, L.Block, L.StaticSmem, L.DynamicSmem, L.Registers};
}

/// Sums the launches of one kernel.
struct KernelAccumulator {
  KernelTotal Total;
  std::map<ConfigKey, LaunchConfigTotal> Configs;

  void add(const verify::LaunchRecord &L) {
    if (Total.Name.empty())
      Total.Name = L.Name;
    Total.TotalNs += L.DurationNs;
    ++Total.Launches;
    LaunchConfigTotal &C = Configs[configKey(L)];
    C.Grid = L.Grid;
    C.Block = L.Block;
    C.StaticSmem = L.StaticSmem;
    C.DynamicSmem = L.DynamicSmem;
    C.Registers = L.Registers;
    ++C.Launches;
    C.TotalNs += L.DurationNs;
  }

  KernelTotal finish() {
    if (Total.Name.empty())
      Total.Name = llvm::demangle(Total.Kernel);
    for (auto &[Key, C] : Configs)
      Total.Configs.push_back(C);
    llvm::stable_sort(Total.Configs, [](const LaunchConfigTotal &A, const LaunchConfigTotal &B) {
      return A.TotalNs > B.TotalNs;
    });
    return std::move(Total);
  }
};

void attachOrigin(KernelTotal &K, const std::optional<std::vector<InventoryKernel>> &Inventory) {
  if (!Inventory)
    return;
  auto It = llvm::find_if(*Inventory, [&](const InventoryKernel &I) { return symbolNamesKernel(I.Symbol, K.Kernel); });
  K.Library = outermostNamespace(K.Kernel);
  if (It != Inventory->end()) {
    K.Id = It->Id;
    K.Origin = It->Library ? KernelOrigin::Library : KernelOrigin::Inventory;
  } else {
    K.Origin = K.Library.empty() ? KernelOrigin::NotInInventory : KernelOrigin::Library;
  }
  if (K.Origin != KernelOrigin::Library)
    K.Library.clear();
}

bool workMatches(const KernelWork &W, const KernelTotal &K) {
  return (!K.Id.empty() && W.Match == K.Id) || StringRef(K.Name).contains(W.Match);
}

void attachWork(KernelTotal &K, const std::vector<KernelWork> &Work, std::set<size_t> &Used) {
  for (size_t I = 0; I < Work.size(); ++I) {
    if (!workMatches(Work[I], K))
      continue;
    if (!K.BytesPerLaunch && Work[I].Bytes) {
      K.BytesPerLaunch = Work[I].Bytes;
      Used.insert(I);
    }
    if (!K.FlopsPerLaunch && Work[I].Flops) {
      K.FlopsPerLaunch = Work[I].Flops;
      Used.insert(I);
    }
  }
}

void attachRoofline(KernelTotal &K, const ProgramProfileInputs &In) {
  if (K.TotalNs == 0) {
    K.RooflineNote = "no GPU time was recorded";
    return;
  }
  if (K.BytesPerLaunch)
    K.GBps = double(*K.BytesPerLaunch) * double(K.Launches) / double(K.TotalNs);
  if (K.FlopsPerLaunch)
    K.GFlops = double(*K.FlopsPerLaunch) * double(K.Launches) / double(K.TotalNs);
  if (!K.GBps && !K.GFlops) {
    K.RooflineNote = "bytes and flops per launch unknown (give them with --bytes/--flops)";
    return;
  }
  if (!In.Ceil) {
    K.RooflineNote = "no ceilings for this GPU" + (In.NoCeilingsReason.empty() ? "" : ": " + In.NoCeilingsReason);
    return;
  }
  double Pct = 0;
  if (K.GBps && In.Ceil->CopyGBps > 0)
    Pct = std::max(Pct, *K.GBps / In.Ceil->CopyGBps * 100.0);
  if (K.GFlops && In.Ceil->FmaGFlops > 0)
    Pct = std::max(Pct, *K.GFlops / In.Ceil->FmaGFlops * 100.0);
  K.RooflinePct = Pct;
}

} // namespace

ProgramProfile summarizeProgram(const verify::Profile &P, const ProgramProfileInputs &In) {
  ProgramProfile Out;
  Out.Device = P.Device.Name;
  Out.Ceil = In.Ceil;
  std::map<std::string, KernelAccumulator> ByKernel;
  for (const verify::LaunchRecord &L : P.Launches) {
    KernelAccumulator &A = ByKernel[L.Kernel];
    A.Total.Kernel = L.Kernel;
    A.add(L);
    Out.TotalNs += L.DurationNs;
    ++Out.Launches;
  }
  std::set<size_t> UsedWork;
  for (auto &[Name, A] : ByKernel) {
    KernelTotal K = A.finish();
    K.SharePct = Out.TotalNs ? 100.0 * double(K.TotalNs) / double(Out.TotalNs) : 0.0;
    attachOrigin(K, In.Inventory);
    attachWork(K, In.Work, UsedWork);
    attachRoofline(K, In);
    Out.Kernels.push_back(std::move(K));
  }
  llvm::stable_sort(Out.Kernels, [](const KernelTotal &A, const KernelTotal &B) {
    return std::tie(B.TotalNs, A.Name) < std::tie(A.TotalNs, B.Name);
  });
  for (size_t I = 0; I < In.Work.size(); ++I)
    if (!UsedWork.count(I))
      Out.Notes.push_back("--bytes/--flops '" + In.Work[I].Match + "' matched no kernel of the run");
  if (std::string Problems = verify::profileProblems(P); !Problems.empty())
    Out.Notes.push_back(Problems);
  return Out;
}

void attachKernelProfiles(ProgramProfile &P, std::vector<KernelProfile> Profiles, const CountersRun &Run) {
  P.Counters = Run;
  for (KernelProfile &KP : Profiles) {
    auto It = llvm::find_if(P.Kernels, [&](const KernelTotal &K) { return K.Kernel == KP.Kernel; });
    if (It == P.Kernels.end()) {
      P.Notes.push_back("hardware counters of " + KP.Name + ", which the timing run did not launch");
      continue;
    }
    It->Counters.push_back(std::move(KP));
  }
}

static json optJSON(const std::optional<double> &V) { return V ? json(*V) : json(nullptr); }
static json optJSON(const std::optional<uint64_t> &V) { return V ? json(*V) : json(nullptr); }
static json optJSON(const std::string &S) { return S.empty() ? json(nullptr) : json(S); }

static json toJSON(const LaunchConfigTotal &C) {
  return {{"grid", C.Grid},
          {"block", C.Block},
          {"static_smem", C.StaticSmem},
          {"dynamic_smem", C.DynamicSmem},
          {"registers", C.Registers},
          {"launches", C.Launches},
          {"total_ns", C.TotalNs}};
}

static json toJSON(const KernelTotal &K) {
  json Configs = json::array();
  for (const LaunchConfigTotal &C : K.Configs)
    Configs.push_back(toJSON(C));
  json Counters = json::array();
  for (const KernelProfile &P : K.Counters)
    Counters.push_back(toJSON(P));
  return {{"kernel", K.Kernel},
          {"name", K.Name},
          {"total_ns", K.TotalNs},
          {"share_pct", K.SharePct},
          {"launches", K.Launches},
          {"mean_ns", K.Launches ? double(K.TotalNs) / double(K.Launches) : 0.0},
          {"origin", toString(K.Origin).str()},
          {"id", optJSON(K.Id)},
          {"library", optJSON(K.Library)},
          {"configs", Configs},
          {"bytes_per_launch", optJSON(K.BytesPerLaunch)},
          {"flops_per_launch", optJSON(K.FlopsPerLaunch)},
          {"gbps", optJSON(K.GBps)},
          {"gflops", optJSON(K.GFlops)},
          {"roofline_pct", optJSON(K.RooflinePct)},
          {"roofline_note", optJSON(K.RooflineNote)},
          {"counters", Counters}};
}

json toJSON(const ProgramProfile &P) {
  json Kernels = json::array();
  for (const KernelTotal &K : P.Kernels)
    Kernels.push_back(toJSON(K));
  json Ceil = nullptr;
  if (P.Ceil)
    Ceil = {{"device", P.Ceil->Device}, {"copy_gbps", P.Ceil->CopyGBps}, {"fma_gflops", P.Ceil->FmaGFlops}};
  json Counters = nullptr;
  if (P.Counters)
    Counters = {{"timing_wall_s", P.Counters->TimingWallS}, {"metrics_wall_s", P.Counters->MetricsWallS},
                {"chip", P.Counters->Chip},                 {"passes", P.Counters->Passes},
                {"profiled", P.Counters->Profiled}};
  return {{"schema", ProgramProfileSchema}, {"device", optJSON(P.Device)}, {"total_ns", P.TotalNs},
          {"launches", P.Launches},         {"ceilings", Ceil},             {"kernels", Kernels},
          {"notes", P.Notes},               {"counters_run", Counters}};
}

// ---- The table ----------------------------------------------------------------------------------

static std::string fmtNs(uint64_t Ns) {
  std::string S;
  raw_string_ostream OS(S);
  if (Ns >= 1000000000)
    OS << format("%.3f s", double(Ns) / 1e9);
  else if (Ns >= 1000000)
    OS << format("%.3f ms", double(Ns) / 1e6);
  else if (Ns >= 1000)
    OS << format("%.3f us", double(Ns) / 1e3);
  else
    OS << Ns << " ns";
  return S;
}

static std::string fmtDim(const std::array<uint64_t, 3> &D) {
  return std::to_string(D[0]) + "x" + std::to_string(D[1]) + "x" + std::to_string(D[2]);
}

/// "-" without an inventory, the ID, "(library: cub)", "(not in the inventory)".
static std::string idColumn(const KernelTotal &K) {
  switch (K.Origin) {
  case KernelOrigin::Unknown: return "-";
  case KernelOrigin::Inventory: return K.Id;
  case KernelOrigin::Library: {
    // An inventory library kernel outside any namespace (a plain kernel in a system header) has none to name.
    std::string Lib = K.Library.empty() ? "(library)" : "(library: " + K.Library + ")";
    return K.Id.empty() ? Lib : K.Id + " " + Lib;
  }
  case KernelOrigin::NotInInventory: return "(not in the inventory)";
  }
  return "-";
}

static std::string rooflineColumn(const KernelTotal &K) {
  if (!K.RooflinePct)
    return "n/a";
  std::string S;
  raw_string_ostream(S) << format("%.1f%%", *K.RooflinePct);
  return S;
}

static std::string configLine(const LaunchConfigTotal &C) {
  std::string S;
  raw_string_ostream(S) << C.Launches << " x grid " << fmtDim(C.Grid) << " block " << fmtDim(C.Block) << ", smem "
                        << C.StaticSmem << " B static + " << C.DynamicSmem << " B dynamic, " << C.Registers
                        << " regs, " << fmtNs(C.TotalNs);
  return S;
}

std::string formatProgramTable(const ProgramProfile &P, size_t NameWidth) {
  struct Row {
    std::string Cells[5];
    std::string Name;
  };
  std::vector<Row> Rows;
  Rows.push_back({{"time", "share", "launches", "roofline", "id"}, "kernel"});
  for (const KernelTotal &K : P.Kernels) {
    std::string Share;
    raw_string_ostream(Share) << format("%.1f%%", K.SharePct);
    std::string Name = K.Name.size() > NameWidth ? K.Name.substr(0, NameWidth - 3) + "..." : K.Name;
    Rows.push_back({{fmtNs(K.TotalNs), Share, std::to_string(K.Launches), rooflineColumn(K), idColumn(K)}, Name});
  }
  size_t W[5] = {0, 0, 0, 0, 0};
  for (const Row &R : Rows)
    for (int I = 0; I < 5; ++I)
      W[I] = std::max(W[I], R.Cells[I].size());

  std::string Out;
  raw_string_ostream OS(Out);
  for (size_t RI = 0; RI < Rows.size(); ++RI) {
    const Row &R = Rows[RI];
    // Numbers right-aligned, the ID left-aligned, the name last.
    for (int I = 0; I < 4; ++I)
      OS << std::string(W[I] - R.Cells[I].size(), ' ') << R.Cells[I] << "  ";
    OS << R.Cells[4] << std::string(W[4] - R.Cells[4].size(), ' ') << "  " << R.Name << "\n";
    if (RI == 0)
      continue;
    for (const LaunchConfigTotal &C : P.Kernels[RI - 1].Configs)
      OS << "    " << configLine(C) << "\n";
    for (const KernelProfile &KP : P.Kernels[RI - 1].Counters)
      OS << "    counters, grid " << fmtDim(KP.Launch.Grid) << " block " << fmtDim(KP.Launch.Block) << ": "
         << summarizeKernelProfile(KP) << "\n";
  }
  // Each reason for an n/a once, with the kernels it applies to counted.
  std::map<std::string, unsigned> Reasons;
  for (const KernelTotal &K : P.Kernels)
    if (!K.RooflinePct)
      ++Reasons[K.RooflineNote];
  for (const auto &[Why, N] : Reasons)
    OS << "roofline n/a for " << N << " kernel(s): " << Why << "\n";
  if (P.Counters)
    OS << format("hardware counters: %llu launch(es) profiled on %s, %llu replay pass(es) each; the metrics run took "
                 "%.2f s of wall time, the timing run %.2f s",
                 (unsigned long long)P.Counters->Profiled, P.Counters->Chip.empty() ? "?" : P.Counters->Chip.c_str(),
                 (unsigned long long)P.Counters->Passes, P.Counters->MetricsWallS, P.Counters->TimingWallS)
       << "\n";
  return Out;
}

/// The records of a run that did not end Ok, when it wrote readable ones.
static std::optional<verify::Profile> leftoverProfile(const RunResult &R) {
  if (R.Prof)
    return R.Prof;
  if (R.ProfilePath.empty() || !sys::fs::exists(R.ProfilePath))
    return std::nullopt;
  Expected<verify::Profile> P = verify::readProfile(R.ProfilePath);
  if (!P) {
    consumeError(P.takeError());
    return std::nullopt;
  }
  return *P;
}

Expected<ProgramRun> runProgramUnderCupti(const ProgramRunRequest &R) {
  RunRequest Req;
  Req.Command = R.Command;
  Req.Cwd = R.Cwd;
  Req.TimeoutS = R.TimeoutS;
  Req.OutDir = R.WorkDir;
  Req.Label = R.Metrics ? "profile-metrics" : "profile";
  InjectionSettings Inject;
  Inject.LibraryPath = R.CuptiLib;
  applyKernelTrace(Inject, KernelTrace::Serial);
  if (R.Metrics)
    Inject.Extra["KLOOP_CUPTI_METRICS"] = "1";
  Req.Inject = Inject;
  Expected<RunResult> Res = runIsolated(Req);
  if (!Res)
    return Res.takeError();
  ProgramRun Out;
  Out.Profile = leftoverProfile(*Res);
  Out.Result = std::move(*Res);
  return Out;
}

} // namespace measure
} // namespace kloop
