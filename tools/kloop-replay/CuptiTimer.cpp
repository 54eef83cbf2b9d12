//===- CuptiTimer.cpp - kernel durations from CUPTI activity records ----------------------===//
#include "CuptiTimer.h"

#ifdef KLOOP_REPLAY_CUPTI
#include <cupti.h>
#include <dlfcn.h>
#endif

#include <cstdlib>
#include <mutex>
#include <utility>
#include <vector>

namespace kloop::replay {
#ifdef KLOOP_REPLAY_CUPTI
namespace {

/// The libcupti entry points the timer calls, resolved with dlsym.
struct Api {
  decltype(&cuptiActivityRegisterCallbacks) RegisterCallbacks = nullptr;
  decltype(&cuptiActivityEnable) Enable = nullptr;
  decltype(&cuptiActivityGetNextRecord) GetNextRecord = nullptr;
  decltype(&cuptiActivityFlushAll) FlushAll = nullptr;
};

Api Cupti;
bool Active = false;
std::mutex Mu;
/// A kernel record: mangled name, start timestamp and duration (ns).
struct Record {
  std::string Name;
  uint64_t Start = 0, Ns = 0;
};
/// The kernel records delivered since the last durationOf.
std::vector<Record> Records;
constexpr size_t BufferBytes = size_t(1) << 20;

void CUPTIAPI bufferRequested(uint8_t **Buffer, size_t *Size, size_t *MaxNumRecords) {
  *Buffer = static_cast<uint8_t *>(std::aligned_alloc(8, BufferBytes));
  *Size = *Buffer ? BufferBytes : 0;
  *MaxNumRecords = 0;
}

void CUPTIAPI bufferCompleted(CUcontext, uint32_t, uint8_t *Buffer, size_t, size_t ValidSize) {
  std::vector<Record> Got;
  CUpti_Activity *Record = nullptr;
  while (ValidSize > 0 && Cupti.GetNextRecord(Buffer, ValidSize, &Record) == CUPTI_SUCCESS) {
    if (Record->kind != CUPTI_ACTIVITY_KIND_KERNEL && Record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
      continue;
    auto *K = reinterpret_cast<const CUpti_ActivityKernel10 *>(Record);
    Got.push_back({K->name ? K->name : "", K->start, K->end >= K->start ? K->end - K->start : 0});
  }
  std::free(Buffer);
  std::lock_guard<std::mutex> Lock(Mu);
  Records.insert(Records.end(), Got.begin(), Got.end());
}

/// libcupti's handle: the loader's search first, then the toolkit's usual directories.
void *openLibrary() {
  const char *Names[] = {"libcupti.so", "libcupti.so.13", "libcupti.so.12",
#ifdef KLOOP_REPLAY_CUPTI_PATH
                         KLOOP_REPLAY_CUPTI_PATH,
#endif
                         "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so", "/usr/local/cuda/lib64/libcupti.so"};
  for (const char *N : Names)
    if (void *H = dlopen(N, RTLD_NOW | RTLD_LOCAL))
      return H;
  return nullptr;
}

template <typename F> bool resolve(void *H, const char *Name, F &Out) {
  Out = reinterpret_cast<F>(dlsym(H, Name));
  return Out != nullptr;
}

} // namespace

std::string CuptiTimer::start() {
  if (Active)
    return "";
  void *H = openLibrary();
  if (!H)
    return "libcupti could not be loaded";
  if (!resolve(H, "cuptiActivityRegisterCallbacks", Cupti.RegisterCallbacks) ||
      !resolve(H, "cuptiActivityEnable", Cupti.Enable) || !resolve(H, "cuptiActivityGetNextRecord", Cupti.GetNextRecord) ||
      !resolve(H, "cuptiActivityFlushAll", Cupti.FlushAll))
    return "libcupti lacks the activity API";
  if (Cupti.RegisterCallbacks(bufferRequested, bufferCompleted) != CUPTI_SUCCESS)
    return "cuptiActivityRegisterCallbacks failed (another CUPTI client in this process?)";
  if (Cupti.Enable(CUPTI_ACTIVITY_KIND_KERNEL) != CUPTI_SUCCESS)
    return "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_KERNEL) failed (another CUPTI client in this process?)";
  Active = true;
  return "";
}

bool CuptiTimer::active() { return Active; }

std::optional<uint64_t> CuptiTimer::durationOf(const std::string &Mangled) {
  if (!Active || Cupti.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != CUPTI_SUCCESS)
    return std::nullopt;
  std::lock_guard<std::mutex> Lock(Mu);
  // The latest-starting record of the name: the launch just timed, whatever order the buffers came in
  // (the "rotate-sets" L2 mode launches the same kernel on other buffers right before it).
  const Record *Latest = nullptr;
  for (const Record &R : Records)
    if (R.Name == Mangled && (!Latest || R.Start >= Latest->Start))
      Latest = &R;
  std::optional<uint64_t> Found;
  if (Latest)
    Found = Latest->Ns;
  Records.clear();
  return Found;
}

void CuptiTimer::discard() {
  if (!Active)
    return;
  (void)Cupti.FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> Lock(Mu);
  Records.clear();
}

#else // built without cupti.h: the worker times with CUDA events

std::string CuptiTimer::start() { return "the worker was built without cupti.h"; }
bool CuptiTimer::active() { return false; }
std::optional<uint64_t> CuptiTimer::durationOf(const std::string &) { return std::nullopt; }
void CuptiTimer::discard() {}
#endif

} // namespace kloop::replay
