//===- LaunchCapture.cpp - capture of launches for replay (kloop capture) -===//
#include "LaunchCapture.h"
#include "CaptureSupport.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

namespace kloop {
namespace cupti {

namespace {

/// Size of the host buffer device memory is copied through, bytes.
constexpr uint64_t CopyChunkBytes = uint64_t(64) << 20;

/// At most this many distinct errors are kept in the manifest.
constexpr size_t MaxErrors = 100;

uint64_t nowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

std::string cuText(CUresult R) {
  const char *Name = nullptr;
  if (cuGetErrorName(R, &Name) != CUDA_SUCCESS || !Name)
    return "CUresult " + std::to_string(static_cast<int>(R));
  return Name;
}

std::string envText(const char *Name) {
  const char *V = std::getenv(Name);
  return V ? V : "";
}

std::vector<std::string> programArgs() {
  std::ifstream In("/proc/self/cmdline", std::ios::binary);
  std::string All((std::istreambuf_iterator<char>(In)), std::istreambuf_iterator<char>());
  std::vector<std::string> Args;
  size_t Start = 0;
  for (size_t I = 0; I < All.size(); ++I)
    if (All[I] == '\0') {
      Args.push_back(All.substr(Start, I - Start));
      Start = I + 1;
    }
  return Args;
}

/// The raw parameter buffer of \p L laid out per \p Slots; "" in \p Why on success.
std::vector<uint8_t> parameterBuffer(const DriverLaunch &L, const std::vector<capture::ParamSlot> &Slots,
                                     std::string &Why) {
  uint64_t Size = 0;
  for (const capture::ParamSlot &S : Slots)
    Size = std::max(Size, S.Offset + S.Size);
  std::vector<uint8_t> Buf(Size, 0);
  if (L.Params) {
    for (size_t I = 0; I < Slots.size(); ++I) {
      if (!L.Params[I]) {
        Why = "kernelParams[" + std::to_string(I) + "] is null";
        return {};
      }
      std::memcpy(Buf.data() + Slots[I].Offset, L.Params[I], Slots[I].Size);
    }
  } else if (L.ExtraBuf) {
    if (L.ExtraSize < Size) {
      Why = "the packed argument buffer (extra) holds " + std::to_string(L.ExtraSize) + " bytes, the layout needs " +
            std::to_string(Size);
      return {};
    }
    std::memcpy(Buf.data(), L.ExtraBuf, Size);
  } else if (Size > 0) {
    Why = "the launch passed neither kernelParams nor a packed argument buffer";
    return {};
  }
  return Buf;
}

} // namespace

std::optional<CaptureSettings> readCaptureSettings(std::vector<std::string> &Errors) {
  CaptureSettings S;
  S.Dir = envText("KLOOP_CUPTI_CAPTURE_DIR");
  if (S.Dir.empty())
    return std::nullopt;
  S.Kernels = splitList(envText("KLOOP_CUPTI_CAPTURE_KERNELS"));
  std::string N = envText("KLOOP_CUPTI_CAPTURE_LAUNCHES");
  if (!N.empty()) {
    std::optional<uint64_t> V = parseUnsigned(N);
    if (V && *V >= 1)
      S.LaunchesPerConfig = *V;
    else
      Errors.push_back("KLOOP_CUPTI_CAPTURE_LAUNCHES='" + N + "' is not an integer >= 1; using 1");
  }
  return S;
}

/// The launch being captured on this thread, between its enter and exit callbacks.
struct LaunchCapturer::Pending {
  capture::Launch Record;
  std::vector<capture::AddressRange> Ranges;
};

namespace {
thread_local std::unique_ptr<LaunchCapturer::Pending> TlCapture;
} // namespace

LaunchCapturer::LaunchCapturer(CaptureSettings S)
    : Settings(std::move(S)), Blobs(Settings.Dir, capture::defaultCompression()) {
  M.Blobs = capture::defaultCompression();
  M.Kernels = Settings.Kernels;
  M.LaunchesPerConfig = Settings.LaunchesPerConfig;
  M.Program = programArgs();
  M.GlobalsCaptured = false;
  M.GlobalsNote = "not captured: the CUDA driver API cannot list a module's __device__/__constant__ variables; "
                  "replay starts them from the cubin's initial values, so a kernel that reads globals the program "
                  "set (cudaMemcpyToSymbol) replays with other inputs and its baseline check fails";
  if (!Blobs.ok())
    M.Errors.push_back(Blobs.error());
}

LaunchCapturer::~LaunchCapturer() = default;

bool LaunchCapturer::isTarget(const std::string &Mangled) const {
  if (Settings.Kernels.empty())
    return true;
  std::string Demangled = demangle(Mangled);
  for (const std::string &K : Settings.Kernels)
    if (Mangled.find(K) != std::string::npos || Demangled.find(K) != std::string::npos)
      return true;
  return false;
}

void LaunchCapturer::error(const std::string &Message) {
  // Caller holds Mu.
  if (M.Errors.size() < MaxErrors && std::find(M.Errors.begin(), M.Errors.end(), Message) == M.Errors.end())
    M.Errors.push_back(Message);
}

void LaunchCapturer::refuse(uint64_t Seq, const std::string &Mangled, const std::string &Reason) {
  std::lock_guard<std::mutex> Lock(Mu);
  M.Refusals.push_back({Seq, Mangled, demangle(Mangled), Reason});
}

void LaunchCapturer::refuseUnseen(uint64_t Seq, const std::string &Mangled) {
  if (!isTarget(Mangled))
    return;
  refuse(Seq, Mangled,
         "no driver launch was reported inside this runtime launch, so its parameter buffer was not seen");
}

bool LaunchCapturer::claim(const DriverLaunch &L) {
  std::lock_guard<std::mutex> Lock(Mu);
  if (Finished)
    return false;
  uint64_t &N = PerConfig[{L.Mangled, L.Grid[0], L.Grid[1], L.Grid[2], L.Block[0], L.Block[1], L.Block[2],
                           L.DynamicSmem}];
  if (N >= Settings.LaunchesPerConfig) {
    ++M.LaunchesSkipped;
    return false;
  }
  ++N;
  return true;
}

void LaunchCapturer::describeDevice() {
  // Caller holds Mu.
  if (DeviceKnown)
    return;
  CUdevice Dev = 0;
  char Name[256] = {0};
  int Major = 0, Minor = 0;
  if (cuCtxGetDevice(&Dev) != CUDA_SUCCESS || cuDeviceGetName(Name, sizeof(Name) - 1, Dev) != CUDA_SUCCESS)
    return;
  cuDeviceGetAttribute(&Major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, Dev);
  cuDeviceGetAttribute(&Minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, Dev);
  M.DeviceName = Name;
  M.DeviceCc = std::to_string(Major) + "." + std::to_string(Minor);
  DeviceKnown = true;
}

std::optional<std::string> LaunchCapturer::checkMemory(const capture::FoundPointer &P) {
  std::string Where = "parameter word at offset " + std::to_string(P.Offset) + " (" + hexPointer(P.Value) + ")";
  unsigned long long Managed = 0; // CU_POINTER_ATTRIBUTE_IS_MANAGED writes a boolean; read it as any width
  if (cuPointerGetAttribute(&Managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, static_cast<CUdeviceptr>(P.Value)) ==
          CUDA_SUCCESS &&
      Managed)
    return "managed memory: " + Where + " points into a managed allocation (cudaMallocManaged/cuMemAllocManaged); "
           "its pages migrate between host and device, replay cannot restore them";
  unsigned long long Type = 0;
  if (cuPointerGetAttribute(&Type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, static_cast<CUdeviceptr>(P.Value)) ==
          CUDA_SUCCESS &&
      static_cast<unsigned>(Type) == CU_MEMORYTYPE_HOST)
    return "host-mapped memory: " + Where + " points into host memory mapped for the device; replay restores "
           "device memory only";
  return std::nullopt;
}

bool LaunchCapturer::copyAllocation(const capture::AddressRange &R, std::string &Blob) {
  // Caller holds Mu, and has synchronised the context.
  if (!Blobs.begin()) {
    error(Blobs.error());
    return false;
  }
  if (Chunk.size() < std::min(R.Size, CopyChunkBytes))
    Chunk.resize(std::min(R.Size, CopyChunkBytes));
  for (uint64_t Done = 0; Done < R.Size;) {
    size_t N = static_cast<size_t>(std::min(R.Size - Done, CopyChunkBytes));
    CUresult Res = cuMemcpyDtoH(Chunk.data(), static_cast<CUdeviceptr>(R.Base + Done), N);
    if (Res != CUDA_SUCCESS) {
      Blobs.abandon();
      error("cuMemcpyDtoH of allocation " + hexPointer(R.Base) + " (" + std::to_string(R.Size) +
            " bytes) failed: " + cuText(Res));
      return false;
    }
    if (!Blobs.append(Chunk.data(), N)) {
      error(Blobs.error());
      return false;
    }
    M.Cost.BytesCopied += N;
    Done += N;
  }
  if (!Blobs.commit(Blob)) {
    error(Blobs.error());
    return false;
  }
  return true;
}

void LaunchCapturer::onEnter(const DriverLaunch &L, const LayoutQuery &Layout, const TrackedLookup &Tracked) {
  TlCapture.reset();
  if (L.Mangled.empty()) {
    if (Settings.Kernels.empty())
      refuse(L.Seq, "", "the kernel's name is unknown (no symbol name at the launch, cuFuncGetName and "
                        "cuKernelGetName failed): a cubin could not be searched for it");
    return;
  }
  if (!isTarget(L.Mangled) || !claim(L))
    return;
  if (L.StreamCapturing)
    return refuse(L.Seq, L.Mangled, "launch recorded into a CUDA graph (stream capture): it cannot be synchronised");
  std::string Why;
  std::optional<std::vector<capture::ParamSlot>> Slots = Layout(Why);
  if (!Slots)
    return refuse(L.Seq, L.Mangled, "no parameter layout (" + Why + ")");
  // Why may already list the layout queries that failed before one succeeded (queryLayout tries the
  // handle as a CUfunction, then as a CUkernel): the buffer's own problem gets a string of its own.
  std::string BufferProblem;
  std::vector<uint8_t> Buf = parameterBuffer(L, *Slots, BufferProblem);
  if (!BufferProblem.empty())
    return refuse(L.Seq, L.Mangled, BufferProblem);

  auto P = std::make_unique<Pending>();
  capture::Launch &R = P->Record;
  R.Seq = L.Seq;
  R.Kernel = L.Mangled;
  R.Name = demangle(L.Mangled);
  std::copy(L.Grid, L.Grid + 3, R.Grid);
  std::copy(L.Block, L.Block + 3, R.Block);
  std::copy(L.Cluster, L.Cluster + 3, R.Cluster);
  R.DynamicSmem = L.DynamicSmem;
  R.Stream = L.StreamKind;
  R.Cooperative = L.Cooperative;
  R.Params = *Slots;
  R.ParamBytes = Buf.size();

  // Every aligned word that lies in an allocation: the tracked map first, then the driver.
  auto Lookup = [&](uint64_t V) -> std::optional<capture::AddressRange> {
    if (std::optional<capture::AddressRange> T = Tracked(V))
      return T;
    CUdeviceptr Base = 0;
    size_t Size = 0;
    if (cuMemGetAddressRange(&Base, &Size, static_cast<CUdeviceptr>(V)) != CUDA_SUCCESS || Size == 0)
      return std::nullopt;
    return capture::AddressRange{static_cast<uint64_t>(Base), static_cast<uint64_t>(Size)};
  };
  for (const capture::FoundPointer &F : capture::scanPointers(Buf.data(), Buf.size(), Lookup)) {
    if (std::optional<std::string> Bad = checkMemory(F))
      return refuse(L.Seq, L.Mangled, *Bad);
    size_t Index = 0;
    while (Index < P->Ranges.size() && P->Ranges[Index].Base != F.Range.Base)
      ++Index;
    if (Index == P->Ranges.size())
      P->Ranges.push_back(F.Range);
    else
      P->Ranges[Index].Size = std::max(P->Ranges[Index].Size, F.Range.Size);
    R.Pointers.push_back({F.Offset, F.Value, Index});
  }

  uint64_t T0 = nowNs();
  std::lock_guard<std::mutex> Lock(Mu);
  describeDevice();
  bool Ok = Blobs.put(Buf.data(), Buf.size(), R.ParamBlob);
  if (!Ok)
    error(Blobs.error());
  CUresult Sync = Ok ? cuCtxSynchronize() : CUDA_SUCCESS;
  if (Sync != CUDA_SUCCESS) {
    error("cuCtxSynchronize before " + R.Name + " (seq " + std::to_string(L.Seq) + ") failed: " + cuText(Sync));
    Ok = false;
  }
  for (const capture::AddressRange &A : P->Ranges) {
    if (!Ok)
      break;
    capture::Allocation Alloc{A.Base, A.Size, "", ""};
    Ok = copyAllocation(A, Alloc.Before);
    R.Allocations.push_back(Alloc);
  }
  M.Cost.CaptureNs += nowNs() - T0;
  if (Ok)
    TlCapture = std::move(P);
  else
    M.Refusals.push_back({L.Seq, L.Mangled, R.Name, "the inputs could not be copied (see errors)"});
}

void LaunchCapturer::onExit(bool Succeeded) {
  std::unique_ptr<Pending> P = std::move(TlCapture);
  if (!P)
    return;
  capture::Launch &R = P->Record;
  if (!Succeeded)
    return refuse(R.Seq, R.Kernel, "the launch call failed");
  uint64_t T0 = nowNs();
  std::lock_guard<std::mutex> Lock(Mu);
  CUresult Sync = cuCtxSynchronize();
  bool Ok = Sync == CUDA_SUCCESS;
  if (!Ok)
    error("cuCtxSynchronize after " + R.Name + " (seq " + std::to_string(R.Seq) + ") failed: " + cuText(Sync));
  for (size_t I = 0; I < P->Ranges.size() && Ok; ++I)
    Ok = copyAllocation(P->Ranges[I], R.Allocations[I].After);
  M.Cost.CaptureNs += nowNs() - T0;
  if (Ok)
    M.Launches.push_back(std::move(R));
  else
    M.Refusals.push_back({R.Seq, R.Kernel, R.Name, "the outputs could not be copied (see errors)"});
}

void LaunchCapturer::finish() {
  std::lock_guard<std::mutex> Lock(Mu);
  if (Finished)
    return;
  Finished = true;
  std::stable_sort(M.Launches.begin(), M.Launches.end(),
                   [](const capture::Launch &A, const capture::Launch &B) { return A.Seq < B.Seq; });
  M.Cost.BlobBytesWritten = Blobs.bytesWritten();
  std::string Error;
  // On failure there is nowhere to report: the missing manifest is the report (kloop capture names it).
  capture::writeManifest(Settings.Dir, M, Error);
}

} // namespace cupti
} // namespace kloop
