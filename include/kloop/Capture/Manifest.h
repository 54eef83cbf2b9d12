//===- kloop/Capture/Manifest.h - A capture of kernel launches on disk ----===//
///
/// \file
/// The one reader and writer of a capture directory (docs/capture.md):
///
///   DIR/manifest.json       schema "kloop-capture/1": the captured launches
///   DIR/blobs/<h>-<n>       content-addressed bytes: <h> is the FNV-1a 64 of the
///                           raw bytes (16 hex digits), <n> their size in bytes;
///                           the file holds them zlib-compressed or raw, as the
///                           manifest's "compression" says
///
/// Written by libkloop-cupti.so (KLOOP_CUPTI_CAPTURE_DIR, docs/cupti.md) and
/// read by `kloop capture`, `kloop replay` and the replay worker kloop-replay.
/// The injection library and the worker link no LLVM, so this part is plain
/// C++17 (nlohmann/json, zlib) and reports errors as a bool plus a message
/// that names the file; kloop's own code uses the llvm::Expected wrappers of
/// kloop/Capture/Capture.h.
///
//===----------------------------------------------------------------------===//
#ifndef KLOOP_CAPTURE_MANIFEST_H
#define KLOOP_CAPTURE_MANIFEST_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kloop {
namespace capture {

/// The value of the manifest's "schema" member this code reads and writes.
constexpr const char *ManifestSchema = "kloop-capture/1";

/// File name of the manifest inside a capture directory.
constexpr const char *ManifestFileName = "manifest.json";

/// Subdirectory of a capture directory that holds the blobs.
constexpr const char *BlobDirName = "blobs";

/// How blob files hold their bytes.
enum class Compression {
  None, ///< the raw bytes
  Zlib, ///< one zlib stream (RFC 1950) of the raw bytes
};

/// "none" or "zlib" (the manifest's "compression" member).
const char *compressionName(Compression C);

/// True when this build can write and read zlib blobs (zlib was found at
/// build time).
bool zlibAvailable();

/// The compression a writer uses: Zlib when zlibAvailable(), else None.
Compression defaultCompression();

/// Offset basis of 64-bit FNV-1a (Fowler/Noll/Vo,
/// http://www.isthe.com/chongo/tech/comp/fnv/).
constexpr uint64_t Fnv64Offset = 0xcbf29ce484222325ULL;

/// Continues a 64-bit FNV-1a hash over \p Size bytes at \p Data from \p Hash.
uint64_t fnv64(const void *Data, size_t Size, uint64_t Hash = Fnv64Offset);

/// Name of the blob holding \p Size bytes whose FNV-1a 64 is \p Hash:
/// 16 lower-case hex digits, '-', the decimal size ("00ab...ff-4096").
std::string blobName(uint64_t Hash, uint64_t Size);

/// Splits a blob name into its hash and size; false when \p Name is not
/// "<16 hex digits>-<decimal>".
bool parseBlobName(const std::string &Name, uint64_t &Hash, uint64_t &Size);

/// One kernel parameter: where it sits in the parameter buffer (bytes), as
/// cuFuncGetParamInfo / cuKernelGetParamInfo report it.
struct ParamSlot {
  uint64_t Offset = 0;
  uint64_t Size = 0;
};

/// A device address range [Base, Base + Size) in bytes.
struct AddressRange {
  uint64_t Base = 0;
  uint64_t Size = 0;
};

/// An 8-byte word of a parameter buffer whose value lies inside a device
/// allocation.
struct FoundPointer {
  /// Byte offset of the word in the parameter buffer (a multiple of 8).
  uint64_t Offset = 0;
  /// The word's value: a device address, possibly inside the allocation.
  uint64_t Value = 0;
  /// The allocation containing Value.
  AddressRange Range;
};

/// Reads every 8-byte aligned word (offsets 0, 8, 16, ... that fit whole in
/// \p Size bytes; a trailing partial word is ignored) of the parameter buffer
/// \p Buf as a little-endian address and asks \p Lookup for the allocation
/// containing it. Zero words are skipped without asking. Returns the words
/// for which Lookup answered, in offset order. Finds pointers passed
/// directly, pointers inside structs passed by value and interior pointers;
/// a value that only looks like an address but lies in no allocation is not
/// reported. Pure: the caller decides what Lookup consults (the tracked
/// allocation map, then cuMemGetAddressRange, in libkloop-cupti.so).
std::vector<FoundPointer>
scanPointers(const uint8_t *Buf, size_t Size,
             const std::function<std::optional<AddressRange>(uint64_t)> &Lookup);

/// A device allocation a launch's parameters point into, and its contents.
struct Allocation {
  /// Start address and size of the allocation, bytes.
  uint64_t Base = 0;
  uint64_t Bytes = 0;
  /// Blob of the contents right before the launch (after the launch's stream
  /// and the whole context were synchronised).
  std::string Before;
  /// Blob of the contents right after the launch finished: the reference.
  std::string After;
  /// True when the launch changed the allocation (Before != After).
  bool written() const { return Before != After; }
};

/// A pointer found in a launch's parameter buffer (see scanPointers).
struct PointerWord {
  /// Byte offset in the parameter buffer (a multiple of 8).
  uint64_t Offset = 0;
  /// Captured value (device address).
  uint64_t Value = 0;
  /// Index into Launch::Allocations of the allocation containing Value.
  uint64_t Allocation = 0;
};

/// One captured kernel launch.
struct Launch {
  /// Position of the launch call among all kernel launches of the process
  /// (the "seq" of the kloop-cupti/1 profile).
  uint64_t Seq = 0;
  /// Mangled kernel name (the cubin's symbol) and its demangled form.
  std::string Kernel, Name;
  /// Grid and block dimensions.
  uint32_t Grid[3] = {1, 1, 1};
  uint32_t Block[3] = {1, 1, 1};
  /// Dynamic shared memory, bytes.
  uint64_t DynamicSmem = 0;
  /// "default", "per_thread_default" or "created": the stream the program
  /// launched on (replay uses a stream of its own).
  std::string Stream = "default";
  /// Launched cooperatively (cuLaunchCooperativeKernel or the
  /// CU_LAUNCH_ATTRIBUTE_COOPERATIVE attribute): replayed the same way.
  bool Cooperative = false;
  /// Thread-block cluster dimensions (CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
  /// all 0 when none was given.
  uint32_t Cluster[3] = {0, 0, 0};
  /// The parameter layout and the blob of the raw parameter buffer (its size
  /// is the end of the last parameter).
  std::vector<ParamSlot> Params;
  std::string ParamBlob;
  uint64_t ParamBytes = 0;
  /// Pointer words of the parameter buffer, in offset order.
  std::vector<PointerWord> Pointers;
  /// Allocations they point into, each listed once.
  std::vector<Allocation> Allocations;
};

/// A launch of a target kernel that was not captured, and why.
struct Refusal {
  uint64_t Seq = 0;
  std::string Kernel, Name;
  /// Why, in words: "managed memory: parameter word at offset 8 points into
  /// a managed allocation (cuMemAllocManaged/cudaMallocManaged); replay
  /// cannot restore it".
  std::string Reason;
};

/// What capturing cost, as libkloop-cupti.so measured it in the program.
struct CaptureCost {
  /// Host wall time spent synchronising, copying, hashing, compressing and
  /// writing blobs, ns.
  uint64_t CaptureNs = 0;
  /// Bytes copied from the device (before and after states together).
  uint64_t BytesCopied = 0;
  /// Bytes of blob files written (after compression and deduplication).
  uint64_t BlobBytesWritten = 0;
};

/// The whole manifest.
struct Manifest {
  Compression Blobs = Compression::None;
  /// Device of the captured launches: name and compute capability ("9.0");
  /// empty when no launch was captured.
  std::string DeviceName, DeviceCc;
  /// The program's command line (/proc/self/cmdline), for the record.
  std::vector<std::string> Program;
  /// Target kernels asked for (substrings of mangled or demangled names);
  /// empty: every kernel.
  std::vector<std::string> Kernels;
  /// Launches captured per kernel and launch configuration (`--launches`).
  uint64_t LaunchesPerConfig = 1;
  /// Whether `__device__`/`__constant__` globals were captured, and why not.
  bool GlobalsCaptured = false;
  std::string GlobalsNote;
  std::vector<Launch> Launches;
  std::vector<Refusal> Refusals;
  /// Launches of target kernels past the first LaunchesPerConfig of their
  /// launch configuration: seen, not captured.
  uint64_t LaunchesSkipped = 0;
  CaptureCost Cost;
  /// Failures that make the capture incomplete (a CUDA call that failed, a
  /// blob that could not be written).
  std::vector<std::string> Errors;
};

/// The manifest as JSON text (2-space indented).
std::string manifestToJSON(const Manifest &M);

/// Parses manifest JSON \p Text into \p Out. On failure returns false and
/// sets \p Error to "<Path>: <member>: <reason>", for example
/// "/c/manifest.json: schema: expected \"kloop-capture/1\", found
/// \"kloop-capture/2\"" or "...: launches[0].pointers[1].allocation: index 3
/// is out of range (2 allocations)".
bool parseManifest(const std::string &Text, const std::string &Path, Manifest &Out, std::string &Error);

/// Writes \p M as DIR/manifest.json through a temporary file and rename.
/// False with \p Error naming the file on failure.
bool writeManifest(const std::string &Dir, const Manifest &M, std::string &Error);

/// Reads DIR/manifest.json and checks that every blob it names exists under
/// DIR/blobs with a well-formed name. Does not decompress blobs (see
/// verifyBlobs). False with \p Error naming the file on failure.
bool readManifest(const std::string &Dir, Manifest &Out, std::string &Error);

/// Every blob name \p M refers to, each once, in first-use order.
std::vector<std::string> blobsOf(const Manifest &M);

/// Writes content-addressed blobs into DIR/blobs, one stream at a time:
/// begin(), append() any number of times, commit(). The bytes go to a
/// temporary file (compressed on the fly), hashed as they come; commit
/// renames it to its blob name, or drops it when that blob already exists.
class BlobWriter {
public:
  /// Creates DIR/blobs if needed; check ok() / error().
  BlobWriter(std::string Dir, Compression C);
  ~BlobWriter();
  BlobWriter(const BlobWriter &) = delete;
  BlobWriter &operator=(const BlobWriter &) = delete;
  /// False when the blob directory could not be created.
  bool ok() const { return Error.empty(); }
  /// The first failure, naming the file.
  const std::string &error() const { return Error; }
  /// Starts a blob. Only one blob is open at a time.
  bool begin();
  /// Adds \p Size bytes to the open blob.
  bool append(const void *Data, size_t Size);
  /// Finishes the open blob; sets \p Name to its blob name.
  bool commit(std::string &Name);
  /// Drops the open blob, if any.
  void abandon();
  /// Writes \p Size bytes at \p Data as one blob (begin/append/commit).
  bool put(const void *Data, size_t Size, std::string &Name);
  /// Bytes of blob files this writer added to the directory.
  uint64_t bytesWritten() const { return Written; }

private:
  struct Stream;
  std::string BlobDir;
  Compression Comp;
  std::string Error;
  std::unique_ptr<Stream> Open;
  uint64_t Written = 0;
  uint64_t Counter = 0;
};

/// Reads blob \p Name of capture directory \p Dir into \p Out: decompresses
/// it per \p C and checks that it has the size and FNV-1a 64 its name says.
/// False with \p Error naming the file ("/c/blobs/..: truncated or corrupt
/// zlib data", "...: size 12 does not match its name (16)", "...: hash ...
/// does not match its name") on failure.
bool readBlob(const std::string &Dir, const std::string &Name, Compression C, std::vector<uint8_t> &Out,
              std::string &Error);

/// Reads every blob of \p M (readBlob) once. False with the first error.
bool verifyBlobs(const std::string &Dir, const Manifest &M, std::string &Error);

/// Sum of the sizes of the allocations of every launch (bytes, before
/// states; what one replay of all launches restores).
uint64_t capturedBytes(const Manifest &M);

/// The L2 states a replay can time a launch from (kloop replay's and the
/// worker's `--l2`; docs/capture.md, "The L2 before a timed launch"):
/// "flush", "steady" (default), "rotate", "rotate-sets", "flush-dirty",
/// "warm".
bool isL2Mode(const std::string &Text);
/// The modes as an error message lists them: "flush, steady, rotate,
/// rotate-sets, flush-dirty or warm".
extern const char *const L2Modes;

/// The most placements a replay times at (kloop replay's and the worker's
/// `--placements`, `search.replay_placements`; docs/capture.md,
/// "Placements"): each placement past the first is a copy of every allocation
/// a launch touches, so 16 bounds the device memory replay takes at 16 times
/// the capture's.
constexpr unsigned MaxPlacements = 16;

/// The longest train of launches a replay queues before each timed launch (the worker's `--train`,
/// `search.replay_train`; docs/capture.md, "Back to back"): each costs one more run of the kernel per
/// timed launch.
constexpr unsigned MaxTrain = 256;

/// A pad of device memory allocated before a buffer set so that the set lands elsewhere: 2 MiB x k (2 MiB,
/// the GPU's large page), k in [0, MaxMiB / 2) from a splitmix64 finalizer of \p Key (Steele, Lea and
/// Flood, OOPSLA 2014), so that keys that differ in any bit draw unrelated pads and a draw repeats bit for
/// bit. 0 when \p MaxMiB < 4 (nothing to vary). kloop compare draws one per timing round
/// (measure::placementPadBytes), the replay worker one per copy of a launch's allocations
/// (`--placement-pad-mib`; docs/capture.md, "Placements"): both sides of the agreement sample one
/// distribution of placements.
uint64_t placementPadBytes(unsigned MaxMiB, uint64_t Key);

/// How many pads placementPadBytes chooses from for \p MaxMiB (0, 2 MiB, ...): MaxMiB / 2, or 0 when that
/// is under 2 (no placement varied).
unsigned placementPadChoices(unsigned MaxMiB);

} // namespace capture
} // namespace kloop

#endif
