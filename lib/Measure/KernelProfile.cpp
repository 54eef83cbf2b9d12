//===- KernelProfile.cpp - Hardware counters of one kernel ----------------===//
#include "kloop/Measure/KernelProfile.h"
#include "kloop/Support/Error.h"
#include "kloop/Support/JSONReader.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <limits>

using namespace llvm;
using nlohmann::json;

namespace kloop {
namespace measure {

StringRef toString(OccupancyLimiter L) {
  switch (L) {
  case OccupancyLimiter::Registers: return "registers";
  case OccupancyLimiter::SharedMemory: return "shared_memory";
  case OccupancyLimiter::Warps: return "warps";
  case OccupancyLimiter::Blocks: return "blocks";
  }
  return "warps";
}

std::optional<OccupancyLimiter> occupancyLimiterFromString(StringRef S) {
  for (OccupancyLimiter L : {OccupancyLimiter::Registers, OccupancyLimiter::SharedMemory, OccupancyLimiter::Warps,
                             OccupancyLimiter::Blocks})
    if (toString(L) == S)
      return L;
  return std::nullopt;
}

// ---- Theoretical occupancy (cuda_occupancy.h's rules, see the header) --------------------------

namespace {
/// Register allocation unit per warp and shared-memory allocation unit per block, bytes, for compute
/// capability 7.0 and newer (cuda_occupancy.h: cudaOccRegAllocationGranularity,
/// cudaOccSMemAllocationGranularity, which is 128 from 8.0 on and 256 for 7.x); sub-partitions per SM
/// (cudaOccSubPartitionsPerMultiprocessor) and the per-thread register limit
/// (cudaOccRegAllocationMaxPerThread).
constexpr uint64_t RegUnit = 256, SubPartitions = 4, MaxRegsPerThread = 256;
uint64_t smemUnit(const DeviceLimits &D) { return D.CcMajor >= 8 ? 128 : 256; }

uint64_t roundUp(uint64_t V, uint64_t Unit) { return (V + Unit - 1) / Unit * Unit; }

std::optional<uint64_t> blocksByRegisters(const LaunchResources &L, const DeviceLimits &D, uint64_t WarpsPerBlock) {
  if (L.Registers == 0)
    return std::nullopt;
  uint64_t RegsPerWarp = roundUp(L.Registers * uint64_t(D.WarpSize), RegUnit);
  uint64_t AssumedPerBlock = RegsPerWarp * roundUp(WarpsPerBlock, SubPartitions); // the hardware's check
  if (L.Registers > MaxRegsPerThread || AssumedPerBlock > uint64_t(D.RegsPerBlock) ||
      RegsPerWarp * WarpsPerBlock > uint64_t(D.RegsPerBlock))
    return 0;
  uint64_t WarpsPerSm = (uint64_t(D.RegsPerSm) / SubPartitions / RegsPerWarp) * SubPartitions;
  return WarpsPerSm / WarpsPerBlock;
}

uint64_t blocksBySharedMemory(const LaunchResources &L, const DeviceLimits &D) {
  uint64_t PerBlock = roundUp(L.StaticSmem + L.DynamicSmem + uint64_t(std::max<int64_t>(D.ReservedSmemPerBlock, 0)),
                              smemUnit(D));
  return uint64_t(D.SmemPerSm) / PerBlock;
}
} // namespace

Expected<Occupancy> theoreticalOccupancy(const LaunchResources &L, const DeviceLimits &D) {
  uint64_t Threads = L.Block[0] * L.Block[1] * L.Block[2];
  if (Threads == 0)
    return makeError("theoretical occupancy: the block has 0 threads");
  for (auto [Name, V] : {std::pair<const char *, int64_t>{"sm_count", D.SmCount},
                         {"warp_size", D.WarpSize},
                         {"max_threads_per_sm", D.MaxThreadsPerSm},
                         {"max_blocks_per_sm", D.MaxBlocksPerSm},
                         {"regs_per_sm", D.RegsPerSm},
                         {"regs_per_block", D.RegsPerBlock},
                         {"smem_per_sm", D.SmemPerSm}})
    if (V <= 0)
      return makeError(Twine("theoretical occupancy: the device limit ") + Name + " is unknown (" + Twine(V) + ")");
  Occupancy O;
  uint64_t WarpsPerBlock = (Threads + uint64_t(D.WarpSize) - 1) / uint64_t(D.WarpSize);
  uint64_t WarpsPerSm = uint64_t(D.MaxThreadsPerSm) / uint64_t(D.WarpSize);
  O.BlocksByRegisters = blocksByRegisters(L, D, WarpsPerBlock);
  uint64_t Smem = blocksBySharedMemory(L, D);
  if (L.StaticSmem + L.DynamicSmem + uint64_t(std::max<int64_t>(D.ReservedSmemPerBlock, 0)) > 0)
    O.BlocksBySharedMemory = Smem;
  O.BlocksByWarps = WarpsPerSm / WarpsPerBlock;
  O.BlocksByBlockLimit = uint64_t(D.MaxBlocksPerSm);
  const uint64_t Unbounded = std::numeric_limits<uint64_t>::max();
  std::pair<OccupancyLimiter, uint64_t> Candidates[] = {
      {OccupancyLimiter::Registers, O.BlocksByRegisters.value_or(Unbounded)},
      {OccupancyLimiter::SharedMemory, O.BlocksBySharedMemory.value_or(Unbounded)},
      {OccupancyLimiter::Warps, O.BlocksByWarps},
      {OccupancyLimiter::Blocks, O.BlocksByBlockLimit}};
  auto Min = std::min_element(std::begin(Candidates), std::end(Candidates),
                              [](const auto &A, const auto &B) { return A.second < B.second; });
  O.Limiter = Min->first;
  O.ActiveBlocks = Min->second;
  O.ActiveWarps = O.ActiveBlocks * WarpsPerBlock;
  O.TheoreticalPct = 100.0 * double(O.ActiveWarps) / double(WarpsPerSm);
  uint64_t GridBlocks = L.Grid[0] * L.Grid[1] * L.Grid[2];
  O.GridSmallerThanGpu = GridBlocks < uint64_t(D.SmCount) * O.ActiveBlocks;
  return O;
}

// ---- Reading a metrics run ---------------------------------------------------------------------

namespace {
/// An integer that the library writes as -1 when unknown.
void readKnown(JSONObject &O, StringRef Key, std::optional<uint64_t> &Out) {
  std::optional<int64_t> V;
  O.read(Key, V);
  Out.reset();
  if (V && *V >= 0)
    Out = uint64_t(*V);
}

void readDims(JSONObject &O, StringRef Key, std::array<uint64_t, 3> &Out) {
  const json *M = O.member(Key, /*Required=*/true);
  if (!M)
    return;
  if (!M->is_array() || M->size() != 3)
    return O.fail(Key, "expected an array of three non-negative integers");
  for (size_t I = 0; I < 3; ++I) {
    if (!(*M)[I].is_number_unsigned())
      return O.fail(Key, "expected an array of three non-negative integers");
    Out[I] = (*M)[I].get<uint64_t>();
  }
}

void readUnsigned(JSONObject &O, StringRef Key, uint64_t &Out) {
  int64_t V = 0;
  O.read(Key, V);
  Out = uint64_t(std::max<int64_t>(V, 0));
}
} // namespace

void readFields(JSONObject &O, DeviceLimits &D) {
  O.read("sm_count", D.SmCount);
  O.read("warp_size", D.WarpSize);
  O.read("max_threads_per_sm", D.MaxThreadsPerSm);
  O.read("max_blocks_per_sm", D.MaxBlocksPerSm);
  O.read("regs_per_sm", D.RegsPerSm);
  O.read("regs_per_block", D.RegsPerBlock);
  O.read("smem_per_sm", D.SmemPerSm);
  O.read("smem_per_block_optin", D.SmemPerBlockOptin);
  O.read("reserved_smem_per_block", D.ReservedSmemPerBlock);
  O.read("cc_major", D.CcMajor);
  O.read("cc_minor", D.CcMinor);
}

void readFields(JSONObject &O, MetricRange &R) {
  readUnsigned(O, "seq", R.Seq);
  O.read("kernel", R.Kernel);
  O.read("name", R.Name);
  readDims(O, "grid", R.Grid);
  readDims(O, "block", R.Block);
  readUnsigned(O, "dynamic_smem", R.DynamicSmem);
  readKnown(O, "registers", R.Registers);
  readKnown(O, "static_smem", R.StaticSmem);
  readKnown(O, "driver_blocks_per_sm", R.DriverBlocksPerSm);
  readUnsigned(O, "wall_ns", R.WallNs);
  std::optional<std::string> Err;
  O.read("error", Err);
  R.Error = Err.value_or("");
  const json *V = O.member("values", /*Required=*/true);
  if (!V)
    return;
  if (!V->is_object())
    return O.fail("values", "expected an object of numbers or nulls");
  for (const auto &[Name, Value] : V->items()) {
    if (!Value.is_null() && !Value.is_number())
      return O.fail("values", "member '" + Name + "': expected a number or null");
    R.Values[Name] = Value.is_null() ? std::nullopt : std::optional<double>(Value.get<double>());
  }
}

Expected<MetricsRun> parseMetricsRun(const json &Cupti, StringRef Source) {
  if (!Cupti.is_object() || !Cupti.contains("metrics"))
    return makeError(Source + ": no \"metrics\" member: the run was not a metrics run (KLOOP_CUPTI_METRICS=1), "
                              "or libkloop-cupti.so is older than the range profiler");
  JSONReadErrors E(Source.str());
  JSONObject O(Cupti["metrics"], "metrics", E);
  MetricsRun Run;
  O.read("mode", Run.Mode);
  std::optional<std::string> Chip, Err;
  O.read("chip", Chip);
  O.read("error", Err);
  Run.Chip = Chip.value_or("");
  Run.Error = Err.value_or("");
  readUnsigned(O, "passes", Run.Passes);
  O.read("metric_names", Run.MetricNames);
  O.read("unsupported", Run.Unsupported);
  readUnsigned(O, "dropped_ranges", Run.DroppedRanges);
  readUnsigned(O, "skipped_busy", Run.SkippedBusy);
  readUnsigned(O, "launches_per_config", Run.LaunchesPerConfig);
  O.object("device_limits", Run.Limits);
  O.objects("ranges", Run.Ranges);
  if (Error X = E.take())
    return X;
  return Run;
}

Expected<MetricsRun> readMetricsRun(StringRef Path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> B = MemoryBuffer::getFile(Path);
  if (!B)
    return makeError("cannot read " + Path + ": " + B.getError().message());
  json J = json::parse((*B)->getBuffer().begin(), (*B)->getBuffer().end(), nullptr, /*allow_exceptions=*/false);
  if (J.is_discarded())
    return makeError(Path + ": not valid JSON");
  return parseMetricsRun(J, Path);
}

// ---- Deriving a profile ------------------------------------------------------------------------

namespace {
constexpr StringRef StallPrefix = "smsp__warp_issue_stalled_", StallSuffix = "_per_warp_active.pct";

std::optional<double> value(const MetricRange &R, StringRef Name) {
  auto It = R.Values.find(Name.str());
  return It == R.Values.end() ? std::nullopt : It->second;
}

/// Sectors per request, when the kernel made requests of that kind.
std::optional<double> perRequest(const MetricRange &R, StringRef Sectors, StringRef Requests) {
  std::optional<double> S = value(R, Sectors), Q = value(R, Requests);
  if (!S || !Q || *Q <= 0)
    return std::nullopt;
  return *S / *Q;
}

std::vector<StallReason> topStalls(const MetricRange &R) {
  std::vector<StallReason> All;
  for (const auto &[Name, V] : R.Values) {
    StringRef N(Name);
    if (!V || *V <= 0 || !N.consume_front(StallPrefix) || !N.consume_back(StallSuffix) || N == "selected")
      continue;
    All.push_back({N.str(), *V});
  }
  llvm::stable_sort(All, [](const StallReason &A, const StallReason &B) {
    return A.Pct != B.Pct ? A.Pct > B.Pct : A.Reason < B.Reason;
  });
  if (All.size() > 3)
    All.resize(3);
  return All;
}
} // namespace

KernelProfile deriveKernelProfile(const MetricRange &R, const std::optional<DeviceLimits> &Limits) {
  KernelProfile P;
  P.Kernel = R.Kernel;
  P.Name = R.Name;
  P.Launch.Grid = R.Grid;
  P.Launch.Block = R.Block;
  P.Launch.DynamicSmem = R.DynamicSmem;
  P.Launch.Registers = R.Registers.value_or(0);
  P.Launch.StaticSmem = R.StaticSmem.value_or(0);
  P.ProfiledDurationNs = value(R, "gpu__time_duration.sum");
  P.DramReadBytes = value(R, "dram__bytes_read.sum");
  P.DramWriteBytes = value(R, "dram__bytes_write.sum");
  P.L2HitPct = value(R, "lts__t_sector_hit_rate.pct");
  P.AchievedOccupancyPct = value(R, "sm__warps_active.avg.pct_of_peak_sustained_active");
  P.SmemBankConflictsLoad = value(R, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum");
  P.SmemBankConflictsStore = value(R, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum");
  P.GlobalLoadSectorsPerRequest = perRequest(R, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                                             "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum");
  P.GlobalStoreSectorsPerRequest = perRequest(R, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
                                              "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum");
  P.TopStalls = topStalls(R);
  P.DriverBlocksPerSm = R.DriverBlocksPerSm;
  if (!R.Registers || !R.StaticSmem)
    P.Notes.push_back("theoretical occupancy unknown: the driver did not give the kernel's registers or static "
                      "shared memory");
  else if (!Limits)
    P.Notes.push_back("theoretical occupancy unknown: the run recorded no device limits");
  else if (Expected<Occupancy> O = theoreticalOccupancy(P.Launch, *Limits))
    P.Theoretical = *O;
  else
    P.Notes.push_back(toString(O.takeError()));
  if (P.Theoretical && P.DriverBlocksPerSm && *P.DriverBlocksPerSm != P.Theoretical->ActiveBlocks)
    P.Notes.push_back("the driver allows " + std::to_string(*P.DriverBlocksPerSm) + " blocks per SM, the "
                      "occupancy calculation " + std::to_string(P.Theoretical->ActiveBlocks) +
                      " (a shared-memory carveout or a limit the calculation does not model)");
  return P;
}

std::vector<KernelProfile> kernelProfiles(const MetricsRun &Run, StringRef Shape, std::vector<std::string> &Problems) {
  std::vector<KernelProfile> Out;
  std::string Where = Shape.empty() ? std::string() : " (shape " + Shape.str() + ")";
  if (!Run.Error.empty())
    Problems.push_back("hardware counters unavailable" + Where + ": " + Run.Error);
  if (Run.DroppedRanges)
    Problems.push_back("CUPTI dropped " + std::to_string(Run.DroppedRanges) + " profiled range(s)" + Where);
  for (const MetricRange &R : Run.Ranges) {
    if (!R.Error.empty()) {
      Problems.push_back("no counters for " + R.Name + " (launch " + std::to_string(R.Seq) + ")" + Where + ": " +
                         R.Error);
      continue;
    }
    KernelProfile P = deriveKernelProfile(R, Run.Limits);
    P.Shape = Shape.str();
    Out.push_back(std::move(P));
  }
  return Out;
}

// ---- JSON --------------------------------------------------------------------------------------

namespace {
template <typename T> json opt(const std::optional<T> &V) { return V ? json(*V) : json(nullptr); }

json toJSON(const Occupancy &O) {
  return {{"blocks_by_registers", opt(O.BlocksByRegisters)},
          {"blocks_by_shared_memory", opt(O.BlocksBySharedMemory)},
          {"blocks_by_warps", O.BlocksByWarps},
          {"blocks_by_block_limit", O.BlocksByBlockLimit},
          {"active_blocks", O.ActiveBlocks},
          {"active_warps", O.ActiveWarps},
          {"theoretical_pct", O.TheoreticalPct},
          {"limiter", toString(O.Limiter).str()},
          {"grid_smaller_than_gpu", O.GridSmallerThanGpu}};
}

void readOptionalUnsigned(JSONObject &O, StringRef Key, std::optional<uint64_t> &Out) {
  std::optional<int64_t> V;
  O.read(Key, V);
  Out.reset();
  if (V)
    Out = uint64_t(*V);
}
} // namespace

json toJSON(const KernelProfile &P) {
  json Stalls = json::array();
  for (const StallReason &S : P.TopStalls)
    Stalls.push_back({{"reason", S.Reason}, {"pct", S.Pct}});
  return {{"kernel", P.Kernel},
          {"name", P.Name},
          {"shape", P.Shape},
          {"launch",
           {{"grid", P.Launch.Grid},
            {"block", P.Launch.Block},
            {"registers", P.Launch.Registers},
            {"static_smem", P.Launch.StaticSmem},
            {"dynamic_smem", P.Launch.DynamicSmem}}},
          {"profiled_duration_ns", opt(P.ProfiledDurationNs)},
          {"dram_read_bytes", opt(P.DramReadBytes)},
          {"dram_write_bytes", opt(P.DramWriteBytes)},
          {"l2_hit_pct", opt(P.L2HitPct)},
          {"achieved_occupancy_pct", opt(P.AchievedOccupancyPct)},
          {"theoretical", P.Theoretical ? toJSON(*P.Theoretical) : json(nullptr)},
          {"driver_blocks_per_sm", opt(P.DriverBlocksPerSm)},
          {"smem_bank_conflicts_ld", opt(P.SmemBankConflictsLoad)},
          {"smem_bank_conflicts_st", opt(P.SmemBankConflictsStore)},
          {"global_ld_sectors_per_request", opt(P.GlobalLoadSectorsPerRequest)},
          {"global_st_sectors_per_request", opt(P.GlobalStoreSectorsPerRequest)},
          {"top_stalls", Stalls},
          {"notes", P.Notes}};
}

void readFields(JSONObject &O, LaunchResources &L) {
  readDims(O, "grid", L.Grid);
  readDims(O, "block", L.Block);
  readUnsigned(O, "registers", L.Registers);
  readUnsigned(O, "static_smem", L.StaticSmem);
  readUnsigned(O, "dynamic_smem", L.DynamicSmem);
}

void readFields(JSONObject &O, Occupancy &Occ) {
  readOptionalUnsigned(O, "blocks_by_registers", Occ.BlocksByRegisters);
  readOptionalUnsigned(O, "blocks_by_shared_memory", Occ.BlocksBySharedMemory);
  readUnsigned(O, "blocks_by_warps", Occ.BlocksByWarps);
  readUnsigned(O, "blocks_by_block_limit", Occ.BlocksByBlockLimit);
  readUnsigned(O, "active_blocks", Occ.ActiveBlocks);
  readUnsigned(O, "active_warps", Occ.ActiveWarps);
  O.read("theoretical_pct", Occ.TheoreticalPct);
  std::string Limiter;
  O.read("limiter", Limiter);
  if (std::optional<OccupancyLimiter> L = occupancyLimiterFromString(Limiter))
    Occ.Limiter = *L;
  else if (!O.failed())
    O.fail("limiter", "expected registers, shared_memory, warps or blocks, found '" + Limiter + "'");
  O.read("grid_smaller_than_gpu", Occ.GridSmallerThanGpu);
}

void readFields(JSONObject &O, StallReason &S) {
  O.read("reason", S.Reason);
  O.read("pct", S.Pct);
}

Expected<KernelProfile> kernelProfileFromJSON(const json &J, StringRef Source) {
  JSONReadErrors E(Source.str());
  JSONObject O(J, "", E);
  KernelProfile P;
  O.read("kernel", P.Kernel);
  O.read("name", P.Name);
  O.read("shape", P.Shape);
  O.object("launch", P.Launch);
  O.read("profiled_duration_ns", P.ProfiledDurationNs);
  O.read("dram_read_bytes", P.DramReadBytes);
  O.read("dram_write_bytes", P.DramWriteBytes);
  O.read("l2_hit_pct", P.L2HitPct);
  O.read("achieved_occupancy_pct", P.AchievedOccupancyPct);
  O.object("theoretical", P.Theoretical);
  readOptionalUnsigned(O, "driver_blocks_per_sm", P.DriverBlocksPerSm);
  O.read("smem_bank_conflicts_ld", P.SmemBankConflictsLoad);
  O.read("smem_bank_conflicts_st", P.SmemBankConflictsStore);
  O.read("global_ld_sectors_per_request", P.GlobalLoadSectorsPerRequest);
  O.read("global_st_sectors_per_request", P.GlobalStoreSectorsPerRequest);
  O.objects("top_stalls", P.TopStalls);
  O.read("notes", P.Notes);
  O.finish();
  if (Error X = E.take())
    return X;
  return P;
}

// ---- Text --------------------------------------------------------------------------------------

namespace {
std::string num(const std::optional<double> &V, const char *Fmt) {
  if (!V)
    return "?";
  std::string S;
  raw_string_ostream(S) << format(Fmt, *V);
  return S;
}

std::string bytes(const std::optional<double> &V) {
  if (!V)
    return "?";
  return *V >= 1e9 ? num(*V / 1e9, "%.2f GB") : *V >= 1e6 ? num(*V / 1e6, "%.2f MB") : num(*V / 1e3, "%.1f kB");
}
} // namespace

std::string summarizeKernelProfile(const KernelProfile &P) {
  std::string S;
  raw_string_ostream OS(S);
  OS << "occupancy " << num(P.AchievedOccupancyPct, "%.1f%%") << " achieved / ";
  if (P.Theoretical)
    OS << format("%.1f%%", P.Theoretical->TheoreticalPct) << " theoretical (limiter: "
       << toString(P.Theoretical->Limiter) << (P.Theoretical->GridSmallerThanGpu ? "; grid smaller than the GPU" : "")
       << ")";
  else
    OS << "? theoretical";
  OS << "; DRAM " << bytes(P.DramReadBytes) << " read, " << bytes(P.DramWriteBytes) << " written; L2 hit "
     << num(P.L2HitPct, "%.1f%%") << "; smem bank conflicts " << num(P.SmemBankConflictsLoad, "%.0f") << " ld, "
     << num(P.SmemBankConflictsStore, "%.0f") << " st; sectors/request "
     << num(P.GlobalLoadSectorsPerRequest, "%.2f") << " ld, " << num(P.GlobalStoreSectorsPerRequest, "%.2f")
     << " st; stalls";
  if (P.TopStalls.empty())
    OS << " ?";
  for (size_t I = 0; I < P.TopStalls.size(); ++I)
    OS << (I ? ", " : " ") << P.TopStalls[I].Reason << format(" %.1f%%", P.TopStalls[I].Pct);
  return S;
}

} // namespace measure
} // namespace kloop
