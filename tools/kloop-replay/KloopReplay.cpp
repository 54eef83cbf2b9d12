//===- KloopReplay.cpp - the replay worker (kloop replay) -----------------===//
//
// kloop-replay CAPTURE --cubin FILE [--candidate-cubin FILE] [--iters N] [--launch I]...
//              [--tolerance exact|abs:X|rel:X[,f32|,f64]] [--l2 flush|steady|rotate|rotate-sets|flush-dirty|warm] [--poison]
//              [--placements N [--placement-pad-mib M [--placement-seed S]]] [--back-to-back] [--timeout-ms T]
//              [--device D] [--no-gate] [--host-check]
// kloop-replay CAPTURE --serve [same options but the cubins and --iters]
//
// Loads a kloop-capture/1 directory, puts its allocations back at their captured addresses (CUDA's
// virtual memory management API; relocated when the driver cannot give those addresses), loads the
// kernels from cubins, and for every iteration and captured launch restores the inputs (untimed),
// launches baseline and candidate alternately with the captured launch configuration, times each with
// CUDA events, and checks every allocation against the captured reference (on the GPU first, with the
// embedded DeviceCheck.cu kernel; on the host, which names the first difference, when the GPU found one). Prints one kloop-replay/1
// JSON object on stdout (docs/capture.md). With --serve it stays up for a whole search: it loads the
// capture and maps its allocations once, prints a ready line, then answers one kloop-replay/1 line per
// request line read from stdin ({"cubin", "candidate_cubin", "iters"}; docs/capture.md, "Serve mode").
// Links the CUDA driver and nothing of LLVM: it runs on the GPU machine as it is.
//
// Exit: 0 every check matched; 1 the candidate mismatched, faulted or timed out; 2 usage or capture
// errors; 3 the baseline does not reproduce the capture (the capture is not replayable as it is).
//
//===----------------------------------------------------------------------===//
#include "CuptiTimer.h"
#include "ReplayCheck.h"
#include "kloop/Capture/Manifest.h"

#include <cuda.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace kloop;
using json = nlohmann::ordered_json;

namespace {

enum ExitCode { ExitMatch = 0, ExitCandidate = 1, ExitUsage = 2, ExitBaseline = 3 };

/// What the mapped bytes outside every captured allocation hold during replay.
constexpr uint8_t SlackByte = 0xA5;

/// The most other buffer sets the "rotate-sets" L2 mode launches a kernel on before a timed launch (a
/// launch under 2 x L2 / 64 bytes, 1.9 MiB on the H200, gets fewer than a rotating program would give it).
constexpr uint32_t MaxOtherSets = 64;

/// How a side launches a captured launch: grid and block (x, y, z), dynamic shared memory (bytes), and the
/// kernel's symbol.
struct Dims {
  uint32_t Grid[3] = {1, 1, 1}, Block[3] = {1, 1, 1};
  uint64_t Smem = 0;
  std::string Kernel;
};

Dims capturedDims(const capture::Launch &L) {
  Dims D;
  for (int I = 0; I < 3; ++I)
    D.Grid[I] = L.Grid[I], D.Block[I] = L.Block[I];
  D.Smem = L.DynamicSmem;
  D.Kernel = L.Kernel;
  return D;
}

struct Options {
  std::string Capture, Cubin, CandidateCubin;
  /// A request's launch configurations instead of the captured ones: (launch index, side 0 or 1).
  std::map<std::pair<size_t, int>, Dims> Configs;
  unsigned Iters = 10;
  std::vector<size_t> Launches;
  replay::Tolerance Tol;
  /// The L2 state before each timed launch (--l2; docs/capture.md, "The L2 before a timed launch"):
  /// "flush" (a clean L2), "steady" (the default: clean but for the dirty lines the launch's own previous
  /// run would leave, replay::steadyDirtyBytes), "rotate" (clean but for the dirty share of an L2 full of
  /// the traffic of launches on other buffers, replay::rotateDirtyBytes), "rotate-sets" (clean, then the
  /// kernel launched on copies of its allocations at other addresses, as a program rotating buffer sets
  /// launches it: Replayer::launchOthers), "flush-dirty" (an L2 full of dirty lines) or "warm"
  /// (whatever the restore left).
  std::string L2 = "steady";
  bool flushes() const { return L2 != "warm"; }
  bool Poison = false;
  unsigned TimeoutMs = 10000;
  int Device = 0;
  bool Serve = false;
  /// Enqueue the timed launches behind a stream wait (--no-gate turns it off, to measure what it changes).
  bool Gate = true;
  /// Check every allocation on the host only (--host-check): the check before the device check existed.
  bool HostCheck = false;
  /// Launch the kernel once, untimed, before each timed launch's restore (--prime): its code and
  /// parameters are then where a program's back-to-back launches find them (docs/capture.md).
  bool Prime = false;
  /// In the "rotate-sets" L2 mode, queue the launches on other buffer sets and the timed launch behind one
  /// timing gate, with no wait between them (--back-to-back), as a program's timed launches run, instead
  /// of waiting for each launch on another set before the timed one (docs/capture.md, "Back to back").
  bool BackToBack = false;
  /// With --back-to-back, the length of the train of launches queued before the timed one (--train K; 0:
  /// the launches on the other buffer sets only): a program's timed loop runs many launches back to back,
  /// cycling its buffer sets (replay::trainPlacements): the other placements only, so the timed one keeps
  /// its restored inputs and poisoned outputs.
  unsigned Train = 0;
  /// Bytes of L2 left dirty before each timed launch in the "steady" and "rotate" L2 modes instead of the
  /// model's (--steady-dirty-bytes; -1: the model), to measure what the share changes.
  int64_t SteadyDirtyBytes = -1;
  /// How a timed launch is timed (--timer): "cupti" (the default: the kernel's activity record, as the
  /// workload path times it) or "events" (CUDA events behind the timing gate; also what "cupti" falls
  /// back to when libcupti cannot be used, and the JSON says why).
  std::string Timer = "cupti";
  /// Where in device memory the timed launches run (--placements N; docs/capture.md, "Placements"):
  /// iteration i of every launch runs, on both sides, at placement i mod N: 0 the allocations mapped at
  /// their captured addresses, 1 to N - 1 copies of them at other addresses. 1: always placement 0.
  unsigned Placements = 1;
  /// MiB of device memory allocated right after the context is created, before the captured
  /// allocations are mapped (--pad-mib; 0: none): moves where in device memory they land, to measure
  /// what that changes, as libkloop-cupti.so's KLOOP_CUPTI_PLACEMENT_PAD does for a program.
  uint64_t PadMiB = 0;
  /// Where the placements land (--placement-pad-mib M, --placement-seed S; docs/capture.md, "Placements"):
  /// before the captured allocations are mapped, and before each copy of them, a pad of 2 MiB x k, k in
  /// [0, M / 2) drawn from S and the placement's number (placementKey, capture::placementPadBytes), as
  /// kloop compare pads a program per timing round (placement_pad_mib). 0: no pads, so every run times the
  /// same placements. A serve request's "placement_seed" draws the copies' pads again.
  unsigned PlacementPadMiB = 0;
  uint64_t PlacementSeed = 0;
  /// A serve request's "placement_seed" (absent: the copies stay where they are).
  std::optional<uint64_t> RedrawSeed;
};

/// The key placement \p At's pad is drawn from under seed \p Seed (capture::placementPadBytes).
uint64_t placementKey(uint64_t Seed, uint32_t At) { return Seed * 0x9E3779B97F4A7C15ULL + At; }

/// Whether L2 mode \p Mode follows the read flush with dirty lines (Replayer::setSteadyDirty): "steady" and
/// "rotate".
bool dirtiesAfterFlush(const std::string &Mode) { return Mode == "steady" || Mode == "rotate"; }

/// Nanoseconds since \p Since, for the time split of a request.
uint64_t nsSince(std::chrono::steady_clock::time_point Since) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - Since).count());
}

/// Where a request's wall time went (ns): loading cubins, restoring inputs (with the L2 flush and the
/// slack fill), the timed launches (host wall from the start event to the stop event's completion) and
/// the checks (copies back and comparisons).
struct TimeSplit {
  uint64_t Modules = 0, Restore = 0, Timed = 0, Check = 0;
};

const char *Usage =
    "usage: kloop-replay CAPTURE --cubin FILE [--candidate-cubin FILE] [--iters N] [--launch I]...\n"
    "       [--tolerance exact|abs:X|rel:X[,f32|,f64]] [--l2 flush|steady|rotate|rotate-sets|flush-dirty|warm] [--poison] [--placements N] [--timeout-ms T] [--device D]\n"
    "       [--placement-pad-mib M [--placement-seed S]] [--pad-mib M]\n"
    "       [--no-gate] [--host-check] [--prime] [--back-to-back [--train K]] [--steady-dirty-bytes N] [--timer cupti|events]\n"
    "       kloop-replay CAPTURE --serve [options above but --cubin, --candidate-cubin, --iters]\n";

bool parseCount(const char *Text, unsigned long long Max, unsigned long long &Out) {
  char *End = nullptr;
  errno = 0;
  Out = std::strtoull(Text, &End, 10);
  return *Text && *Text != '-' && !*End && !errno && Out <= Max;
}

bool parseArgs(int Argc, char **Argv, Options &O, std::string &Error) {
  for (int I = 1; I < Argc; ++I) {
    std::string A = Argv[I];
    auto Value = [&](const char *&Out) {
      if (I + 1 >= Argc) {
        Error = A + " needs a value";
        return false;
      }
      Out = Argv[++I];
      return true;
    };
    const char *V = nullptr;
    unsigned long long N = 0;
    if (A == "--cubin" || A == "--candidate-cubin") {
      if (!Value(V))
        return false;
      (A == "--cubin" ? O.Cubin : O.CandidateCubin) = V;
    } else if (A == "--iters" || A == "--launch" || A == "--timeout-ms" || A == "--device") {
      if (!Value(V))
        return false;
      if (!parseCount(V, 1u << 30, N) || (N == 0 && (A == "--iters" || A == "--timeout-ms"))) {
        Error = A + " '" + V + "': expected " + (A == "--launch" || A == "--device" ? "an index" : "a count >= 1");
        return false;
      }
      if (A == "--iters")
        O.Iters = static_cast<unsigned>(N);
      else if (A == "--launch")
        O.Launches.push_back(N);
      else if (A == "--timeout-ms")
        O.TimeoutMs = static_cast<unsigned>(N);
      else
        O.Device = static_cast<int>(N);
    } else if (A == "--tolerance") {
      if (!Value(V) || !replay::parseTolerance(V, O.Tol, Error))
        return false;
    } else if (A == "--l2") {
      if (!Value(V))
        return false;
      if (!capture::isL2Mode(V)) {
        Error = std::string("--l2 '") + V + "': expected " + capture::L2Modes;
        return false;
      }
      O.L2 = V;
    } else if (A == "--poison") {
      O.Poison = true;
    } else if (A == "--serve") {
      O.Serve = true;
    } else if (A == "--no-gate") {
      O.Gate = false;
    } else if (A == "--host-check") {
      O.HostCheck = true;
    } else if (A == "--steady-dirty-bytes") {
      if (!Value(V))
        return false;
      if (!parseCount(V, 1ull << 40, N)) {
        Error = A + " '" + V + "': expected a byte count";
        return false;
      }
      O.SteadyDirtyBytes = static_cast<int64_t>(N);
    } else if (A == "--timer") {
      if (!Value(V))
        return false;
      if (std::string(V) != "cupti" && std::string(V) != "events") {
        Error = std::string("--timer '") + V + "': expected cupti or events";
        return false;
      }
      O.Timer = V;
    } else if (A == "--placements") {
      if (!Value(V))
        return false;
      if (!parseCount(V, capture::MaxPlacements, N) || N == 0) {
        Error = A + " '" + V + "': expected a count from 1 to " + std::to_string(capture::MaxPlacements);
        return false;
      }
      O.Placements = static_cast<unsigned>(N);
    } else if (A == "--pad-mib") {
      if (!Value(V))
        return false;
      if (!parseCount(V, 1u << 20, N)) {
        Error = A + " '" + V + "': expected a size in MiB";
        return false;
      }
      O.PadMiB = N;
    } else if (A == "--placement-pad-mib" || A == "--placement-seed") {
      if (!Value(V))
        return false;
      bool Pad = A == "--placement-pad-mib";
      if (!parseCount(V, Pad ? 4096 : ~0ull, N)) {
        Error = A + " '" + V + "': expected " + (Pad ? "a size in MiB from 0 to 4096" : "an unsigned 64-bit seed");
        return false;
      }
      if (Pad)
        O.PlacementPadMiB = static_cast<unsigned>(N);
      else
        O.PlacementSeed = N;
    } else if (A == "--prime") {
      O.Prime = true;
    } else if (A == "--back-to-back") {
      O.BackToBack = true;
    } else if (A == "--train") {
      if (!Value(V))
        return false;
      if (!parseCount(V, capture::MaxTrain, N)) {
        Error = A + " '" + V + "': expected a count of launches from 0 to " + std::to_string(capture::MaxTrain);
        return false;
      }
      O.Train = static_cast<unsigned>(N);
    } else if (!A.empty() && A[0] == '-') {
      Error = "unknown option " + A;
      return false;
    } else if (O.Capture.empty()) {
      O.Capture = A;
    } else {
      Error = "unexpected argument " + A + " (one capture directory only)";
      return false;
    }
  }
  if (O.Capture.empty())
    Error = "no capture directory given";
  else if (O.Serve && !O.Cubin.empty())
    Error = "--serve takes the cubins from each request, not from --cubin";
  else if (!O.Serve && O.Cubin.empty())
    Error = "--cubin FILE is required (the baseline's kernels)";
  else if (O.BackToBack && O.L2 != "rotate-sets")
    Error = "--back-to-back queues the timed launch behind the launches on other buffer sets of --l2 rotate-sets; "
            "--l2 is '" + O.L2 + "'";
  else if (O.Train && !O.BackToBack)
    Error = "--train queues launches back to back before the timed one; it needs --back-to-back";
  return Error.empty();
}

bool readFile(const std::string &Path, std::string &Out, std::string &Error) {
  std::ifstream In(Path, std::ios::binary);
  if (!In) {
    Error = Path + ": cannot read: " + std::strerror(errno);
    return false;
  }
  Out.assign(std::istreambuf_iterator<char>(In), std::istreambuf_iterator<char>());
  return true;
}

std::string cuText(CUresult R) {
  const char *Name = nullptr;
  if (cuGetErrorName(R, &Name) != CUDA_SUCCESS || !Name)
    return "CUresult " + std::to_string(static_cast<int>(R));
  return Name;
}

/// A CUDA call that failed outside any kernel's run.
struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(CUresult R, const std::string &What) {
  if (R != CUDA_SUCCESS)
    throw CudaError(What + ": " + cuText(R));
}

/// A kernel launch that failed, faulted or did not finish in time: the context may be lost.
struct LaunchFailure {
  std::string Side, Message;
  bool TimedOut = false;
};

/// A captured launch ready to replay: host copies of its blobs and its relocated parameter buffer.
struct Prepared {
  size_t Index = 0;
  const capture::Launch *L = nullptr;
  std::vector<uint8_t> Params;
  std::vector<CUdeviceptr> Bases; // relocated Allocation::Base
  std::vector<std::shared_ptr<std::vector<uint8_t>>> Before, After;
  std::vector<bool> Poisoned;
  /// Bytes of L2 left dirty before each timed launch in the "steady" and "rotate" L2 modes (Replayer::setSteadyDirty).
  uint64_t SteadyDirtyBytes = 0;
  /// Copies of this launch's allocations at other addresses (Replayer::prepareCopies): the placements
  /// 1 to SetParams.size() that timed launches run at (--placements) and that the "rotate-sets" L2 mode
  /// launches the kernel on before each timed launch. Per copy, the parameter buffer with its pointers
  /// moved into the copy, and each allocation's address there. Empty without either.
  std::vector<std::vector<uint8_t>> SetParams;
  std::vector<std::vector<CUdeviceptr>> SetBases;
  /// The "rotate-sets" L2 mode's launches on other placements before each timed launch
  /// (replay::rotationSets; replay::placementsBefore says which); 0 in the other modes.
  uint32_t Others = 0;
  /// Placements of this launch: the captured addresses' mapping and each copy.
  uint32_t placements() const { return 1 + static_cast<uint32_t>(SetParams.size()); }
  CUfunction Fn[2] = {nullptr, nullptr};
  /// What each side launches: the captured configuration unless the request gives another.
  Dims Config[2];
  std::vector<uint64_t> TimesNs[2];
  /// The placement each of TimesNs ran at, parallel to it.
  std::vector<uint32_t> PlacementOf[2];
  std::string Mismatch[2];
  /// The allocation index of Mismatch, -1 for none or a write outside every allocation.
  long MismatchAllocation[2] = {-1, -1};
  bool Checked[2] = {false, false};
};

/// \p P's parameter buffer at placement \p At (0: the captured addresses' mapping; 1..: a copy).
const std::vector<uint8_t> &paramsAt(const Prepared &P, uint32_t At) { return At ? P.SetParams[At - 1] : P.Params; }
/// \p P's allocations' addresses at placement \p At.
const std::vector<CUdeviceptr> &basesAt(const Prepared &P, uint32_t At) { return At ? P.SetBases[At - 1] : P.Bases; }

/// The kernel arguments of \p P's launch with the parameter buffer \p Params (cuLaunchKernelEx's kernelParams).
std::vector<void *> argsOf(const Prepared &P, const std::vector<uint8_t> &Params) {
  std::vector<void *> Args;
  for (const capture::ParamSlot &S : P.L->Params) // the driver only reads them
    Args.push_back(const_cast<uint8_t *>(Params.data()) + S.Offset);
  return Args;
}

/// Every captured allocation of \p Ps as an address range (captured addresses; one per launch that uses it).
std::vector<capture::AddressRange> capturedRanges(const std::vector<Prepared> &Ps) {
  std::vector<capture::AddressRange> All;
  for (const Prepared &P : Ps)
    for (const capture::Allocation &A : P.L->Allocations)
      All.push_back({A.Base, A.Bytes});
  return All;
}

/// Bytes of \p L's allocations: all of them (\p Written false) or the ones it writes.
uint64_t allocationBytes(const capture::Launch &L, bool Written) {
  uint64_t Bytes = 0;
  for (const capture::Allocation &A : L.Allocations)
    if (!Written || A.written())
      Bytes += A.Bytes;
  return Bytes;
}

class Replayer {
public:
  Replayer(const Options &O, const capture::Manifest &M) : PadMiB(O.PlacementPadMiB), O(O), M(M) { L2 = O.L2; }
  ~Replayer();

  std::string loadBlobs(std::vector<Prepared> &Ps);
  void init();
  void mapAllocations(const std::vector<Prepared> &Ps);
  /// The stream, events, timing gate, L2 flush buffer, pinned check buffer and device copies of
  /// \p Ps' inputs that every request uses; once per process.
  void prepareDevice(std::vector<Prepared> &Ps);
  /// Stream, events, gate, pinned buffers and device copies of the inputs (prepareDevice's first part).
  void prepareHost(const std::vector<Prepared> &Ps);
  /// Finds every launch's kernel in \p Cubin (side 0) and \p CandidateCubin (side 1, "" for none);
  /// a cubin is loaded once per process and path.
  void loadKernels(std::vector<Prepared> &Ps, const std::string &Cubin, const std::string &CandidateCubin);
  void relocate(Prepared &P);
  /// Unloads every module but \p Keep's: a serving worker keeps the incumbent's cubin, not the candidates'.
  void unloadModulesExcept(const std::string &Keep);
  /// Restores, launches once on side \p Side (0 baseline, 1 candidate) at placement \p At, waits; returns
  /// the duration in ns and the first mismatch ("" when every allocation matched).
  uint64_t runOnce(Prepared &P, int Side, std::string &Mismatch, bool Poison = true, uint32_t At = 0);
  /// The launch of \p P on side \p Side (its configuration, cooperative and cluster attributes in \p Attrs).
  CUlaunchConfig launchConfig(const Prepared &P, int Side, CUlaunchAttribute (&Attrs)[2]) const;
  /// The duration (ns) of the launch of \p Kernel (mangled name) that just completed between the Start
  /// and Stop events: its CUPTI record's when CUPTI times, else (or when the record is missing) the events'.
  uint64_t timedNs(const std::string &Kernel);
  void classifyPoison(Prepared &P);

  /// Whether the L2 flush reads its buffer (a clean L2) rather than writing it (flushL2): mode "flush",
  /// "steady", "rotate" or "rotate-sets" with the flush kernel loaded.
  bool flushReads() const { return FlushFn && (L2 == "flush" || L2 == "rotate-sets" || dirtiesAfterFlush(L2)); }
  /// In the "steady" and "rotate" L2 modes, sets each launch's SteadyDirtyBytes from its captured
  /// allocations: all of them touched, the written ones written (replay::steadyDirtyBytes or
  /// replay::rotateDirtyBytes; --steady-dirty-bytes overrides both).
  void setSteadyDirty(std::vector<Prepared> &Ps) const;
  /// Allocates each launch's copies at other addresses and its parameter buffers there: as many as the
  /// "rotate-sets" L2 mode launches on before a timed launch (replay::rotationSets) and at least
  /// Options::Placements - 1. When they cannot be made (a captured allocation holds a pointer into a
  /// captured allocation, or they do not fit in half the free device memory) the timed launches stay at
  /// the captured addresses (Placements 1, PlacementNote says why), with the rotation's copies alone when
  /// those can be made, else the mode falls back to "rotate" and L2Note says why.
  void prepareCopies(std::vector<Prepared> &Ps);
  /// A serve request's "placement_seed": frees the copies and allocates them again after pads drawn from
  /// \p Seed (--placement-pad-mib), so that each request times its own sample of placements; nothing when
  /// there are no copies or pads, or \p Seed drew the copies in place. Placement 0, the captured addresses'
  /// mapping, stays where it is. When the new pads do not fit, the copies are allocated again at the
  /// previous seed's placements and the result says why ("" when it does not); throws CudaError when
  /// even those cannot be allocated (the worker then has no copies and must end).
  std::string redrawCopies(std::vector<Prepared> &Ps, uint64_t Seed);
  /// The largest placement pad in use, MiB (--placement-pad-mib; 0 when the copies were allocated back to
  /// back because the pads did not fit, and PadNote says so).
  unsigned PadMiB = 0;
  std::string PadNote;
  /// Bytes of the pad before each placement (0: the captured addresses' mapping, 1..: each copy set).
  std::vector<uint64_t> PadBytes = {0};
  /// The seed the copies' pads were drawn from.
  uint64_t CopySeed = 0;
  /// The L2 mode in use: Options::L2, or "rotate" when "rotate-sets" could not be used.
  std::string L2;
  /// Why the L2 mode in use differs from the one asked for ("" when it does not).
  std::string L2Note;
  /// The placements the timed launches cycle through: Options::Placements, or 1 when the copies could
  /// not be made (PlacementNote says why).
  uint32_t Placements = 1;
  std::string PlacementNote;
  bool Relocated = false;
  /// Checks run on the GPU first (prepareDeviceCheck): the check kernel is loaded and every reference
  /// is in device memory.
  bool DeviceCheck = false;
  /// The timed launches are enqueued behind a stream wait that the host releases (see runOnce).
  bool Gated = false;
  /// Why --timer cupti times with events instead ("" when it does not).
  std::string TimerNote;
  /// Timed launches CUPTI gave no record for, timed by their events instead (should stay 0).
  uint64_t CuptiMissing = 0;
  /// "cupti" when CUPTI times the launches, else "events".
  std::string timer() const { return replay::CuptiTimer::active() ? "cupti" : "events"; }
  std::string DeviceName;
  /// The current request's time split; reset by the caller.
  TimeSplit Split;
  /// The allocation index of the last runOnce's mismatch, -1 for none or a write outside every allocation.
  long LastMismatchAllocation = -1;

private:
  /// The index in Ranges of the mapped range holding captured address \p Addr, if any.
  std::optional<size_t> rangeOf(uint64_t Addr) const;
  uint64_t translate(uint64_t Addr) const;
  /// Restores \p P's inputs at placement \p At (and poisons its write-only outputs when \p Poison), then
  /// sets the L2 state its timed launch on side \p Side starts from.
  void restore(const Prepared &P, int Side, bool Poison, uint32_t At);
  /// Copies the captured contents \p Before to \p To (stream-ordered): from its device copy when there is one.
  void copyBefore(CUdeviceptr To, const std::vector<uint8_t> &Before);
  /// Why \p Ps' allocations cannot be copied to other addresses ("" when they can): a captured
  /// allocation holds a pointer into a captured allocation before its launch or after it.
  std::string storedPointer(const std::vector<Prepared> &Ps) const;
  /// Allocates \p PerRange[i] copies of mapped range i (SetRanges; the others stay 0), each copy set
  /// after its pad drawn from \p Seed (PadBytes, SetPads); "" or why not (memory). On failure nothing
  /// stays allocated.
  std::string allocateSets(const std::vector<uint32_t> &PerRange, uint64_t Seed);
  /// Each launch's parameter buffers and allocation addresses in each copy set (SetParams, SetBases).
  void setCopyParams(std::vector<Prepared> &Ps) const;
  /// Per mapped range, the copies allocateSets made; the pads allocated before each copy set.
  std::vector<uint32_t> CopyCounts;
  std::vector<CUdeviceptr> SetPads;
  /// Copies of each mapped range: for every launch touching it, \p Others[n] (launch n's rotation) or
  /// \p MinCopies, whichever is more; the range gets the most any launch needs.
  std::vector<uint32_t> copiesPerRange(const std::vector<Prepared> &Ps, const std::vector<uint32_t> &Others,
                                       uint32_t MinCopies) const;
  void freeSets();
  /// The "rotate-sets" L2 mode's restore of \p P at the placements \p Before: every allocation but the
  /// write-only ones.
  void restoreOthers(const Prepared &P, const std::vector<uint32_t> &Before);
  /// \p Addr (captured) in copy \p Set (placement Set + 1).
  CUdeviceptr inSet(uint64_t Addr, size_t Set) const;
  /// Slack range \p S at placement \p At; 0 when that placement holds no copy of its range.
  CUdeviceptr slackAt(const replay::MappedRange &S, uint32_t At) const;
  /// The "rotate-sets" L2 mode's step before a timed launch, after the flush: launches side \p Side at
  /// each placement of \p Before in turn. \p Wait: waiting for each, then dropping their CUPTI records
  /// (part of the restore); else only queued, right before the timed launch (--back-to-back).
  void launchOthers(const Prepared &P, int Side, const std::vector<uint32_t> &Before, bool Wait);
  /// The placements queued back to back before a timed launch of \p P at placement \p At (--back-to-back):
  /// the other buffer sets, or a train of --train launches over them and At when no written allocation
  /// of \p P is read-write (so not while classifyPoison has yet to mark the write-only ones).
  std::vector<uint32_t> backToBack(const Prepared &P, uint32_t At) const;
  /// Copies of Ranges at other addresses, [set][range] (placement set + 1).
  std::vector<std::vector<CUdeviceptr>> SetRanges;
  /// The first difference from the captured reference at placement \p At, "" when none.
  std::string compare(const Prepared &P, uint32_t At);
  void waitFor(CUevent E, const std::string &Side);

  const Options &O;
  const capture::Manifest &M;
  CUdevice Dev = 0;
  CUcontext Ctx = nullptr;
  CUstream Stream = nullptr;
  CUevent Start = nullptr, Stop = nullptr;
  CUdeviceptr Scratch = 0;
  size_t ScratchBytes = 0;
  /// CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, bytes (0 until prepareHost reads it, and when no mode flushes).
  uint64_t L2Bytes = 0;
  unsigned Flushes = 0;
  /// DeviceCheck.cu's kloop_replay_l2_flush, which reads Scratch (null: not loaded, and the flush writes it).
  CUfunction FlushFn = nullptr;
  CUdeviceptr FlushSink = 0;
  void loadFlushKernel();
  /// Sets the L2 state before a timed launch of \p P (Options::L2): reads Scratch with FlushFn, so that
  /// L2 holds only clean lines; "flush-dirty", or no FlushFn, writes Scratch instead (L2 then holds dirty
  /// lines); "steady" then writes P.SteadyDirtyBytes of Scratch again, which stay in L2 dirty.
  void flushL2(const Prepared &P);
  std::vector<replay::MappedRange> Ranges;
  /// Mapped bytes outside every captured allocation (captured addresses): filled with SlackByte.
  std::vector<replay::MappedRange> Slack;
  std::vector<int64_t> Deltas;
  /// Cubin path -> its module (a path is loaded once: the optimize loop names each cubin file once).
  std::map<std::string, CUmodule> Modules;
  std::map<std::string, std::shared_ptr<std::vector<uint8_t>>> BlobCache;
  /// The timing gate: a host-mapped word the stream waits on before each timed launch.
  volatile uint32_t *GateHost = nullptr;
  CUdeviceptr GateDev = 0;
  uint32_t GateValue = 0;
  /// Host buffer the checks copy device memory into: page-locked (GotPinned, GotPinnedBytes) when it
  /// could be allocated, else GotPageable.
  uint8_t *GotPinned = nullptr;
  size_t GotPinnedBytes = 0;
  std::vector<uint8_t> GotPageable;
  uint8_t *gotBuffer(size_t Bytes);
  /// A blob -> its copy in device memory.
  using DeviceBlobs = std::map<const std::vector<uint8_t> *, CUdeviceptr>;
  /// Input blob -> its copy in device memory, restored from with a device-to-device copy; empty when
  /// the copies would not fit in half the free device memory (then inputs are copied from the host).
  DeviceBlobs DeviceInputs;
  /// Device copies of the distinct non-empty blobs among \p Blobs, all or none: none when they would not
  /// fit in half the free device memory, or an allocation or a copy fails.
  DeviceBlobs deviceCopies(const std::vector<const std::vector<uint8_t> *> &Blobs);
  /// DeviceCheck.cu's module (the check and the L2 flush), loaded on first use; null when it is not built
  /// in or does not load.
  CUmodule UtilityModule = nullptr;
  CUmodule utilityModule();
  /// The check on the GPU: DeviceCheck.cu's kernel, its result word, and each reference blob's device copy.
  CUfunction CheckFn = nullptr;
  CUdeviceptr CheckFlag = 0;
  DeviceBlobs DeviceRefs;
  void prepareDeviceCheck(const std::vector<Prepared> &Ps);
  /// False when \p Bytes bytes at \p Got certainly match \p Ref (null: every byte is \p Fill) under
  /// \p T; true when they may differ (the host check then decides and names the difference).
  bool mayDiffer(CUdeviceptr Got, CUdeviceptr Ref, size_t Bytes, const replay::Tolerance &T, uint8_t Fill);
};

Replayer::~Replayer() = default; // the process exits right after; the driver tears the context down

std::string Replayer::loadBlobs(std::vector<Prepared> &Ps) {
  std::string Error;
  auto Get = [&](const std::string &Name) -> std::shared_ptr<std::vector<uint8_t>> {
    auto &Slot = BlobCache[Name];
    if (!Slot) {
      auto B = std::make_shared<std::vector<uint8_t>>();
      if (!capture::readBlob(O.Capture, Name, M.Blobs, *B, Error))
        return nullptr;
      Slot = B;
    }
    return Slot;
  };
  for (Prepared &P : Ps) {
    auto Params = Get(P.L->ParamBlob);
    if (!Params)
      return Error;
    P.Params = *Params;
    for (const capture::Allocation &A : P.L->Allocations) {
      P.Before.push_back(Get(A.Before));
      P.After.push_back(Get(A.After));
      if (!P.Before.back() || !P.After.back())
        return Error;
      if (A.written() && replay::allBytesAre(*P.After.back(), 0xFF))
        return "launch " + std::to_string(P.Index) + " (" + P.L->Name + "): the captured reference of allocation " +
               std::to_string(P.Before.size() - 1) +
               " is entirely 0xFF bytes (NaN or poison): no candidate can be checked against it";
    }
    P.Poisoned.assign(P.L->Allocations.size(), false);
  }
  return "";
}

void Replayer::init() {
  check(cuInit(0), "cuInit");
  check(cuDeviceGet(&Dev, O.Device), "cuDeviceGet(" + std::to_string(O.Device) + ")");
  char Name[256] = {0};
  check(cuDeviceGetName(Name, sizeof(Name) - 1, Dev), "cuDeviceGetName");
  DeviceName = Name;
  check(cuDevicePrimaryCtxRetain(&Ctx, Dev), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(Ctx), "cuCtxSetCurrent");
  CUdeviceptr Pad = 0; // kept until the process exits
  if (O.PadMiB)
    check(cuMemAlloc(&Pad, O.PadMiB << 20), "cuMemAlloc of the " + std::to_string(O.PadMiB) + " MiB pad (--pad-mib)");
  else if ((PadBytes[0] = capture::placementPadBytes(PadMiB, placementKey(O.PlacementSeed, 0))))
    check(cuMemAlloc(&Pad, PadBytes[0]), "cuMemAlloc of placement 0's " + std::to_string(PadBytes[0] >> 20) +
                                             " MiB pad (--placement-pad-mib)");
  if (O.Timer == "cupti") {
    std::string Why = replay::CuptiTimer::start();
    if (!Why.empty())
      TimerNote = Why + "; timed with CUDA events";
  }
}

void Replayer::mapAllocations(const std::vector<Prepared> &Ps) {
  CUmemAllocationProp Prop = {};
  Prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  Prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  Prop.location.id = Dev;
  size_t Granule = 0;
  check(cuMemGetAllocationGranularity(&Granule, &Prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
        "cuMemGetAllocationGranularity");
  std::vector<capture::AddressRange> All = capturedRanges(Ps);
  Ranges = replay::granuleRanges(All, Granule);
  Slack = replay::uncovered(Ranges, All);
  CUmemAccessDesc Access = {};
  Access.location = Prop.location;
  Access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  for (const replay::MappedRange &R : Ranges) {
    CUdeviceptr At = 0;
    // The captured address is a hint: the driver may give another range, or refuse the hint.
    if (cuMemAddressReserve(&At, R.Size, Granule, static_cast<CUdeviceptr>(R.Start), 0) != CUDA_SUCCESS)
      check(cuMemAddressReserve(&At, R.Size, Granule, 0, 0),
            "cuMemAddressReserve of " + std::to_string(R.Size) + " bytes");
    CUmemGenericAllocationHandle H = 0;
    check(cuMemCreate(&H, R.Size, &Prop, 0), "cuMemCreate of " + std::to_string(R.Size) + " bytes");
    check(cuMemMap(At, R.Size, 0, H, 0), "cuMemMap");
    check(cuMemSetAccess(At, R.Size, &Access, 1), "cuMemSetAccess");
    Deltas.push_back(static_cast<int64_t>(At) - static_cast<int64_t>(R.Start));
    Relocated |= At != R.Start;
  }
}

std::optional<size_t> Replayer::rangeOf(uint64_t Addr) const {
  for (size_t I = 0; I < Ranges.size(); ++I)
    if (Addr >= Ranges[I].Start && Addr - Ranges[I].Start < Ranges[I].Size)
      return I;
  return std::nullopt;
}

uint64_t Replayer::translate(uint64_t Addr) const {
  std::optional<size_t> I = rangeOf(Addr);
  return I ? static_cast<uint64_t>(static_cast<int64_t>(Addr) + Deltas[*I]) : Addr;
}

void Replayer::relocate(Prepared &P) {
  for (const capture::Allocation &A : P.L->Allocations)
    P.Bases.push_back(static_cast<CUdeviceptr>(translate(A.Base)));
  for (const capture::PointerWord &W : P.L->Pointers) {
    uint64_t V = translate(W.Value);
    std::memcpy(P.Params.data() + W.Offset, &V, 8);
  }
}

/// The parameter layout of \p F, compared with the captured one; "" when they agree.
std::string layoutDifference(CUfunction F, const capture::Launch &L) {
  for (size_t I = 0; I <= L.Params.size(); ++I) {
    size_t Off = 0, Size = 0;
    CUresult R = cuFuncGetParamInfo(F, I, &Off, &Size);
    if (I == L.Params.size())
      return R == CUDA_SUCCESS ? "it has more than the captured " + std::to_string(L.Params.size()) + " parameters" : "";
    if (R != CUDA_SUCCESS)
      return R == CUDA_ERROR_INVALID_VALUE ? "it has " + std::to_string(I) + " parameters, the capture " +
                                                 std::to_string(L.Params.size())
                                           : ""; // layout unavailable: nothing to compare
    if (Off != L.Params[I].Offset || Size != L.Params[I].Size)
      return "parameter " + std::to_string(I) + " is at offset " + std::to_string(Off) + " size " +
             std::to_string(Size) + ", captured at offset " + std::to_string(L.Params[I].Offset) + " size " +
             std::to_string(L.Params[I].Size);
  }
  return "";
}

void Replayer::loadKernels(std::vector<Prepared> &Ps, const std::string &Cubin, const std::string &CandidateCubin) {
  auto Start = std::chrono::steady_clock::now();
  const std::string *Paths[2] = {&Cubin, &CandidateCubin};
  for (int S = 0; S < 2; ++S) {
    for (Prepared &P : Ps)
      P.Fn[S] = nullptr;
    if (Paths[S]->empty())
      continue;
    CUmodule &Mod = Modules[*Paths[S]];
    if (!Mod) {
      std::string Image, Error;
      if (!readFile(*Paths[S], Image, Error))
        throw CudaError(Error);
      CUresult R = cuModuleLoadData(&Mod, Image.data());
      if (R != CUDA_SUCCESS) {
        Mod = nullptr;
        throw CudaError(*Paths[S] + ": cuModuleLoadData: " + cuText(R));
      }
    }
    for (Prepared &P : Ps) {
      const Dims &D = P.Config[S];
      CUresult R = cuModuleGetFunction(&P.Fn[S], Mod, D.Kernel.c_str());
      if (R != CUDA_SUCCESS)
        throw CudaError(*Paths[S] + ": kernel " + D.Kernel + " (" + P.L->Name + ") not found: " + cuText(R));
      std::string Diff = layoutDifference(P.Fn[S], *P.L);
      if (!Diff.empty())
        throw CudaError(*Paths[S] + ": kernel " + D.Kernel + " does not take the captured parameters: " + Diff);
      if (D.Smem > 48 * 1024)
        check(cuFuncSetAttribute(P.Fn[S], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(D.Smem)),
              "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
    }
  }
  Split.Modules += nsSince(Start);
}

void Replayer::unloadModulesExcept(const std::string &Keep) {
  for (auto It = Modules.begin(); It != Modules.end();)
    if (It->first == Keep || !It->second) {
      ++It;
    } else {
      (void)cuModuleUnload(It->second);
      It = Modules.erase(It);
    }
}

uint8_t *Replayer::gotBuffer(size_t Bytes) {
  if (Bytes <= GotPinnedBytes)
    return GotPinned;
  GotPageable.resize(Bytes);
  return GotPageable.data();
}

#ifdef KLOOP_REPLAY_DEVICE_CHECK
/// DeviceCheck.cu compiled to PTX at build time (tools/kloop-replay/CMakeLists.txt).
const char DeviceCheckPtx[] =
#include "DeviceCheckPtx.inc"
    ;
#endif

void Replayer::prepareDevice(std::vector<Prepared> &Ps) {
  prepareHost(Ps);
  prepareDeviceCheck(Ps);
  prepareCopies(Ps);
  setSteadyDirty(Ps);
}

void Replayer::prepareHost(const std::vector<Prepared> &Ps) {
  check(cuStreamCreate(&Stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  check(cuEventCreate(&Start, CU_EVENT_DEFAULT), "cuEventCreate");
  check(cuEventCreate(&Stop, CU_EVENT_DEFAULT), "cuEventCreate");
  if (O.flushes()) {
    int L2 = 0;
    check(cuDeviceGetAttribute(&L2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, Dev), "cuDeviceGetAttribute(L2)");
    L2Bytes = static_cast<uint64_t>(L2);
    ScratchBytes = std::max<size_t>(2 * static_cast<size_t>(L2), size_t(32) << 20);
    check(cuMemAlloc(&Scratch, ScratchBytes), "cuMemAlloc of the L2 flush buffer");
    check(cuMemsetD32Async(Scratch, 0, ScratchBytes / 4, Stream), "cuMemsetD32Async (L2 flush buffer)");
    loadFlushKernel();
  }
  // The gate: without it the start event, recorded on an idle stream, fires at once and the interval
  // also holds the host's launch latency (the kernel reaches the GPU microseconds later). A host-mapped
  // word the stream waits on holds the events and the kernel back until all three are enqueued.
  void *Host = nullptr;
  // CUPTI's records time the kernel alone, so they need no gate (and its serial kernel tracing blocks a
  // launch behind a stream wait, which the gate would never release).
  if (O.Gate && !replay::CuptiTimer::active() && cuMemHostAlloc(&Host, sizeof(uint32_t), CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE) == CUDA_SUCCESS &&
      cuMemHostGetDevicePointer(&GateDev, Host, 0) == CUDA_SUCCESS) {
    GateHost = static_cast<volatile uint32_t *>(Host);
    *GateHost = 0;
    Gated = true;
  }
  // Pinned host copies restore and check at the copy engines' speed instead of through staging buffers;
  // a blob that cannot be pinned is still copied, only slower.
  for (auto &[Name, Blob] : BlobCache)
    if (!Blob->empty())
      (void)cuMemHostRegister(Blob->data(), Blob->size(), CU_MEMHOSTREGISTER_PORTABLE);
  size_t Largest = 0;
  std::vector<const std::vector<uint8_t> *> Inputs;
  for (const Prepared &P : Ps)
    for (const auto &Before : P.Before) {
      Largest = std::max(Largest, Before->size());
      Inputs.push_back(Before.get());
    }
  for (const replay::MappedRange &S : Slack)
    Largest = std::max<size_t>(Largest, S.Size);
  void *Pinned = nullptr;
  if (Largest && cuMemAllocHost(&Pinned, Largest) == CUDA_SUCCESS) {
    GotPinned = static_cast<uint8_t *>(Pinned);
    GotPinnedBytes = Largest;
  }
  // Device copies of the inputs turn each restore into device-to-device copies (HBM bandwidth instead
  // of the host link).
  DeviceInputs = deviceCopies(Inputs);
}

Replayer::DeviceBlobs Replayer::deviceCopies(const std::vector<const std::vector<uint8_t> *> &Blobs) {
  std::map<const std::vector<uint8_t> *, size_t> Distinct;
  size_t Bytes = 0;
  for (const std::vector<uint8_t> *B : Blobs)
    if (!B->empty() && Distinct.emplace(B, B->size()).second)
      Bytes += B->size();
  DeviceBlobs Out;
  size_t Free = 0, Total = 0;
  if (cuMemGetInfo(&Free, &Total) != CUDA_SUCCESS || Bytes > Free / 2)
    return Out;
  for (auto [Blob, Size] : Distinct) {
    CUdeviceptr D = 0;
    if (cuMemAlloc(&D, Size) != CUDA_SUCCESS || cuMemcpyHtoD(D, Blob->data(), Size) != CUDA_SUCCESS) {
      if (D)
        (void)cuMemFree(D);
      for (auto &[B, Ptr] : Out)
        (void)cuMemFree(Ptr);
      return {};
    }
    Out[Blob] = D;
  }
  return Out;
}

void Replayer::copyBefore(CUdeviceptr To, const std::vector<uint8_t> &Before) {
  if (auto It = DeviceInputs.find(&Before); It != DeviceInputs.end())
    check(cuMemcpyDtoDAsync(To, It->second, Before.size(), Stream), "cuMemcpyDtoDAsync (restore)");
  else
    check(cuMemcpyHtoDAsync(To, Before.data(), Before.size(), Stream), "cuMemcpyHtoDAsync (restore)");
}

void Replayer::restore(const Prepared &P, int Side, bool Poison, uint32_t At) {
  auto Began = std::chrono::steady_clock::now();
  const std::vector<CUdeviceptr> &Bases = basesAt(P, At);
  for (size_t I = 0; I < Bases.size(); ++I) {
    if (Poison && P.Poisoned[I])
      check(cuMemsetD8Async(Bases[I], 0xFF, P.Before[I]->size(), Stream), "cuMemsetD8Async (poison)");
    else
      copyBefore(Bases[I], *P.Before[I]);
  }
  for (const replay::MappedRange &S : Slack)
    if (CUdeviceptr D = slackAt(S, At))
      check(cuMemsetD8Async(D, SlackByte, S.Size, Stream), "cuMemsetD8Async (slack)");
  std::vector<uint32_t> Before = replay::placementsBefore(At, P.Others, P.placements());
  restoreOthers(P, Before);
  if (O.flushes())
    flushL2(P);
  if (!Before.empty() && !O.BackToBack)
    launchOthers(P, Side, Before, /*Wait=*/true);
  check(cuStreamSynchronize(Stream), "cuStreamSynchronize after restoring inputs");
  Split.Restore += nsSince(Began);
}

std::string Replayer::storedPointer(const std::vector<Prepared> &Ps) const {
  std::vector<capture::AddressRange> All = capturedRanges(Ps);
  // Before a launch: a copy would read the original's data through it. After: the launch wrote an address
  // of its own allocations, which a copy writes as another address than the captured reference holds.
  for (bool After : {false, true})
    for (const Prepared &P : Ps)
      for (size_t I = 0; I < P.Before.size(); ++I) {
        const std::vector<uint8_t> &Bytes = After ? *P.After[I] : *P.Before[I];
        std::optional<uint64_t> At = replay::firstStoredPointer(Bytes.data(), Bytes.size(), All);
        if (!At)
          continue;
        char Base[24];
        std::snprintf(Base, sizeof(Base), "0x%llx", static_cast<unsigned long long>(P.L->Allocations[I].Base));
        return "allocation " + std::to_string(I) + " of launch " + std::to_string(P.Index) + " (captured address " +
               Base + ")" + (After ? " holds after the launch" : " holds") +
               " a pointer into a captured allocation at byte " + std::to_string(*At) +
               (After ? ": at other addresses the launch would write other pointers than the captured reference"
                      : ": copies at other addresses would use the original's data");
      }
  return "";
}

std::string Replayer::allocateSets(const std::vector<uint32_t> &PerRange, uint64_t Seed) {
  if (PerRange.empty())
    return ""; // no launch points into device memory: the copies are their parameter buffers alone
  uint32_t Sets = *std::max_element(PerRange.begin(), PerRange.end());
  PadBytes.resize(1);
  uint64_t Bytes = 0;
  for (uint32_t Set = 0; Set < Sets; ++Set)
    Bytes += PadBytes.emplace_back(capture::placementPadBytes(PadMiB, placementKey(Seed, Set + 1)));
  for (size_t I = 0; I < Ranges.size(); ++I)
    Bytes += PerRange[I] * Ranges[I].Size;
  size_t Free = 0, Total = 0;
  constexpr uint64_t MiB = 1 << 20;
  if (cuMemGetInfo(&Free, &Total) != CUDA_SUCCESS || Bytes > Free / 2)
    return "the copies at other addresses (" + std::to_string(Bytes / MiB) +
           " MiB with their pads) do not fit in half the free device memory (" + std::to_string(Free / MiB) + " MiB)";
  SetRanges.assign(Sets, std::vector<CUdeviceptr>(Ranges.size(), 0));
  SetPads.assign(Sets, 0);
  for (size_t Set = 0; Set < Sets; ++Set) {
    if (PadBytes[Set + 1] && cuMemAlloc(&SetPads[Set], PadBytes[Set + 1]) != CUDA_SUCCESS) {
      freeSets();
      return "cuMemAlloc of a copy's " + std::to_string(PadBytes[Set + 1] >> 20) + " MiB pad failed";
    }
    for (size_t I = 0; I < Ranges.size(); ++I)
      if (Set < PerRange[I] && cuMemAlloc(&SetRanges[Set][I], Ranges[I].Size) != CUDA_SUCCESS) {
        freeSets();
        return "cuMemAlloc of a copy's " + std::to_string(Ranges[I].Size) + " bytes failed";
      }
  }
  CopyCounts = PerRange;
  CopySeed = Seed;
  return "";
}

void Replayer::freeSets() {
  for (std::vector<CUdeviceptr> &Set : SetRanges)
    for (CUdeviceptr D : Set)
      if (D)
        (void)cuMemFree(D);
  for (CUdeviceptr D : SetPads)
    if (D)
      (void)cuMemFree(D);
  SetRanges.clear();
  SetPads.clear();
  PadBytes.resize(1);
}

std::string Replayer::redrawCopies(std::vector<Prepared> &Ps, uint64_t Seed) {
  if (SetRanges.empty() || !capture::placementPadChoices(PadMiB) || Seed == CopySeed)
    return "";
  std::vector<uint32_t> Counts = CopyCounts;
  uint64_t Old = CopySeed;
  freeSets();
  std::string Why = allocateSets(Counts, Seed);
  if (!Why.empty() && !allocateSets(Counts, Old).empty())
    throw CudaError("placement_seed " + std::to_string(Seed) + ": " + Why +
                    "; the previous placements could not be allocated again either");
  for (Prepared &P : Ps) {
    P.SetParams.clear();
    P.SetBases.clear();
  }
  setCopyParams(Ps);
  return Why.empty() ? "" : "placement_seed " + std::to_string(Seed) + ": " + Why + "; timed at seed " +
                                std::to_string(Old) + "'s placements";
}

std::vector<uint32_t> Replayer::copiesPerRange(const std::vector<Prepared> &Ps, const std::vector<uint32_t> &Others,
                                               uint32_t MinCopies) const {
  std::vector<uint32_t> PerRange(Ranges.size(), 0);
  for (size_t N = 0; N < Ps.size(); ++N)
    for (const capture::Allocation &A : Ps[N].L->Allocations)
      if (std::optional<size_t> I = rangeOf(A.Base))
        PerRange[*I] = std::max({PerRange[*I], Others[N], MinCopies});
  return PerRange;
}

CUdeviceptr Replayer::inSet(uint64_t Addr, size_t Set) const {
  std::optional<size_t> I = rangeOf(Addr);
  return I ? SetRanges[Set][*I] + (Addr - Ranges[*I].Start) : static_cast<CUdeviceptr>(Addr);
}

CUdeviceptr Replayer::slackAt(const replay::MappedRange &S, uint32_t At) const {
  if (!At)
    return static_cast<CUdeviceptr>(translate(S.Start));
  std::optional<size_t> I = rangeOf(S.Start);
  return I && SetRanges[At - 1][*I] ? inSet(S.Start, At - 1) : 0;
}

void Replayer::prepareCopies(std::vector<Prepared> &Ps) {
  bool Rotate = L2 == "rotate-sets";
  if (!Rotate && O.Placements < 2)
    return;
  std::vector<uint32_t> Others;
  for (const Prepared &P : Ps)
    Others.push_back(Rotate ? replay::rotationSets(allocationBytes(*P.L, false), L2Bytes, MaxOtherSets) : 0);
  std::string Stored = storedPointer(Ps);
  std::string Why = !Stored.empty() ? Stored : allocateSets(copiesPerRange(Ps, Others, O.Placements - 1), O.PlacementSeed);
  if (!Why.empty() && Stored.empty() && capture::placementPadChoices(PadMiB)) { // without the pads they may fit
    PadNote = "placement pads: " + Why + "; the copies are allocated back to back";
    PadMiB = 0;
    Why = allocateSets(copiesPerRange(Ps, Others, O.Placements - 1), O.PlacementSeed);
  }
  if (Why.empty()) {
    Placements = O.Placements;
  } else {
    if (O.Placements > 1)
      PlacementNote = "placements: " + Why + "; timed at the captured addresses only";
    if (Rotate && Stored.empty() && O.Placements > 1) // the rotation's copies alone may fit
      Why = allocateSets(copiesPerRange(Ps, Others, 0), O.PlacementSeed);
    if (Rotate && !Why.empty()) {
      L2 = "rotate";
      L2Note = "rotate-sets: " + Why + "; timed from the rotate model instead";
    }
    if (!Why.empty())
      return;
  }
  for (size_t N = 0; N < Ps.size(); ++N)
    Ps[N].Others = Others[N];
  setCopyParams(Ps);
}

void Replayer::setCopyParams(std::vector<Prepared> &Ps) const {
  for (Prepared &P : Ps) {
    for (size_t Set = 0; Set < std::max(P.Others, Placements - 1); ++Set) {
      std::vector<uint8_t> &Params = P.SetParams.emplace_back(P.Params);
      for (const capture::PointerWord &W : P.L->Pointers) {
        uint64_t V = inSet(W.Value, Set);
        std::memcpy(Params.data() + W.Offset, &V, 8);
      }
      std::vector<CUdeviceptr> &Bases = P.SetBases.emplace_back();
      for (size_t I = 0; I < P.L->Allocations.size(); ++I)
        Bases.push_back(inSet(P.L->Allocations[I].Base, Set));
    }
  }
}

void Replayer::restoreOthers(const Prepared &P, const std::vector<uint32_t> &Before) {
  // Every allocation but the write-only ones, before each timed launch: a launch that accumulates
  // cannot run away, a wrong candidate's writes at a placement do not reach the baseline's next launches
  // there (the placements serve both sides), and launches that share an allocation each start from their
  // own captured contents. Before the flush, so that these copies' lines leave L2 first.
  for (uint32_t At : Before) {
    const std::vector<CUdeviceptr> &Bases = basesAt(P, At);
    for (size_t I = 0; I < Bases.size(); ++I)
      if (!P.Poisoned[I])
        copyBefore(Bases[I], *P.Before[I]);
  }
}

std::vector<uint32_t> Replayer::backToBack(const Prepared &P, uint32_t At) const {
  std::vector<uint32_t> Before = replay::placementsBefore(At, P.Others, P.placements());
  return O.Train ? replay::trainPlacements(Before, O.Train) : Before;
}

void Replayer::launchOthers(const Prepared &P, int Side, const std::vector<uint32_t> &Before, bool Wait) {
  const char *SideName = Side == 0 ? "baseline" : "candidate";
  CUlaunchAttribute Attrs[2] = {};
  CUlaunchConfig C = launchConfig(P, Side, Attrs);
  for (uint32_t At : Before) {
    std::vector<void *> Args = argsOf(P, paramsAt(P, At));
    CUresult R = cuLaunchKernelEx(&C, P.Fn[Side], Args.empty() ? nullptr : Args.data(), nullptr);
    if (R != CUDA_SUCCESS)
      throw LaunchFailure{SideName, "the launch on another buffer set failed: " + cuText(R), false};
    if (!Wait)
      continue;
    check(cuEventRecord(Stop, Stream), "cuEventRecord");
    waitFor(Stop, SideName);
  }
  // Their kernel records are not the timed launch's: a timed launch without its own record is then
  // counted missing and timed by its events instead of taking one of theirs. Queued back to back, they
  // complete with the timed launch, whose record durationOf tells apart as the latest to start.
  if (Wait)
    replay::CuptiTimer::discard();
}

void Replayer::prepareDeviceCheck(const std::vector<Prepared> &Ps) {
#ifdef KLOOP_REPLAY_DEVICE_CHECK
  if (O.HostCheck)
    return;
  // The references in device memory (after the inputs' copies, so that those keep their room); when
  // they are not all there, or the kernel does not load, every check stays on the host, as before.
  std::vector<const std::vector<uint8_t> *> Refs;
  for (const Prepared &P : Ps)
    for (const auto &After : P.After)
      if (!After->empty())
        Refs.push_back(After.get());
  DeviceRefs = deviceCopies(Refs);
  CUmodule Module = utilityModule();
  if (DeviceRefs.empty() != Refs.empty() || !Module ||
      cuModuleGetFunction(&CheckFn, Module, "kloop_replay_differs") != CUDA_SUCCESS ||
      cuMemAlloc(&CheckFlag, sizeof(unsigned)) != CUDA_SUCCESS) {
    for (auto &[B, Ptr] : DeviceRefs)
      (void)cuMemFree(Ptr);
    DeviceRefs.clear();
    return;
  }
  DeviceCheck = true;
#else
  (void)Ps;
#endif
}

CUmodule Replayer::utilityModule() {
#ifdef KLOOP_REPLAY_DEVICE_CHECK
  if (!UtilityModule && cuModuleLoadData(&UtilityModule, DeviceCheckPtx) != CUDA_SUCCESS)
    UtilityModule = nullptr;
#endif
  return UtilityModule;
}

void Replayer::loadFlushKernel() {
  CUmodule Module = utilityModule();
  if (!Module || cuModuleGetFunction(&FlushFn, Module, "kloop_replay_l2_flush") != CUDA_SUCCESS ||
      cuMemAlloc(&FlushSink, sizeof(unsigned)) != CUDA_SUCCESS)
    FlushFn = nullptr;
}

void Replayer::flushL2(const Prepared &P) {
  ++Flushes;
  if (!flushReads()) {
    check(cuMemsetD32Async(Scratch, Flushes, ScratchBytes / 4, Stream), "cuMemsetD32Async (L2 flush)");
    return;
  }
  CUdeviceptr Buffer = Scratch;
  unsigned long long Words = ScratchBytes / 16;
  void *Args[] = {&Buffer, &Words, &FlushSink};
  check(cuLaunchKernel(FlushFn, 1024, 1, 1, 256, 1, 1, 0, Stream, Args, nullptr), "cuLaunchKernel (L2 flush)");
  // The flush read Scratch from its start, so its first bytes left L2 first: writing them now makes lines
  // that stay in L2 dirty until the timed launch evicts them.
  if (dirtiesAfterFlush(L2) && P.SteadyDirtyBytes >= 4)
    check(cuMemsetD32Async(Scratch, Flushes, std::min<uint64_t>(P.SteadyDirtyBytes, ScratchBytes) / 4, Stream),
          "cuMemsetD32Async (steady L2)");
}

void Replayer::setSteadyDirty(std::vector<Prepared> &Ps) const {
  for (Prepared &P : Ps) {
    uint64_t Written = allocationBytes(*P.L, true), Footprint = allocationBytes(*P.L, false);
    P.SteadyDirtyBytes = !dirtiesAfterFlush(L2)    ? 0
                         : O.SteadyDirtyBytes >= 0 ? static_cast<uint64_t>(O.SteadyDirtyBytes)
                         : L2 == "rotate"          ? replay::rotateDirtyBytes(Written, Footprint, L2Bytes)
                                                   : replay::steadyDirtyBytes(Written, Footprint, L2Bytes);
  }
}

bool Replayer::mayDiffer(CUdeviceptr Got, CUdeviceptr Ref, size_t Bytes, const replay::Tolerance &T, uint8_t Fill) {
  if (!DeviceCheck)
    return true;
  if (Bytes == 0)
    return false;
  unsigned long long Size = Bytes;
  int Kind = static_cast<int>(T.K), ElementBytes = static_cast<int>(T.ElementBytes);
  double Value = T.Value;
  unsigned FillWord = Fill;
  unsigned Zero = 0, Differs = 1;
  void *Args[] = {&Got, &Ref, &Size, &Kind, &Value, &ElementBytes, &FillWord, &CheckFlag};
  // Enough blocks to stream the buffer at full bandwidth; each thread strides over the rest.
  unsigned Blocks = static_cast<unsigned>(std::min<unsigned long long>(1024, (Size + 8191) / 8192 + 1));
  if (cuMemcpyHtoDAsync(CheckFlag, &Zero, sizeof(Zero), Stream) != CUDA_SUCCESS ||
      cuLaunchKernel(CheckFn, Blocks, 1, 1, 256, 1, 1, 0, Stream, Args, nullptr) != CUDA_SUCCESS ||
      cuMemcpyDtoHAsync(&Differs, CheckFlag, sizeof(Differs), Stream) != CUDA_SUCCESS ||
      cuStreamSynchronize(Stream) != CUDA_SUCCESS)
    return true; // the host check decides
  return Differs != 0;
}

void Replayer::waitFor(CUevent E, const std::string &Side) {
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(O.TimeoutMs);
  for (;;) {
    CUresult R = cuEventQuery(E);
    if (R == CUDA_SUCCESS)
      return;
    if (R != CUDA_ERROR_NOT_READY)
      throw LaunchFailure{Side, "the kernel faulted: " + cuText(R), false};
    if (std::chrono::steady_clock::now() > Deadline)
      throw LaunchFailure{Side, "the kernel did not finish within " + std::to_string(O.TimeoutMs) + " ms", true};
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

std::string Replayer::compare(const Prepared &P, uint32_t At) {
  LastMismatchAllocation = -1;
  auto Began = std::chrono::steady_clock::now();
  struct AddTime {
    uint64_t &To;
    std::chrono::steady_clock::time_point Began;
    ~AddTime() { To += nsSince(Began); }
  } Add{Split.Check, Began};
  const std::vector<CUdeviceptr> &Bases = basesAt(P, At);
  for (size_t I = 0; I < Bases.size(); ++I) {
    const capture::Allocation &A = P.L->Allocations[I];
    // An allocation the launch did not change must stay bit-identical, whatever the tolerance.
    replay::Tolerance T = A.written() ? O.Tol : replay::Tolerance();
    auto Ref = DeviceRefs.find(P.After[I].get());
    if (Ref != DeviceRefs.end() && !mayDiffer(Bases[I], Ref->second, A.Bytes, T, 0))
      continue;
    uint8_t *Got = gotBuffer(A.Bytes);
    check(cuMemcpyDtoH(Got, Bases[I], A.Bytes), "cuMemcpyDtoH (check)");
    if (std::optional<std::string> D = replay::firstMismatch(P.After[I]->data(), Got, A.Bytes, T)) {
      char Where[96];
      std::snprintf(Where, sizeof(Where), " allocation %zu (%llu bytes at captured address 0x%llx) ", I,
                    static_cast<unsigned long long>(A.Bytes), static_cast<unsigned long long>(A.Base));
      LastMismatchAllocation = static_cast<long>(I);
      return (A.written() ? "output" : "unwritten") + std::string(Where) + *D;
    }
  }
  // Bytes mapped only because of the granularity: a write there is a write past an allocation's end.
  for (const replay::MappedRange &S : Slack) {
    CUdeviceptr D = slackAt(S, At);
    if (!D || !mayDiffer(D, 0, S.Size, replay::Tolerance(), SlackByte))
      continue;
    uint8_t *Got = gotBuffer(S.Size);
    check(cuMemcpyDtoH(Got, D, S.Size), "cuMemcpyDtoH (slack)");
    for (size_t I = 0; I < S.Size; ++I)
      if (Got[I] != SlackByte) {
        char Where[128];
        std::snprintf(Where, sizeof(Where), "a write outside every captured allocation, at captured address 0x%llx",
                      static_cast<unsigned long long>(S.Start + I));
        return Where;
      }
  }
  return "";
}

CUlaunchConfig Replayer::launchConfig(const Prepared &P, int Side, CUlaunchAttribute (&Attrs)[2]) const {
  const capture::Launch &L = *P.L;
  unsigned NumAttrs = 0;
  if (L.Cooperative) {
    Attrs[NumAttrs].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
    Attrs[NumAttrs++].value.cooperative = 1;
  }
  if (L.Cluster[0]) {
    Attrs[NumAttrs].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    Attrs[NumAttrs].value.clusterDim.x = L.Cluster[0];
    Attrs[NumAttrs].value.clusterDim.y = std::max(L.Cluster[1], 1u);
    Attrs[NumAttrs++].value.clusterDim.z = std::max(L.Cluster[2], 1u);
  }
  CUlaunchConfig C = {};
  const Dims &D = P.Config[Side];
  C.gridDimX = D.Grid[0], C.gridDimY = D.Grid[1], C.gridDimZ = D.Grid[2];
  C.blockDimX = D.Block[0], C.blockDimY = D.Block[1], C.blockDimZ = D.Block[2];
  C.sharedMemBytes = static_cast<unsigned>(D.Smem);
  C.hStream = Stream;
  C.attrs = NumAttrs ? Attrs : nullptr;
  C.numAttrs = NumAttrs;
  return C;
}

uint64_t Replayer::timedNs(const std::string &Kernel) {
  if (replay::CuptiTimer::active()) {
    if (std::optional<uint64_t> Ns = replay::CuptiTimer::durationOf(Kernel))
      return *Ns;
    ++CuptiMissing;
  }
  float Ms = 0;
  check(cuEventElapsedTime(&Ms, Start, Stop), "cuEventElapsedTime");
  return static_cast<uint64_t>(static_cast<double>(Ms) * 1e6 + 0.5);
}

uint64_t Replayer::runOnce(Prepared &P, int Side, std::string &Mismatch, bool Poison, uint32_t At) {
  const char *SideName = Side == 0 ? "baseline" : "candidate";
  std::vector<void *> Args = argsOf(P, paramsAt(P, At));
  CUlaunchAttribute Attrs[2] = {};
  CUlaunchConfig C = launchConfig(P, Side, Attrs);
  if (O.Prime) { // an untimed launch of the same kernel first, as in a program that launches it back to back
    CUresult R = cuLaunchKernelEx(&C, P.Fn[Side], Args.empty() ? nullptr : Args.data(), nullptr);
    if (R != CUDA_SUCCESS)
      throw LaunchFailure{SideName, "the launch failed: " + cuText(R), false};
    check(cuEventRecord(Stop, Stream), "cuEventRecord");
    waitFor(Stop, SideName);
  }
  restore(P, Side, Poison, At);
  auto Began = std::chrono::steady_clock::now();
  if (Gated && cuStreamWaitValue32(Stream, GateDev, GateValue + 1, CU_STREAM_WAIT_VALUE_GEQ) != CUDA_SUCCESS)
    Gated = false; // the driver refuses stream waits: time without the gate from now on (the result says so)
  // Released on every way out, so that an error cannot leave the stream waiting: the stream then runs the
  // start event, the kernel and the stop event back to back.
  struct GateRelease {
    Replayer &R;
    bool Held;
    ~GateRelease() { release(); }
    void release() {
      if (Held)
        *R.GateHost = ++R.GateValue;
      Held = false;
    }
  } Gate{*this, Gated};
  if (O.BackToBack) // behind the gate too: the stream runs them and the timed launch without a gap
    launchOthers(P, Side, backToBack(P, At), /*Wait=*/false);
  check(cuEventRecord(Start, Stream), "cuEventRecord");
  CUresult R = cuLaunchKernelEx(&C, P.Fn[Side], Args.empty() ? nullptr : Args.data(), nullptr);
  if (R != CUDA_SUCCESS)
    throw LaunchFailure{SideName, "the launch failed: " + cuText(R), false};
  CUresult Recorded = cuEventRecord(Stop, Stream);
  Gate.release();
  check(Recorded, "cuEventRecord");
  waitFor(Stop, SideName);
  Split.Timed += nsSince(Began);
  uint64_t Ns = timedNs(P.Config[Side].Kernel);
  Mismatch = compare(P, At);
  return Ns;
}

void Replayer::classifyPoison(Prepared &P) {
  // A written allocation is write-only when the baseline still reproduces the reference with it poisoned
  // (0xFF bytes, NaN in f32/f64) before the launch; a read-write one (C in C = aAB + bC) is not poisoned.
  std::string Mismatch;
  for (size_t I = 0; I < P.Poisoned.size(); ++I) {
    if (!P.L->Allocations[I].written())
      continue;
    P.Poisoned[I] = true;
    runOnce(P, 0, Mismatch);
    P.Poisoned[I] = Mismatch.empty();
  }
}

/// One side of \p P's result; with \p Placed (several placements), the placement of each time.
json timesJSON(const Prepared &P, int Side, bool Placed) {
  json J;
  const Dims &D = P.Config[Side];
  J["grid"] = {D.Grid[0], D.Grid[1], D.Grid[2]};
  J["block"] = {D.Block[0], D.Block[1], D.Block[2]};
  J["shared_memory"] = D.Smem;
  if (D.Kernel != P.L->Kernel)
    J["kernel"] = D.Kernel;
  J["times_ns"] = P.TimesNs[Side];
  if (Placed)
    J["placements"] = P.PlacementOf[Side];
  J["median_ns"] = replay::median(P.TimesNs[Side]);
  J["match"] = P.Checked[Side] && P.Mismatch[Side].empty();
  J["mismatch"] = P.Mismatch[Side].empty() ? json(nullptr) : json(P.Mismatch[Side]);
  J["mismatch_allocation"] = P.MismatchAllocation[Side] < 0 ? json(nullptr) : json(P.MismatchAllocation[Side]);
  return J;
}

json resultJSON(const Options &O, const Replayer *R, const std::vector<Prepared> &Ps, const std::string &Error,
                const std::string &FailedSide, bool TimedOut) {
  json J;
  J["schema"] = "kloop-replay/1";
  J["capture"] = O.Capture;
  J["cubin"] = O.Cubin;
  J["candidate_cubin"] = O.CandidateCubin.empty() ? json(nullptr) : json(O.CandidateCubin);
  J["device"] = R ? R->DeviceName : "";
  J["iters"] = O.Iters;
  J["l2"] = R ? R->L2 : O.L2;
  if (R && !R->L2Note.empty())
    J["l2_note"] = R->L2Note;
  J["l2_flush"] = !O.flushes() ? "none" : R && R->flushReads() ? "read" : "write";
  const bool BackToBack = O.BackToBack && R && R->L2 == "rotate-sets";
  J["back_to_back"] = BackToBack;
  if (BackToBack && O.Train)
    J["train"] = O.Train;
  J["placements"] = R ? R->Placements : 1;
  if (R && !R->PlacementNote.empty())
    J["placement_note"] = R->PlacementNote;
  if (R && capture::placementPadChoices(R->PadMiB)) {
    J["placement_seed"] = R->CopySeed;
    json Pads = json::array();
    for (uint32_t At = 0; At < R->Placements && At < R->PadBytes.size(); ++At)
      Pads.push_back(R->PadBytes[At] >> 20);
    J["placement_pads_mib"] = std::move(Pads);
  }
  if (R && !R->PadNote.empty())
    J["placement_pad_note"] = R->PadNote;
  J["tolerance"] = replay::toleranceText(O.Tol);
  J["relocated"] = R && R->Relocated;
  J["checked_on"] = R && R->DeviceCheck ? "device" : "host";
  json Launches = json::array();
  bool BaseOk = !Ps.empty(), CandOk = !Ps.empty();
  for (const Prepared &P : Ps) {
    json L;
    L["index"] = P.Index;
    L["seq"] = P.L->Seq;
    L["kernel"] = P.L->Kernel;
    L["name"] = P.L->Name;
    std::vector<size_t> Poisoned;
    for (size_t I = 0; I < P.Poisoned.size(); ++I)
      if (P.Poisoned[I])
        Poisoned.push_back(I);
    L["poisoned"] = Poisoned;
    if (dirtiesAfterFlush(R ? R->L2 : O.L2))
      L["l2_dirty_bytes"] = P.SteadyDirtyBytes;
    if (R && R->L2 == "rotate-sets")
      L["l2_sets"] = P.Others;
    bool Placed = R && R->Placements > 1;
    L["baseline"] = timesJSON(P, 0, Placed);
    BaseOk &= P.Checked[0] && P.Mismatch[0].empty();
    if (!O.CandidateCubin.empty()) {
      L["candidate"] = timesJSON(P, 1, Placed);
      CandOk &= P.Checked[1] && P.Mismatch[1].empty();
    }
    Launches.push_back(std::move(L));
  }
  J["launches"] = std::move(Launches);
  J["baseline_match"] = BaseOk && FailedSide != "baseline";
  J["candidate_match"] = O.CandidateCubin.empty() ? json(nullptr) : json(CandOk && Error.empty());
  J["failed"] = FailedSide.empty() ? json(nullptr) : json(FailedSide);
  J["timed_out"] = TimedOut;
  J["error"] = Error.empty() ? json(nullptr) : json(Error);
  return J;
}

/// Prints \p J on stdout: indented for the single-shot run, one line per reply when serving.
int finish(const json &J, int Code, bool OneLine = false) {
  std::string Text = (OneLine ? J.dump() : J.dump(1)) + "\n";
  std::fwrite(Text.data(), 1, Text.size(), stdout);
  std::fflush(stdout);
  return Code;
}

/// Exit code for the checks of \p Ps: baseline mismatches first (the capture does not replay), then
/// candidate ones.
int verdict(const std::vector<Prepared> &Ps, bool HaveCandidate) {
  for (const Prepared &P : Ps)
    if (!P.Mismatch[0].empty())
      return ExitBaseline;
  for (const Prepared &P : Ps)
    if (HaveCandidate && !P.Mismatch[1].empty())
      return ExitCandidate;
  return ExitMatch;
}

/// Replays every prepared launch: first the baseline alone (it must reproduce the capture, else stop),
/// then the poison classification, then the timed iterations, baseline and candidate alternating in
/// order from one iteration to the next.
void replayAll(Replayer &R, std::vector<Prepared> &Ps, const Options &O) {
  for (Prepared &P : Ps) {
    for (int S = 0; S < 2; ++S) {
      P.TimesNs[S].clear();
      P.PlacementOf[S].clear();
      P.Mismatch[S].clear();
      P.MismatchAllocation[S] = -1;
      P.Checked[S] = false;
    }
    P.Poisoned.assign(P.L->Allocations.size(), false);
  }
  bool HaveCandidate = !O.CandidateCubin.empty();
  for (Prepared &P : Ps) {
    R.runOnce(P, 0, P.Mismatch[0]);
    P.MismatchAllocation[0] = R.LastMismatchAllocation;
    P.Checked[0] = true;
  }
  if (verdict(Ps, false) != ExitMatch)
    return;
  if (O.Poison)
    for (Prepared &P : Ps)
      R.classifyPoison(P);
  for (unsigned It = 0; It < O.Iters; ++It)
    for (Prepared &P : Ps)
      for (int K = 0; K < (HaveCandidate ? 2 : 1); ++K) {
        int Side = HaveCandidate ? (K + static_cast<int>(It)) % 2 : 0;
        // Both sides of an iteration run at one placement, the next iteration at the next one.
        uint32_t At = It % R.Placements;
        std::string Mismatch;
        P.TimesNs[Side].push_back(R.runOnce(P, Side, Mismatch, true, At));
        P.PlacementOf[Side].push_back(At);
        P.Checked[Side] = true;
        if (P.Mismatch[Side].empty() && !Mismatch.empty()) {
          P.Mismatch[Side] = "iteration " + std::to_string(It) + (At ? " (placement " + std::to_string(At) + ")" : "") +
                             ": " + Mismatch;
          P.MismatchAllocation[Side] = R.LastMismatchAllocation;
        }
      }
}

/// The outcome of one replay of \p Ps with the cubins and iterations of \p O: the kloop-replay/1 JSON
/// and the exit code. \p Lost: the launch failed, faulted or hung and the context cannot be used again.
json replayRequest(Replayer &R, std::vector<Prepared> &Ps, const Options &O, int &Code, bool &Lost) {
  auto Began = std::chrono::steady_clock::now();
  R.Split = TimeSplit();
  json J;
  Lost = false;
  for (Prepared &P : Ps)
    for (int S = 0; S < 2; ++S) {
      auto It = O.Configs.find({P.Index, S});
      P.Config[S] = It == O.Configs.end() ? capturedDims(*P.L) : It->second;
      if (P.Config[S].Kernel.empty())
        P.Config[S].Kernel = P.L->Kernel; // the request named no other kernel
    }
  try {
    R.loadKernels(Ps, O.Cubin, O.CandidateCubin);
    replayAll(R, Ps, O);
    Code = verdict(Ps, !O.CandidateCubin.empty());
    J = resultJSON(O, &R, Ps, "", "", false);
    if (Code == ExitBaseline)
      J["error"] = "the baseline does not reproduce the captured reference: the capture is not replayable as it is "
                   "(globals the program set, pointers stored in device memory that were relocated, or a kernel "
                   "that is not deterministic; docs/capture.md)";
  } catch (const CudaError &E) {
    Code = ExitUsage;
    J = resultJSON(O, &R, Ps, E.what(), "", false);
  } catch (const LaunchFailure &F) {
    Code = F.Side == "baseline" ? ExitBaseline : ExitCandidate;
    Lost = true;
    J = resultJSON(O, &R, Ps, F.Side + ": " + F.Message, F.Side, F.TimedOut);
  }
  J["gated"] = R.Gated;
  J["timer"] = R.timer();
  if (!R.TimerNote.empty())
    J["timer_note"] = R.TimerNote;
  if (R.CuptiMissing)
    J["cupti_missing"] = R.CuptiMissing;
  J["time_ns"] = {{"modules", R.Split.Modules}, {"restore", R.Split.Restore}, {"timed", R.Split.Timed},
                  {"check", R.Split.Check}, {"total", nsSince(Began)}};
  return J;
}

/// Three dimensions, each in 1..2^31-1, from \p J into \p Out.
bool parseDim(const json &J, uint32_t (&Out)[3]) {
  if (!J.is_array() || J.size() != 3)
    return false;
  for (size_t I = 0; I < 3; ++I) {
    if (!J[I].is_number_unsigned() || J[I].get<uint64_t>() == 0 || J[I].get<uint64_t>() > 0x7fffffffu)
      return false;
    Out[I] = J[I].get<uint32_t>();
  }
  return true;
}

/// A request's "configs": [{"launch": index, "side": "baseline"|"candidate", "grid": [x, y, z], "block": [x, y,
/// z], "shared_memory": bytes}]; false with \p Error naming the entry.
bool parseConfigs(const json &J, std::map<std::pair<size_t, int>, Dims> &Out, std::string &Error) {
  if (!J.is_array()) {
    Error = "request: configs: expected an array";
    return false;
  }
  for (size_t I = 0; I < J.size(); ++I) {
    const json &C = J[I];
    std::string At = "request: configs[" + std::to_string(I) + "]: ";
    Dims D;
    bool Kernel = C.is_object() && C.contains("kernel");
    if (!C.is_object() || C.size() != (Kernel ? 6u : 5u) || !C.contains("launch") || !C["launch"].is_number_unsigned() ||
        !C.contains("side") || !C["side"].is_string() ||
        (C["side"] != "baseline" && C["side"] != "candidate")) {
      Error = At + "expected {\"launch\": index, \"side\": \"baseline\" or \"candidate\", \"grid\", \"block\", "
                   "\"shared_memory\", and optionally \"kernel\"}";
      return false;
    }
    if (!C.contains("grid") || !parseDim(C["grid"], D.Grid) || !C.contains("block") || !parseDim(C["block"], D.Block)) {
      Error = At + "grid and block: expected three dimensions, each from 1 to 2^31-1";
      return false;
    }
    if (!C.contains("shared_memory") || !C["shared_memory"].is_number_unsigned() ||
        C["shared_memory"].get<uint64_t>() > 0xffffffffu) {
      Error = At + "shared_memory: expected a byte count below 2^32";
      return false;
    }
    D.Smem = C["shared_memory"].get<uint64_t>();
    if (Kernel && (!C["kernel"].is_string() || C["kernel"].get<std::string>().empty())) {
      Error = At + "kernel: expected a symbol";
      return false;
    }
    if (Kernel)
      D.Kernel = C["kernel"].get<std::string>();
    Out[{C["launch"].get<size_t>(), C["side"] == "baseline" ? 0 : 1}] = D;
  }
  return true;
}

/// A serve request line: {"cubin": FILE, "candidate_cubin": FILE or null, "iters": N >= 1, "configs": optional
/// (parseConfigs), "placement_seed": optional (the copies' pads drawn again; Replayer::redrawCopies)}; false with
/// \p Error naming what is wrong.
bool parseRequest(const std::string &Line, Options &Req, std::string &Error) {
  json J = json::parse(Line, nullptr, /*allow_exceptions=*/false);
  if (J.is_discarded() || !J.is_object()) {
    Error = "request: not a JSON object";
    return false;
  }
  for (auto It = J.begin(); It != J.end(); ++It)
    if (It.key() != "cubin" && It.key() != "candidate_cubin" && It.key() != "iters" && It.key() != "configs" &&
        It.key() != "placement_seed") {
      Error = "request: unknown member '" + It.key() + "'";
      return false;
    }
  if (!J.contains("cubin") || !J["cubin"].is_string() || J["cubin"].get<std::string>().empty()) {
    Error = "request: cubin: expected a file name";
    return false;
  }
  if (J.contains("candidate_cubin") && !J["candidate_cubin"].is_null() && !J["candidate_cubin"].is_string()) {
    Error = "request: candidate_cubin: expected a file name or null";
    return false;
  }
  if (!J.contains("iters") || !J["iters"].is_number_unsigned() || J["iters"].get<uint64_t>() == 0 ||
      J["iters"].get<uint64_t>() > (1u << 30)) {
    Error = "request: iters: expected a count >= 1";
    return false;
  }
  if (J.contains("configs") && !parseConfigs(J["configs"], Req.Configs, Error))
    return false;
  if (J.contains("placement_seed") && !J["placement_seed"].is_number_unsigned()) {
    Error = "request: placement_seed: expected an unsigned 64-bit integer";
    return false;
  }
  if (J.contains("placement_seed"))
    Req.RedrawSeed = J["placement_seed"].get<uint64_t>();
  Req.Cubin = J["cubin"].get<std::string>();
  Req.CandidateCubin = J.value("candidate_cubin", json()).is_string() ? J["candidate_cubin"].get<std::string>() : "";
  Req.Iters = J["iters"].get<unsigned>();
  return true;
}

/// --serve: the ready line, then one reply line per request line until stdin ends. A request the worker
/// cannot parse is answered with its error (exit 2); a launch that failed, faulted or hung ends the
/// process after its reply, since the context is lost or busy.
int serve(Replayer &R, std::vector<Prepared> &Ps, const Options &O, uint64_t LoadNs) {
  json Ready = {{"schema", "kloop-replay-serve/1"}, {"ready", true}, {"device", R.DeviceName},
                {"relocated", R.Relocated}, {"launches", Ps.size()}, {"gated", R.Gated},
                {"timer", R.timer()}, {"l2", R.L2}, {"placements", R.Placements}, {"time_ns", {{"load", LoadNs}}}};
  if (!R.L2Note.empty())
    Ready["l2_note"] = R.L2Note;
  if (!R.PlacementNote.empty())
    Ready["placement_note"] = R.PlacementNote;
  finish(Ready, 0, true);
  std::string Line;
  for (int C; (C = std::getchar()) != EOF;) {
    if (C != '\n') {
      Line.push_back(static_cast<char>(C));
      continue;
    }
    Options Req = O;
    std::string Error;
    int Code = ExitUsage;
    bool Lost = false;
    json J;
    bool Parsed = parseRequest(Line, Req, Error);
    for (const auto &[Key, D] : Req.Configs)
      if (Parsed && std::none_of(Ps.begin(), Ps.end(), [&](const Prepared &P) { return P.Index == Key.first; })) {
        Error = "request: configs: launch " + std::to_string(Key.first) + " is not one this worker replays";
        Parsed = false;
      }
    std::string Redrawn;
    if (Parsed && Req.RedrawSeed)
      try {
        Redrawn = R.redrawCopies(Ps, *Req.RedrawSeed);
      } catch (const CudaError &E) {
        Error = E.what();
        Parsed = false;
        Lost = true; // no copies left to time at
      }
    if (!Parsed)
      J = resultJSON(Req, &R, {}, Error, "", false);
    else
      J = replayRequest(R, Ps, Req, Code, Lost);
    if (!Redrawn.empty())
      J["placement_pad_note"] = Redrawn;
    if (!Lost)
      R.unloadModulesExcept(Req.Cubin);
    J["exit"] = Code;
    finish(J, Code, true);
    Line.clear();
    if (Lost)
      std::_Exit(Code);
  }
  return ExitMatch;
}

} // namespace

int main(int Argc, char **Argv) {
  Options O;
  std::string Error;
  if (!parseArgs(Argc, Argv, O, Error)) {
    std::fprintf(stderr, "kloop-replay: error: %s\n%s", Error.c_str(), Usage);
    return ExitUsage;
  }
  capture::Manifest M;
  std::vector<Prepared> Ps;
  if (!capture::readManifest(O.Capture, M, Error))
    return finish(resultJSON(O, nullptr, Ps, Error, "", false), ExitUsage, O.Serve);
  if (O.Launches.empty())
    for (size_t I = 0; I < M.Launches.size(); ++I)
      O.Launches.push_back(I);
  for (size_t I : O.Launches) {
    if (I >= M.Launches.size())
      return finish(resultJSON(O, nullptr, Ps, "--launch " + std::to_string(I) + ": the capture has " +
                                                  std::to_string(M.Launches.size()) + " launches",
                               "", false),
                    ExitUsage, O.Serve);
    Prepared P;
    P.Index = I;
    P.L = &M.Launches[I];
    Ps.push_back(std::move(P));
  }
  if (Ps.empty())
    return finish(resultJSON(O, nullptr, Ps, O.Capture + ": the capture holds no launch", "", false), ExitUsage,
                  O.Serve);

  auto Began = std::chrono::steady_clock::now();
  Replayer R(O, M);
  std::string Loaded = R.loadBlobs(Ps);
  if (!Loaded.empty())
    return finish(resultJSON(O, nullptr, Ps, Loaded, "", false), ExitUsage, O.Serve);
  try {
    R.init();
    R.mapAllocations(Ps); // before anything else allocates device memory: the captured addresses are free
    R.prepareDevice(Ps);
    for (Prepared &P : Ps)
      R.relocate(P);
  } catch (const CudaError &E) {
    return finish(resultJSON(O, &R, Ps, E.what(), "", false), ExitUsage, O.Serve);
  }
  if (O.Serve)
    return serve(R, Ps, O, nsSince(Began));
  int Code = ExitMatch;
  bool Lost = false;
  json J = replayRequest(R, Ps, O, Code, Lost);
  finish(J, Code);
  if (Lost) // the context is lost (a fault) or still busy (a hang): leave without tearing it down
    std::_Exit(Code);
  return Code;
}
