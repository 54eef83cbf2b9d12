//===- ManifestTest.cpp - kloop-capture/1 manifests, blobs, pointer scan --===//
#include "kloop/Capture/Capture.h"
#include "Support/TestFiles.h"

#include "llvm/Support/FileSystem.h"
#include "gtest/gtest.h"

#include <cstring>
#include <set>

using namespace kloop::capture;
using kloop::testfiles::TempDir;

namespace {

/// A buffer of 8-byte little-endian words.
std::vector<uint8_t> words(std::initializer_list<uint64_t> Ws) {
  std::vector<uint8_t> B;
  for (uint64_t W : Ws)
    for (int I = 0; I < 8; ++I)
      B.push_back(static_cast<uint8_t>(W >> (8 * I)));
  return B;
}

/// Lookup over a fixed list of ranges.
std::function<std::optional<AddressRange>(uint64_t)> ranges(std::vector<AddressRange> Rs) {
  return [Rs](uint64_t V) -> std::optional<AddressRange> {
    for (const AddressRange &R : Rs)
      if (V >= R.Base && V - R.Base < R.Size)
        return R;
    return std::nullopt;
  };
}

TEST(ScanPointers, DirectInteriorAndStructPointers) {
  // saxpy(n, a, x, y) with a struct {float *p; float *q;} by value: n and a share word 0.
  std::vector<uint8_t> B = words({0x3f80000000000400ULL, 0x7f0000001000ULL, 0x7f0000002000ULL + 0x40,
                                  0x7f0000003000ULL, 0x7f0000002ff8ULL});
  auto Found = scanPointers(B.data(), B.size(),
                            ranges({{0x7f0000001000ULL, 0x1000}, {0x7f0000002000ULL, 0x1000},
                                    {0x7f0000003000ULL, 0x100}}));
  ASSERT_EQ(Found.size(), 4u);
  EXPECT_EQ(Found[0].Offset, 8u);
  EXPECT_EQ(Found[0].Range.Base, 0x7f0000001000ULL);
  EXPECT_EQ(Found[1].Offset, 16u); // interior pointer: base + 0x40
  EXPECT_EQ(Found[1].Value, 0x7f0000002040ULL);
  EXPECT_EQ(Found[1].Range.Base, 0x7f0000002000ULL);
  EXPECT_EQ(Found[2].Offset, 24u);
  EXPECT_EQ(Found[3].Offset, 32u); // last element of the second allocation
  EXPECT_EQ(Found[3].Range.Base, 0x7f0000002000ULL);
}

TEST(ScanPointers, LookalikesOutsideRangesAndZeroAreIgnored) {
  std::vector<uint8_t> B = words({0, 0x7f0000000fffULL, 0x7f0000002000ULL, 0x7f0000001800ULL});
  unsigned Asked = 0;
  auto Lookup = ranges({{0x7f0000001000ULL, 0x800}});
  auto Found = scanPointers(B.data(), B.size(), [&](uint64_t V) {
    ++Asked;
    return Lookup(V);
  });
  EXPECT_TRUE(Found.empty()); // one byte before, the end of the range and past it are outside
  EXPECT_EQ(Asked, 3u);       // the zero word is not looked up
}

TEST(ScanPointers, UnalignedWordsAndPartialTailAreIgnored) {
  // A pointer stored at offset 4 (straddling two aligned words) and a 4-byte tail.
  std::vector<uint8_t> B(20, 0);
  uint64_t P = 0x7f0000001000ULL;
  std::memcpy(B.data() + 4, &P, 8);
  std::memcpy(B.data() + 16, &P, 4);
  auto Found = scanPointers(B.data(), B.size(), ranges({{0x7f0000001000ULL, 0x1000}}));
  EXPECT_TRUE(Found.empty());
  // The same pointer at offset 8 is found.
  std::vector<uint8_t> C(16, 0);
  std::memcpy(C.data() + 8, &P, 8);
  Found = scanPointers(C.data(), C.size(), ranges({{0x7f0000001000ULL, 0x1000}}));
  ASSERT_EQ(Found.size(), 1u);
  EXPECT_EQ(Found[0].Offset, 8u);
}

TEST(BlobName, RoundTripAndRejects) {
  uint64_t H = 0, N = 0;
  EXPECT_EQ(blobName(0xabcULL, 4096), "0000000000000abc-4096");
  EXPECT_TRUE(parseBlobName("0000000000000abc-4096", H, N));
  EXPECT_EQ(H, 0xabcULL);
  EXPECT_EQ(N, 4096u);
  EXPECT_FALSE(parseBlobName("0000000000000ABC-4096", H, N));
  EXPECT_FALSE(parseBlobName("000000000000abc-4096", H, N));
  EXPECT_FALSE(parseBlobName("0000000000000abc-", H, N));
  EXPECT_FALSE(parseBlobName("0000000000000abc-12x", H, N));
  EXPECT_FALSE(parseBlobName("../../etc/passwd-1", H, N));
}

TEST(Fnv64, ReferenceVectors) {
  // From the FNV reference test suite (http://www.isthe.com/chongo/tech/comp/fnv/).
  EXPECT_EQ(fnv64("", 0), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv64("a", 1), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(fnv64("foobar", 6), 0x85944171f73967e8ULL);
}

/// A capture with one launch of saxpy: x read, y written, a struct word pointing into y.
Manifest sampleCapture(const std::string &Dir) {
  Manifest M;
  M.Blobs = defaultCompression();
  M.DeviceName = "NVIDIA H200";
  M.DeviceCc = "9.0";
  M.Program = {"./saxpy", "--n", "1024"};
  M.Kernels = {"saxpy"};
  M.LaunchesPerConfig = 2;
  M.GlobalsNote = "not captured";
  BlobWriter W(Dir, M.Blobs);
  EXPECT_TRUE(W.ok()) << W.error();
  Launch L;
  L.Seq = 3;
  L.Kernel = "_Z5saxpyifPKfPf";
  L.Name = "saxpy(int, float, float const*, float*)";
  L.Grid[0] = 4;
  L.Block[0] = 256;
  L.DynamicSmem = 128;
  L.Stream = "created";
  L.Cluster[0] = 2;
  L.Params = {{0, 4}, {4, 4}, {8, 8}, {16, 8}};
  std::vector<uint8_t> Params = words({0x3f80000000000400ULL, 0x7f0000001000ULL, 0x7f0000002010ULL});
  L.ParamBytes = Params.size();
  EXPECT_TRUE(W.put(Params.data(), Params.size(), L.ParamBlob)) << W.error();
  std::vector<float> X(1024, 1.5f), Y0(1024, 0.f), Y1(1024, 2.5f);
  Allocation AX{0x7f0000001000ULL, 4096, "", ""}, AY{0x7f0000002000ULL, 4096, "", ""};
  EXPECT_TRUE(W.put(X.data(), 4096, AX.Before));
  EXPECT_TRUE(W.put(X.data(), 4096, AX.After)); // deduplicated: same name
  EXPECT_TRUE(W.put(Y0.data(), 4096, AY.Before));
  EXPECT_TRUE(W.put(Y1.data(), 4096, AY.After));
  L.Allocations = {AX, AY};
  L.Pointers = {{8, 0x7f0000001000ULL, 0}, {16, 0x7f0000002010ULL, 1}};
  M.Launches.push_back(L);
  M.Refusals.push_back({7, "_Z4mgdPf", "mgd(float*)", "managed memory: parameter word at offset 0"});
  M.LaunchesSkipped = 5;
  M.Cost = {1000, 16384, W.bytesWritten()};
  std::string Err;
  EXPECT_TRUE(writeManifest(Dir, M, Err)) << Err;
  return M;
}

TEST(Manifest, RoundTrip) {
  TempDir D("kloop-capture-test");
  Manifest M = sampleCapture(D.Path.str().str());
  auto Got = readCapture(D.Path);
  ASSERT_TRUE(bool(Got)) << llvm::toString(Got.takeError());
  EXPECT_EQ(manifestToJSON(*Got), manifestToJSON(M));
  ASSERT_EQ(Got->Launches.size(), 1u);
  const Launch &L = Got->Launches[0];
  EXPECT_EQ(L.Allocations[0].Before, L.Allocations[0].After);
  EXPECT_FALSE(L.Allocations[0].written());
  EXPECT_TRUE(L.Allocations[1].written());
  EXPECT_EQ(L.Cluster[0], 2u);
  EXPECT_EQ(Got->Refusals[0].Reason, "managed memory: parameter word at offset 0");
  EXPECT_EQ(blobsOf(*Got).size(), 4u); // params, x (once), y before, y after
  std::vector<uint8_t> Bytes;
  std::string Err;
  ASSERT_TRUE(readBlob(D.Path.str().str(), L.Allocations[1].After, Got->Blobs, Bytes, Err)) << Err;
  ASSERT_EQ(Bytes.size(), 4096u);
  float F;
  std::memcpy(&F, Bytes.data() + 4092, 4);
  EXPECT_EQ(F, 2.5f);
  EXPECT_EQ(capturedBytes(*Got), 8192u);
  auto Totals = kernelTotals(*Got);
  EXPECT_EQ(Totals["_Z5saxpyifPKfPf"].Launches, 1u);
  EXPECT_EQ(Totals["_Z4mgdPf"].Refused, 1u);
}

TEST(Manifest, CompressionShrinksRepetitiveBlobs) {
  if (!zlibAvailable())
    GTEST_SKIP() << "built without zlib";
  TempDir D("kloop-capture-test");
  BlobWriter W(D.Path.str().str(), Compression::Zlib);
  std::vector<uint8_t> Zeros(1 << 20, 0);
  std::string Name;
  ASSERT_TRUE(W.put(Zeros.data(), Zeros.size(), Name)) << W.error();
  EXPECT_LT(W.bytesWritten(), 1u << 14);
  uint64_t Size = 0;
  EXPECT_TRUE(llvm::sys::fs::file_size(D.file("blobs/" + Name), Size) == std::error_code());
  EXPECT_EQ(Size, W.bytesWritten());
}

TEST(Manifest, MissingBlobNamesTheFile) {
  TempDir D("kloop-capture-test");
  Manifest M = sampleCapture(D.Path.str().str());
  std::string Blob = M.Launches[0].Allocations[1].After;
  ASSERT_FALSE(llvm::sys::fs::remove(D.file("blobs/" + Blob)));
  auto Got = readCapture(D.Path, BlobCheck::Exist);
  ASSERT_FALSE(bool(Got));
  std::string E = llvm::toString(Got.takeError());
  EXPECT_NE(E.find(D.file("blobs/" + Blob) + ": blob named in " + D.file("manifest.json") + " is missing"),
            std::string::npos)
      << E;
}

TEST(Manifest, CorruptBlobIsRefused) {
  TempDir D("kloop-capture-test");
  Manifest M = sampleCapture(D.Path.str().str());
  std::string Blob = M.Launches[0].Allocations[1].After;
  std::string Path = D.file("blobs/" + Blob);
  std::string Bytes = kloop::testfiles::slurp(Path);
  // Cheap check passes, the contents check names the blob.
  Bytes[Bytes.size() / 2] ^= 0x5a;
  kloop::testfiles::put(Path, Bytes);
  EXPECT_TRUE(bool(readCapture(D.Path, BlobCheck::Exist)));
  auto Got = readCapture(D.Path, BlobCheck::Contents);
  ASSERT_FALSE(bool(Got));
  std::string E = llvm::toString(Got.takeError());
  EXPECT_EQ(E.rfind(Path + ": ", 0), 0u) << E;
  // Truncated.
  kloop::testfiles::put(Path, Bytes.substr(0, Bytes.size() / 3));
  Got = readCapture(D.Path, BlobCheck::Contents);
  ASSERT_FALSE(bool(Got));
  E = llvm::toString(Got.takeError());
  EXPECT_EQ(E.rfind(Path + ": ", 0), 0u) << E;
}

TEST(Manifest, WrongVersionNamesTheFile) {
  TempDir D("kloop-capture-test");
  sampleCapture(D.Path.str().str());
  std::string Text = kloop::testfiles::slurp(D.file("manifest.json"));
  size_t At = Text.find("kloop-capture/1");
  ASSERT_NE(At, std::string::npos);
  Text.replace(At, 15, "kloop-capture/2");
  kloop::testfiles::put(D.file("manifest.json"), Text);
  auto Got = readCapture(D.Path);
  ASSERT_FALSE(bool(Got));
  EXPECT_EQ(llvm::toString(Got.takeError()),
            D.file("manifest.json") +
                ": schema: expected \"kloop-capture/1\", found \"kloop-capture/2\" (written by another kloop version?)");
}

TEST(Manifest, MalformedMembersAreNamed) {
  struct Case {
    const char *From, *To, *Expect;
  } Cases[] = {
      {"\"allocation\": 1", "\"allocation\": 9", "launches[0].pointers[1].allocation: index 9 is out of range"},
      {"\"offset\": 16,\n          \"value\"", "\"offset\": 12,\n          \"value\"",
       "launches[0].pointers[1].offset: 12 is not an 8-byte aligned word"},
      {"\"base\": \"0x7f0000002000\"", "\"base\": \"7f0000002000\"",
       "launches[0].allocations[1].base: expected a hexadecimal address"},
      {"\"grid\": [", "\"grid\": [-1, ", "launches[0].grid: expected an array of 3 integers"},
      {"\"compression\"", "\"compressio\"", "compression: missing"},
      {"\"param_bytes\": 24", "\"param_bytes\": 32", "launches[0].param_bytes: 32 does not match"},
  };
  for (const Case &C : Cases) {
    TempDir D("kloop-capture-test");
    sampleCapture(D.Path.str().str());
    std::string Text = kloop::testfiles::slurp(D.file("manifest.json"));
    size_t At = Text.find(C.From);
    ASSERT_NE(At, std::string::npos) << C.From << "\n" << Text;
    Text.replace(At, std::strlen(C.From), C.To);
    kloop::testfiles::put(D.file("manifest.json"), Text);
    auto Got = readCapture(D.Path, BlobCheck::Exist);
    ASSERT_FALSE(bool(Got)) << C.Expect;
    std::string E = llvm::toString(Got.takeError());
    EXPECT_NE(E.find(D.file("manifest.json") + ": " + C.Expect), std::string::npos) << E;
  }
}

TEST(Manifest, MissingManifestAndInvalidJSON) {
  TempDir D("kloop-capture-test");
  auto Got = readCapture(D.Path);
  ASSERT_FALSE(bool(Got));
  EXPECT_EQ(llvm::toString(Got.takeError()).rfind(D.file("manifest.json") + ": cannot read", 0), 0u);
  kloop::testfiles::put(D.file("manifest.json"), "{\"schema\": ");
  Got = readCapture(D.Path);
  ASSERT_FALSE(bool(Got));
  EXPECT_EQ(llvm::toString(Got.takeError()), D.file("manifest.json") + ": not valid JSON");
}

// The pad before a buffer set (kloop compare's rounds, the replay worker's placements): 2 MiB steps below
// the maximum, repeatable, spread over the choices, and a function of every bit of the key.
TEST(Manifest, PlacementPadsAreDrawnInLargePagesBelowTheMaximum) {
  std::set<uint64_t> Seen;
  for (uint64_t Key = 0; Key < 256; ++Key) {
    uint64_t P = placementPadBytes(128, Key);
    EXPECT_EQ(P % (2u << 20), 0u);
    EXPECT_LT(P, uint64_t(128) << 20);
    EXPECT_EQ(P, placementPadBytes(128, Key));
    Seen.insert(P);
  }
  EXPECT_GT(Seen.size(), 55u); // 256 draws of 64 values: about 63 distinct
  EXPECT_NE(placementPadBytes(4096, 1), placementPadBytes(4096, 1ull << 63));
  for (unsigned Off : {0u, 1u, 2u, 3u})
    EXPECT_EQ(placementPadBytes(Off, 12345), 0u);
  EXPECT_LT(placementPadBytes(4, 12345), uint64_t(4) << 20);
}

} // namespace
