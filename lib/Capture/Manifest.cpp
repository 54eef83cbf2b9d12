//===- Manifest.cpp - kloop-capture/1 reader and writer -------------------===//
//
// Plain C++17: linked into libkloop-cupti.so and kloop-replay, which have no LLVM.
//
//===----------------------------------------------------------------------===//
#include "kloop/Capture/Manifest.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#if KLOOP_CAPTURE_HAVE_ZLIB
#include <zlib.h>
#endif

namespace kloop {
namespace capture {

using json = nlohmann::ordered_json;

unsigned placementPadChoices(unsigned MaxMiB) { return MaxMiB / 2 >= 2 ? MaxMiB / 2 : 0; }

uint64_t placementPadBytes(unsigned MaxMiB, uint64_t Key) {
  constexpr uint64_t Step = 2ull << 20;
  uint64_t Choices = placementPadChoices(MaxMiB);
  if (!Choices)
    return 0;
  uint64_t Z = Key;
  Z = (Z ^ (Z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  Z = (Z ^ (Z >> 27)) * 0x94D049BB133111EBULL;
  Z ^= Z >> 31;
  return Step * (Z % Choices);
}

const char *compressionName(Compression C) { return C == Compression::Zlib ? "zlib" : "none"; }

bool zlibAvailable() { return KLOOP_CAPTURE_HAVE_ZLIB != 0; }

Compression defaultCompression() { return zlibAvailable() ? Compression::Zlib : Compression::None; }

uint64_t fnv64(const void *Data, size_t Size, uint64_t Hash) {
  const auto *P = static_cast<const uint8_t *>(Data);
  for (size_t I = 0; I < Size; ++I) {
    Hash ^= P[I];
    Hash *= 0x100000001b3ULL; // the 64-bit FNV prime (same source as Fnv64Offset)
  }
  return Hash;
}

std::string blobName(uint64_t Hash, uint64_t Size) {
  char Buf[48];
  std::snprintf(Buf, sizeof(Buf), "%016llx-%llu", static_cast<unsigned long long>(Hash),
                static_cast<unsigned long long>(Size));
  return Buf;
}

bool parseBlobName(const std::string &Name, uint64_t &Hash, uint64_t &Size) {
  if (Name.size() < 18 || Name[16] != '-' || Name.size() > 16 + 1 + 20)
    return false;
  Hash = 0;
  for (size_t I = 0; I < 16; ++I) {
    char C = Name[I];
    int D = C >= '0' && C <= '9' ? C - '0' : C >= 'a' && C <= 'f' ? C - 'a' + 10 : -1;
    if (D < 0)
      return false;
    Hash = Hash << 4 | static_cast<uint64_t>(D);
  }
  Size = 0;
  for (size_t I = 17; I < Name.size(); ++I) {
    if (Name[I] < '0' || Name[I] > '9' || Size > (UINT64_MAX - 9) / 10)
      return false;
    Size = Size * 10 + static_cast<uint64_t>(Name[I] - '0');
  }
  return true;
}

std::vector<FoundPointer>
scanPointers(const uint8_t *Buf, size_t Size,
             const std::function<std::optional<AddressRange>(uint64_t)> &Lookup) {
  std::vector<FoundPointer> Found;
  for (size_t Off = 0; Off + 8 <= Size; Off += 8) {
    uint64_t V = 0;
    for (int I = 7; I >= 0; --I)
      V = V << 8 | Buf[Off + static_cast<size_t>(I)];
    if (V == 0)
      continue;
    if (std::optional<AddressRange> R = Lookup(V))
      Found.push_back({Off, V, *R});
  }
  return Found;
}

// ---- JSON --------------------------------------------------------------------------------------------

namespace {

std::string hexAddress(uint64_t V) {
  char Buf[24];
  std::snprintf(Buf, sizeof(Buf), "0x%llx", static_cast<unsigned long long>(V));
  return Buf;
}

json dims(const uint32_t D[3]) { return json::array({D[0], D[1], D[2]}); }

json launchToJSON(const Launch &L) {
  json Params = json::array();
  for (const ParamSlot &P : L.Params)
    Params.push_back({{"offset", P.Offset}, {"size", P.Size}});
  json Pointers = json::array();
  for (const PointerWord &P : L.Pointers)
    Pointers.push_back({{"offset", P.Offset}, {"value", hexAddress(P.Value)}, {"allocation", P.Allocation}});
  json Allocs = json::array();
  for (const Allocation &A : L.Allocations)
    Allocs.push_back({{"base", hexAddress(A.Base)}, {"bytes", A.Bytes}, {"before", A.Before}, {"after", A.After}});
  return {{"seq", L.Seq},
          {"kernel", L.Kernel},
          {"name", L.Name},
          {"grid", dims(L.Grid)},
          {"block", dims(L.Block)},
          {"dynamic_smem", L.DynamicSmem},
          {"stream", L.Stream},
          {"cooperative", L.Cooperative},
          {"cluster", dims(L.Cluster)},
          {"params", Params},
          {"param_blob", L.ParamBlob},
          {"param_bytes", L.ParamBytes},
          {"pointers", Pointers},
          {"allocations", Allocs}};
}

/// Reads members of one JSON object, remembering the first problem as "<path>: <reason>".
class Reader {
public:
  Reader(std::string File, std::string &Error) : File(std::move(File)), Error(Error) {}

  bool failed() const { return !Error.empty(); }

  void fail(const std::string &Where, const std::string &Why) {
    if (Error.empty())
      Error = File + ": " + Where + ": " + Why;
  }

  const json *member(const json &Obj, const std::string &Where, const char *Key, bool Required = true) {
    if (!Obj.is_object()) {
      fail(Where, "expected an object");
      return nullptr;
    }
    auto It = Obj.find(Key);
    if (It == Obj.end()) {
      if (Required)
        fail(Where.empty() ? Key : Where + "." + Key, "missing");
      return nullptr;
    }
    return &*It;
  }

  static std::string at(const std::string &Where, const char *Key) {
    return Where.empty() ? std::string(Key) : Where + "." + Key;
  }

  void u64(const json &Obj, const std::string &Where, const char *Key, uint64_t &Out, bool Required = true) {
    const json *V = member(Obj, Where, Key, Required);
    if (!V)
      return;
    if (!V->is_number_unsigned() && !(V->is_number_integer() && V->get<int64_t>() >= 0)) {
      fail(at(Where, Key), "expected a non-negative integer");
      return;
    }
    Out = V->get<uint64_t>();
  }

  void str(const json &Obj, const std::string &Where, const char *Key, std::string &Out, bool Required = true) {
    const json *V = member(Obj, Where, Key, Required);
    if (!V)
      return;
    if (!V->is_string()) {
      fail(at(Where, Key), "expected a string");
      return;
    }
    Out = V->get<std::string>();
  }

  void boolean(const json &Obj, const std::string &Where, const char *Key, bool &Out, bool Required = true) {
    const json *V = member(Obj, Where, Key, Required);
    if (!V)
      return;
    if (!V->is_boolean()) {
      fail(at(Where, Key), "expected true or false");
      return;
    }
    Out = V->get<bool>();
  }

  void address(const json &Obj, const std::string &Where, const char *Key, uint64_t &Out) {
    std::string S;
    str(Obj, Where, Key, S);
    if (failed())
      return;
    char *End = nullptr;
    errno = 0;
    unsigned long long V = S.size() > 2 && S[0] == '0' && S[1] == 'x' ? std::strtoull(S.c_str() + 2, &End, 16) : 0;
    if (S.size() <= 2 || S.compare(0, 2, "0x") != 0 || errno || !End || *End) {
      fail(at(Where, Key), "expected a hexadecimal address \"0x...\", found \"" + S + "\"");
      return;
    }
    Out = V;
  }

  void blob(const json &Obj, const std::string &Where, const char *Key, std::string &Out) {
    str(Obj, Where, Key, Out);
    uint64_t H = 0, N = 0;
    if (!failed() && !parseBlobName(Out, H, N))
      fail(at(Where, Key), "\"" + Out + "\" is not a blob name (<16 hex digits>-<size>)");
  }

  void dims3(const json &Obj, const std::string &Where, const char *Key, uint32_t Out[3]) {
    const json *V = member(Obj, Where, Key);
    if (!V)
      return;
    if (!V->is_array() || V->size() != 3) {
      fail(at(Where, Key), "expected an array of 3 integers");
      return;
    }
    for (size_t I = 0; I < 3; ++I) {
      const json &E = (*V)[I];
      if (!E.is_number_integer() || E.get<int64_t>() < 0 || E.get<int64_t>() > UINT32_MAX) {
        fail(at(Where, Key), "expected an array of 3 integers");
        return;
      }
      Out[I] = E.get<uint32_t>();
    }
  }

  void strings(const json &Obj, const std::string &Where, const char *Key, std::vector<std::string> &Out) {
    const json *V = member(Obj, Where, Key);
    if (!V)
      return;
    if (!V->is_array()) {
      fail(at(Where, Key), "expected an array of strings");
      return;
    }
    for (const json &E : *V) {
      if (!E.is_string()) {
        fail(at(Where, Key), "expected an array of strings");
        return;
      }
      Out.push_back(E.get<std::string>());
    }
  }

  /// Calls \p Each(element, "<Key>[i]") for every element of array member Key.
  template <typename Fn> void array(const json &Obj, const std::string &Where, const char *Key, Fn Each) {
    const json *V = member(Obj, Where, Key);
    if (!V)
      return;
    if (!V->is_array()) {
      fail(at(Where, Key), "expected an array");
      return;
    }
    for (size_t I = 0; I < V->size() && !failed(); ++I)
      Each((*V)[I], at(Where, Key) + "[" + std::to_string(I) + "]");
  }

private:
  std::string File;
  std::string &Error;
};

void readLaunch(Reader &R, const json &J, const std::string &W, Launch &L) {
  R.u64(J, W, "seq", L.Seq);
  R.str(J, W, "kernel", L.Kernel);
  R.str(J, W, "name", L.Name);
  R.dims3(J, W, "grid", L.Grid);
  R.dims3(J, W, "block", L.Block);
  R.u64(J, W, "dynamic_smem", L.DynamicSmem);
  R.str(J, W, "stream", L.Stream);
  R.boolean(J, W, "cooperative", L.Cooperative);
  R.dims3(J, W, "cluster", L.Cluster);
  R.array(J, W, "params", [&](const json &E, const std::string &EW) {
    ParamSlot P;
    R.u64(E, EW, "offset", P.Offset);
    R.u64(E, EW, "size", P.Size);
    L.Params.push_back(P);
  });
  R.blob(J, W, "param_blob", L.ParamBlob);
  R.u64(J, W, "param_bytes", L.ParamBytes);
  R.array(J, W, "allocations", [&](const json &E, const std::string &EW) {
    Allocation A;
    R.address(E, EW, "base", A.Base);
    R.u64(E, EW, "bytes", A.Bytes);
    R.blob(E, EW, "before", A.Before);
    R.blob(E, EW, "after", A.After);
    L.Allocations.push_back(A);
  });
  R.array(J, W, "pointers", [&](const json &E, const std::string &EW) {
    PointerWord P;
    R.u64(E, EW, "offset", P.Offset);
    R.address(E, EW, "value", P.Value);
    R.u64(E, EW, "allocation", P.Allocation);
    if (R.failed())
      return;
    if (P.Allocation >= L.Allocations.size())
      return R.fail(EW + ".allocation", "index " + std::to_string(P.Allocation) + " is out of range (" +
                                            std::to_string(L.Allocations.size()) + " allocations)");
    if (P.Offset % 8 != 0 || P.Offset + 8 > L.ParamBytes)
      return R.fail(EW + ".offset", std::to_string(P.Offset) +
                                        " is not an 8-byte aligned word of the parameter buffer (" +
                                        std::to_string(L.ParamBytes) + " bytes)");
    const Allocation &A = L.Allocations[P.Allocation];
    if (P.Value < A.Base || P.Value - A.Base >= A.Bytes)
      R.fail(EW + ".value", "lies outside allocation " + std::to_string(P.Allocation));
    L.Pointers.push_back(P);
  });
  uint64_t H = 0, N = 0;
  if (!R.failed() && parseBlobName(L.ParamBlob, H, N) && N != L.ParamBytes)
    R.fail(W + ".param_bytes", std::to_string(L.ParamBytes) + " does not match the size of param_blob (" +
                                   std::to_string(N) + ")");
  for (size_t I = 0; I < L.Allocations.size() && !R.failed(); ++I)
    for (const std::string *B : {&L.Allocations[I].Before, &L.Allocations[I].After})
      if (parseBlobName(*B, H, N) && N != L.Allocations[I].Bytes)
        R.fail(W + ".allocations[" + std::to_string(I) + "]",
               "blob " + *B + " does not hold the allocation's " + std::to_string(L.Allocations[I].Bytes) + " bytes");
}

} // namespace

std::string manifestToJSON(const Manifest &M) {
  json J;
  J["schema"] = ManifestSchema;
  J["compression"] = compressionName(M.Blobs);
  J["hash"] = "fnv1a64";
  J["device"] = {{"name", M.DeviceName}, {"cc", M.DeviceCc}};
  J["program"] = M.Program;
  J["kernels"] = M.Kernels;
  J["launches_per_config"] = M.LaunchesPerConfig;
  J["globals"] = {{"captured", M.GlobalsCaptured}, {"note", M.GlobalsNote}};
  json Launches = json::array();
  for (const Launch &L : M.Launches)
    Launches.push_back(launchToJSON(L));
  J["launches"] = std::move(Launches);
  json Refusals = json::array();
  for (const Refusal &R : M.Refusals)
    Refusals.push_back({{"seq", R.Seq}, {"kernel", R.Kernel}, {"name", R.Name}, {"reason", R.Reason}});
  J["refusals"] = std::move(Refusals);
  J["launches_skipped"] = M.LaunchesSkipped;
  J["cost"] = {{"capture_ns", M.Cost.CaptureNs},
               {"bytes_copied", M.Cost.BytesCopied},
               {"blob_bytes_written", M.Cost.BlobBytesWritten}};
  J["errors"] = M.Errors;
  return J.dump(2) + "\n";
}

bool parseManifest(const std::string &Text, const std::string &Path, Manifest &Out, std::string &Error) {
  Error.clear();
  json J = json::parse(Text, nullptr, /*allow_exceptions=*/false);
  if (J.is_discarded()) {
    Error = Path + ": not valid JSON";
    return false;
  }
  Reader R(Path, Error);
  Manifest M;
  std::string Schema;
  R.str(J, "", "schema", Schema);
  if (!R.failed() && Schema != ManifestSchema)
    R.fail("schema", std::string("expected \"") + ManifestSchema + "\", found \"" + Schema +
                         "\" (written by another kloop version?)");
  std::string Comp;
  R.str(J, "", "compression", Comp);
  if (!R.failed() && Comp != "zlib" && Comp != "none")
    R.fail("compression", "expected \"zlib\" or \"none\", found \"" + Comp + "\"");
  M.Blobs = Comp == "zlib" ? Compression::Zlib : Compression::None;
  std::string Hash;
  R.str(J, "", "hash", Hash);
  if (!R.failed() && Hash != "fnv1a64")
    R.fail("hash", "expected \"fnv1a64\", found \"" + Hash + "\"");
  if (const json *D = R.member(J, "", "device")) {
    R.str(*D, "device", "name", M.DeviceName);
    R.str(*D, "device", "cc", M.DeviceCc);
  }
  R.strings(J, "", "program", M.Program);
  R.strings(J, "", "kernels", M.Kernels);
  R.u64(J, "", "launches_per_config", M.LaunchesPerConfig);
  if (const json *G = R.member(J, "", "globals")) {
    R.boolean(*G, "globals", "captured", M.GlobalsCaptured);
    R.str(*G, "globals", "note", M.GlobalsNote);
  }
  R.array(J, "", "launches", [&](const json &E, const std::string &W) {
    Launch L;
    readLaunch(R, E, W, L);
    M.Launches.push_back(std::move(L));
  });
  R.array(J, "", "refusals", [&](const json &E, const std::string &W) {
    Refusal F;
    R.u64(E, W, "seq", F.Seq);
    R.str(E, W, "kernel", F.Kernel);
    R.str(E, W, "name", F.Name);
    R.str(E, W, "reason", F.Reason);
    M.Refusals.push_back(std::move(F));
  });
  R.u64(J, "", "launches_skipped", M.LaunchesSkipped);
  if (const json *C = R.member(J, "", "cost")) {
    R.u64(*C, "cost", "capture_ns", M.Cost.CaptureNs);
    R.u64(*C, "cost", "bytes_copied", M.Cost.BytesCopied);
    R.u64(*C, "cost", "blob_bytes_written", M.Cost.BlobBytesWritten);
  }
  R.strings(J, "", "errors", M.Errors);
  if (R.failed())
    return false;
  Out = std::move(M);
  return true;
}

// ---- Files -------------------------------------------------------------------------------------------

namespace {

std::string errnoText() { return std::strerror(errno); }

bool writeFileAtomically(const std::string &Path, const std::string &Text, std::string &Error) {
  std::string Tmp = Path + ".tmp." + std::to_string(getpid());
  FILE *F = std::fopen(Tmp.c_str(), "wb");
  if (!F) {
    Error = Tmp + ": cannot create: " + errnoText();
    return false;
  }
  bool Ok = std::fwrite(Text.data(), 1, Text.size(), F) == Text.size();
  Ok = std::fflush(F) == 0 && Ok;
  Ok = fsync(fileno(F)) == 0 && Ok;
  Ok = std::fclose(F) == 0 && Ok;
  if (!Ok || std::rename(Tmp.c_str(), Path.c_str()) != 0) {
    Error = Path + ": cannot write: " + errnoText();
    std::remove(Tmp.c_str());
    return false;
  }
  return true;
}

bool readWholeFile(const std::string &Path, std::string &Out, std::string &Error) {
  std::ifstream In(Path, std::ios::binary);
  if (!In) {
    Error = Path + ": cannot read: " + errnoText();
    return false;
  }
  std::ostringstream S;
  S << In.rdbuf();
  if (In.bad()) {
    Error = Path + ": read error";
    return false;
  }
  Out = S.str();
  return true;
}

bool isRegularFile(const std::string &Path) {
  struct stat St;
  return ::stat(Path.c_str(), &St) == 0 && S_ISREG(St.st_mode);
}

} // namespace

bool writeManifest(const std::string &Dir, const Manifest &M, std::string &Error) {
  return writeFileAtomically(Dir + "/" + ManifestFileName, manifestToJSON(M), Error);
}

std::vector<std::string> blobsOf(const Manifest &M) {
  std::vector<std::string> Out;
  std::set<std::string> Seen;
  auto Add = [&](const std::string &B) {
    if (Seen.insert(B).second)
      Out.push_back(B);
  };
  for (const Launch &L : M.Launches) {
    Add(L.ParamBlob);
    for (const Allocation &A : L.Allocations) {
      Add(A.Before);
      Add(A.After);
    }
  }
  return Out;
}

bool readManifest(const std::string &Dir, Manifest &Out, std::string &Error) {
  std::string Path = Dir + "/" + ManifestFileName;
  std::string Text;
  if (!readWholeFile(Path, Text, Error))
    return false;
  Manifest M;
  if (!parseManifest(Text, Path, M, Error))
    return false;
  if (M.Blobs == Compression::Zlib && !zlibAvailable()) {
    Error = Path + ": compression: the blobs are zlib-compressed and this build has no zlib";
    return false;
  }
  for (const std::string &B : blobsOf(M))
    if (!isRegularFile(Dir + "/" + BlobDirName + "/" + B)) {
      Error = Dir + "/" + BlobDirName + "/" + B + ": blob named in " + Path + " is missing";
      return false;
    }
  Out = std::move(M);
  return true;
}

uint64_t capturedBytes(const Manifest &M) {
  uint64_t N = 0;
  for (const Launch &L : M.Launches)
    for (const Allocation &A : L.Allocations)
      N += A.Bytes;
  return N;
}

// ---- Blobs -------------------------------------------------------------------------------------------

struct BlobWriter::Stream {
  std::string TmpPath;
  FILE *File = nullptr;
  uint64_t Hash = Fnv64Offset;
  uint64_t Size = 0;
  uint64_t FileBytes = 0;
#if KLOOP_CAPTURE_HAVE_ZLIB
  z_stream Z{};
  bool ZInit = false;
#endif
  ~Stream() {
#if KLOOP_CAPTURE_HAVE_ZLIB
    if (ZInit)
      deflateEnd(&Z);
#endif
    if (File) {
      std::fclose(File);
      std::remove(TmpPath.c_str());
    }
  }
};

BlobWriter::BlobWriter(std::string Dir, Compression C) : BlobDir(Dir + "/" + BlobDirName), Comp(C) {
  if (C == Compression::Zlib && !zlibAvailable())
    Error = BlobDir + ": zlib compression asked for, but this build has no zlib";
  else if (::mkdir(BlobDir.c_str(), 0777) != 0 && errno != EEXIST)
    Error = BlobDir + ": cannot create: " + errnoText();
}

BlobWriter::~BlobWriter() = default;

bool BlobWriter::begin() {
  if (!ok())
    return false;
  Open = std::make_unique<Stream>();
  Open->TmpPath = BlobDir + "/.tmp." + std::to_string(getpid()) + "." + std::to_string(Counter++);
  Open->File = std::fopen(Open->TmpPath.c_str(), "wb");
  if (!Open->File) {
    Error = Open->TmpPath + ": cannot create: " + errnoText();
    Open.reset();
    return false;
  }
#if KLOOP_CAPTURE_HAVE_ZLIB
  if (Comp == Compression::Zlib) {
    // Level 1: capture copies whole allocations, so speed matters more than ratio.
    if (deflateInit(&Open->Z, 1) != Z_OK) {
      Error = Open->TmpPath + ": deflateInit failed";
      Open.reset();
      return false;
    }
    Open->ZInit = true;
  }
#endif
  return true;
}

namespace {
#if KLOOP_CAPTURE_HAVE_ZLIB
/// Runs deflate over the stream's pending input with \p Flush, writing what it produces.
bool deflateInto(z_stream &Z, FILE *F, int Flush, uint64_t &FileBytes) {
  unsigned char Out[1 << 16];
  int R = Z_OK;
  do {
    Z.next_out = Out;
    Z.avail_out = sizeof(Out);
    R = deflate(&Z, Flush);
    if (R == Z_STREAM_ERROR)
      return false;
    size_t N = sizeof(Out) - Z.avail_out;
    if (std::fwrite(Out, 1, N, F) != N)
      return false;
    FileBytes += N;
  } while (Z.avail_out == 0 || (Flush == Z_FINISH && R != Z_STREAM_END));
  return true;
}
#endif
} // namespace

bool BlobWriter::append(const void *Data, size_t Size) {
  if (!Open)
    return false;
  Open->Hash = fnv64(Data, Size, Open->Hash);
  Open->Size += Size;
  bool Ok = true;
#if KLOOP_CAPTURE_HAVE_ZLIB
  if (Comp == Compression::Zlib) {
    const auto *P = static_cast<const unsigned char *>(Data);
    while (Size > 0 && Ok) {
      uInt N = static_cast<uInt>(std::min<size_t>(Size, 1u << 30));
      Open->Z.next_in = const_cast<unsigned char *>(P);
      Open->Z.avail_in = N;
      Ok = deflateInto(Open->Z, Open->File, Z_NO_FLUSH, Open->FileBytes);
      P += N;
      Size -= N;
    }
  } else
#endif
  {
    Ok = std::fwrite(Data, 1, Size, Open->File) == Size;
    Open->FileBytes += Size;
  }
  if (!Ok) {
    Error = Open->TmpPath + ": cannot write: " + errnoText();
    Open.reset();
  }
  return Ok;
}

bool BlobWriter::commit(std::string &Name) {
  if (!Open)
    return false;
  bool Ok = true;
#if KLOOP_CAPTURE_HAVE_ZLIB
  if (Comp == Compression::Zlib) {
    Open->Z.next_in = nullptr;
    Open->Z.avail_in = 0;
    Ok = deflateInto(Open->Z, Open->File, Z_FINISH, Open->FileBytes);
  }
#endif
  Ok = std::fflush(Open->File) == 0 && Ok;
  Ok = std::fclose(Open->File) == 0 && Ok;
  Open->File = nullptr;
  std::string Final = BlobDir + "/" + blobName(Open->Hash, Open->Size);
  if (!Ok) {
    Error = Open->TmpPath + ": cannot write: " + errnoText();
    std::remove(Open->TmpPath.c_str());
    Open.reset();
    return false;
  }
  if (isRegularFile(Final)) {
    std::remove(Open->TmpPath.c_str()); // the same bytes are already stored
  } else if (std::rename(Open->TmpPath.c_str(), Final.c_str()) != 0) {
    Error = Final + ": cannot rename into place: " + errnoText();
    std::remove(Open->TmpPath.c_str());
    Open.reset();
    return false;
  } else {
    Written += Open->FileBytes;
  }
  Name = blobName(Open->Hash, Open->Size);
  Open.reset();
  return true;
}

void BlobWriter::abandon() { Open.reset(); }

bool BlobWriter::put(const void *Data, size_t Size, std::string &Name) {
  return begin() && append(Data, Size) && commit(Name);
}

bool readBlob(const std::string &Dir, const std::string &Name, Compression C, std::vector<uint8_t> &Out,
              std::string &Error) {
  std::string Path = Dir + "/" + BlobDirName + "/" + Name;
  uint64_t Hash = 0, Size = 0;
  if (!parseBlobName(Name, Hash, Size)) {
    Error = Path + ": not a blob name (<16 hex digits>-<size>)";
    return false;
  }
  std::string Raw;
  if (!readWholeFile(Path, Raw, Error))
    return false;
  if (C == Compression::None) {
    Out.assign(Raw.begin(), Raw.end());
  } else {
#if KLOOP_CAPTURE_HAVE_ZLIB
    Out.assign(Size, 0);
    uLongf Got = static_cast<uLongf>(Size);
    int R = uncompress(Out.data(), &Got, reinterpret_cast<const Bytef *>(Raw.data()), static_cast<uLong>(Raw.size()));
    if (R != Z_OK) {
      Error = Path + (R == Z_BUF_ERROR && Size > 0 ? ": holds more than the " + std::to_string(Size) +
                                                         " bytes its name says, or is truncated"
                                                   : ": truncated or corrupt zlib data");
      return false;
    }
    Out.resize(Got);
#else
    Error = Path + ": zlib-compressed, and this build has no zlib";
    return false;
#endif
  }
  if (Out.size() != Size) {
    Error = Path + ": size " + std::to_string(Out.size()) + " does not match its name (" + std::to_string(Size) + ")";
    return false;
  }
  uint64_t Got = fnv64(Out.data(), Out.size());
  if (Got != Hash) {
    Error = Path + ": FNV-1a 64 of the contents is " + blobName(Got, Size).substr(0, 16) +
            ", not the hash in its name: the blob is corrupt";
    return false;
  }
  return true;
}

bool verifyBlobs(const std::string &Dir, const Manifest &M, std::string &Error) {
  std::vector<uint8_t> Bytes;
  for (const std::string &B : blobsOf(M))
    if (!readBlob(Dir, B, M.Blobs, Bytes, Error))
      return false;
  return true;
}

const char *const L2Modes = "flush, steady, rotate, rotate-sets, flush-dirty or warm";

bool isL2Mode(const std::string &Text) {
  return Text == "flush" || Text == "steady" || Text == "rotate" || Text == "rotate-sets" ||
         Text == "flush-dirty" || Text == "warm";
}

} // namespace capture
} // namespace kloop
