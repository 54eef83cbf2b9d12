//===- ProfileTest.cpp - Tests of the kloop-cupti/1 reader ----------------===//
#include "kloop/Verify/Profile.h"
#include "TestProfiles.h"
#include "gtest/gtest.h"

using namespace kloop::verify;
using namespace kloop::verify::test;
using nlohmann::json;

namespace {

bool contains(const std::string &Hay, const std::string &Needle) {
  return Hay.find(Needle) != std::string::npos;
}

/// Parses J (as text) and returns the error message ("" on success).
std::string parseError(const json &J) {
  auto P = parseProfile(J.dump(), "/tmp/run/out.json");
  if (P)
    return "";
  return llvm::toString(P.takeError());
}

TEST(Profile, CaptureHashIsTheBufferHash) {
  // The values of test/Inputs/buffer_hash.py (unittests/Support/BufferHashTest.cpp has more).
  EXPECT_EQ(bufferHashOf({}), 0xb4a7ee98a78dbad5ULL);
  const uint8_t Foobar[] = {'f', 'o', 'o', 'b', 'a', 'r'};
  EXPECT_EQ(bufferHashOf(Foobar), 0x60a7e207dbcbfd63ULL);
}

TEST(Profile, ReadsEveryField) {
  TempDir D;
  ProfileBuilder B(D, "base");
  B.launch("_Z4initPf", "init(float*)", 500);
  B.capture("_Z5saxpyifPKfPf", "saxpy(int, float, float const*, float*)", 0, 3,
            bytesOf(std::vector<float>{1, 2, 3}));
  B.J["nvml"] = true;
  B.J["device"]["pci_bus_id"] = "0000:19:00.0";
  B.J["env_samples"].push_back({{"t_ns", 5},
                                {"sm_clock_mhz", 1980},
                                {"mem_clock_mhz", 3201},
                                {"temp_c", 40},
                                {"power_mw", 120000},
                                {"throttle_reasons", 4},
                                {"gpu_util_pct", 97},
                                {"mem_util_pct", 40},
                                {"compute_processes", 3},
                                {"foreign_processes", 2},
                                {"foreign_pids", {4242, 4243}}});
  // The sampler writes -1 for every field NVML could not read (tools/kloop-cupti/NvmlSampler.h).
  B.J["env_samples"].push_back({{"t_ns", 9},
                                {"sm_clock_mhz", -1},
                                {"mem_clock_mhz", -1},
                                {"temp_c", -1},
                                {"power_mw", -1},
                                {"throttle_reasons", -1},
                                {"gpu_util_pct", -1},
                                {"mem_util_pct", -1},
                                {"compute_processes", -1},
                                {"foreign_processes", -1},
                                {"foreign_pids", json::array()}});
  Profile P = B.read();
  EXPECT_EQ(P.Device.Name, "NVIDIA H200");
  EXPECT_EQ(P.Device.ComputeCapability, "9.0");
  EXPECT_EQ(P.Device.L2Bytes, 62914560u);
  EXPECT_EQ(P.Device.PciBusId, "0000:19:00.0");
  ASSERT_EQ(P.Launches.size(), 2u);
  EXPECT_EQ(P.Launches[0].Kernel, "_Z4initPf");
  EXPECT_EQ(P.Launches[0].DurationNs, 500u);
  EXPECT_EQ(P.Launches[1].Grid[0], 64u);
  EXPECT_EQ(P.Launches[1].Block[0], 256u);
  EXPECT_EQ(P.Launches[1].Stream, 7u);
  ASSERT_EQ(P.EnvSamples.size(), 2u);
  EXPECT_TRUE(P.Nvml);
  EXPECT_EQ(P.EnvSamples[0].SmClockMHz, 1980u);
  EXPECT_EQ(P.EnvSamples[0].ThrottleReasons, 4u);
  EXPECT_EQ(P.EnvSamples[0].GpuUtilPct, 97u);
  EXPECT_EQ(P.EnvSamples[0].MemUtilPct, 40u);
  EXPECT_EQ(P.EnvSamples[0].ComputeProcesses, 3u);
  EXPECT_EQ(P.EnvSamples[0].ForeignProcesses, 2u);
  EXPECT_EQ(P.EnvSamples[0].ForeignPids, (std::vector<uint64_t>{4242, 4243}));
  // -1: NVML could not tell; unknown, not foreign.
  EXPECT_FALSE(P.EnvSamples[1].GpuUtilPct.has_value());
  EXPECT_FALSE(P.EnvSamples[1].SmClockMHz.has_value());
  EXPECT_FALSE(P.EnvSamples[1].MemClockMHz.has_value());
  EXPECT_FALSE(P.EnvSamples[1].TempC.has_value());
  EXPECT_FALSE(P.EnvSamples[1].PowerMw.has_value());
  EXPECT_FALSE(P.EnvSamples[1].ThrottleReasons.has_value());
  EXPECT_FALSE(P.EnvSamples[1].ComputeProcesses.has_value());
  EXPECT_FALSE(P.EnvSamples[1].ForeignProcesses.has_value());
  EXPECT_TRUE(P.EnvSamples[1].ForeignPids.empty());
  EXPECT_EQ(P.OverheadWallNs, 1234u);
  ASSERT_EQ(P.Captures.size(), 1u);
  const CaptureRecord &C = P.Captures[0];
  EXPECT_EQ(C.Seq, 1u);
  EXPECT_EQ(C.Arg, 3u);
  EXPECT_EQ(C.Bytes, 12u);
  EXPECT_EQ(C.Ptr, 0x7f0000001000ULL);
  EXPECT_TRUE(C.Poisoned);
  EXPECT_EQ(C.DumpPath, D.file("base.json.k1.a3.bin"));
  auto Bytes = readDump(C);
  ASSERT_TRUE(static_cast<bool>(Bytes)) << llvm::toString(Bytes.takeError());
  EXPECT_EQ(dumpBytes(**Bytes).vec(), bytesOf(std::vector<float>{1, 2, 3}));
}

TEST(Profile, OptionalMembersMayBeAbsent) {
  json J = {{"schema", "kloop-cupti/1"},
            {"launches", json::array()},
            {"captures",
             {{{"seq", 0},
               {"kernel", "k"},
               {"kernel_ordinal", 0},
               {"arg", 0},
               {"bytes", 4},
               {"hash", "0123456789abcdef"},
               {"dump", nullptr}}}}};
  auto P = parseProfile(J.dump(), "x.json");
  ASSERT_TRUE(static_cast<bool>(P)) << llvm::toString(P.takeError());
  EXPECT_FALSE(P->Nvml);
  EXPECT_TRUE(P->EnvSamples.empty());
  EXPECT_TRUE(P->Captures[0].DumpPath.empty());
  EXPECT_FALSE(P->Captures[0].Poisoned);
  EXPECT_EQ(P->Captures[0].Hash, 0x0123456789abcdefULL);
}

TEST(Profile, MalformedFilesNameTheFileAndField) {
  TempDir D;
  ProfileBuilder B(D, "m");
  B.capture("_Z1kPf", "k(float*)", 0, 0, bytesOf(std::vector<float>{1}));
  const json Good = B.J;
  EXPECT_EQ(parseError(Good), "");

  EXPECT_EQ(parseError(json::array()),
            "/tmp/run/out.json: <root>: expected an object")
      << "an array is not a profile";
  {
    auto P = parseProfile("{\"schema\": \"kloop-cupti/1\", ", "/tmp/t.json");
    ASSERT_FALSE(static_cast<bool>(P));
    EXPECT_EQ(llvm::toString(P.takeError()), "/tmp/t.json: not valid JSON");
  }
  json J = Good;
  J["schema"] = "kloop-cupti/2";
  EXPECT_TRUE(contains(parseError(J), "/tmp/run/out.json: schema: expected "
                                      "\"kloop-cupti/1\", found "
                                      "\"kloop-cupti/2\""));
  J = Good;
  J.erase("launches");
  EXPECT_EQ(parseError(J), "/tmp/run/out.json: launches: missing");
  J = Good;
  J["launches"][0]["duration_ns"] = -5;
  EXPECT_EQ(parseError(J), "/tmp/run/out.json: launches[0].duration_ns: "
                           "expected a non-negative integer");
  J = Good;
  J["launches"][0]["grid"] = {1, 2};
  EXPECT_TRUE(contains(parseError(J), "launches[0].grid: expected an array of "
                                      "3"));
  J = Good;
  J["device"]["pci_bus_id"] = 19;
  EXPECT_EQ(parseError(J), "/tmp/run/out.json: device.pci_bus_id: expected a string");
  J = Good;
  J["captures"][0]["hash"] = "xyz";
  EXPECT_TRUE(contains(parseError(J), "captures[0].hash: expected 16 hex "
                                      "digits"));
  J = Good;
  J["captures"][0]["dump"] = 7;
  EXPECT_TRUE(
      contains(parseError(J), "captures[0].dump: expected a string or null"));
  J = Good;
  J["captures"][0]["ptr"] = "nowhere";
  EXPECT_TRUE(contains(parseError(J), "captures[0].ptr: expected a "
                                      "hexadecimal address"));
  J = Good;
  J["captures"][0].erase("kernel_ordinal");
  EXPECT_EQ(parseError(J),
            "/tmp/run/out.json: captures[0].kernel_ordinal: missing");
  J = Good;
  J["captures"].push_back(J["captures"][0]);
  EXPECT_TRUE(contains(parseError(J), "captures[1]: duplicate capture of "
                                      "kernel _Z1kPf ordinal 0 arg 0"));
  J = Good;
  J["nvml"] = "yes";
  EXPECT_EQ(parseError(J), "/tmp/run/out.json: nvml: expected true or false");
  J = Good;
  J["env_samples"] = {{{"sm_clock_mhz", 1}}};
  EXPECT_EQ(parseError(J), "/tmp/run/out.json: env_samples[0].t_ns: missing");
  J["env_samples"] = {{{"t_ns", 1}, {"foreign_processes", -2}}};
  EXPECT_EQ(parseError(J), "/tmp/run/out.json: env_samples[0].foreign_processes: "
                           "expected -1 or a non-negative integer");
  J["env_samples"] = {{{"t_ns", 1}, {"foreign_processes", "one"}}};
  EXPECT_EQ(parseError(J), "/tmp/run/out.json: env_samples[0].foreign_processes: "
                           "expected -1 or a non-negative integer");
  J["env_samples"] = {{{"t_ns", 1}, {"foreign_pids", {"4242"}}}};
  EXPECT_EQ(parseError(J), "/tmp/run/out.json: env_samples[0].foreign_pids: "
                           "expected an array of process ids");
}

TEST(Profile, EnvSampleWithoutProcessFieldsIsUnknownNotForeign) {
  // A profile of a library older than the process fields.
  json J = {{"schema", "kloop-cupti/1"},
            {"launches", json::array()},
            {"captures", json::array()},
            {"nvml", true},
            {"env_samples", {{{"t_ns", 0}, {"throttle_reasons", 0}}}}};
  auto P = parseProfile(J.dump(), "old.json");
  ASSERT_TRUE(static_cast<bool>(P)) << llvm::toString(P.takeError());
  ASSERT_EQ(P->EnvSamples.size(), 1u);
  EXPECT_FALSE(P->EnvSamples[0].ForeignProcesses.has_value());
  EXPECT_FALSE(P->EnvSamples[0].ComputeProcesses.has_value());
  EXPECT_FALSE(P->EnvSamples[0].GpuUtilPct.has_value());
}

TEST(Profile, UnreadableFile) {
  TempDir D;
  auto P = readProfile(D.file("absent.json"));
  ASSERT_FALSE(static_cast<bool>(P));
  std::string Msg = llvm::toString(P.takeError());
  EXPECT_TRUE(contains(Msg, "cannot read profile"));
  EXPECT_TRUE(contains(Msg, "absent.json"));
}

TEST(Profile, CorruptOrMissingDumpsAreErrors) {
  TempDir D;
  ProfileBuilder B(D, "c");
  B.capture("_Z1kPf", "k(float*)", 0, 0, bytesOf(std::vector<float>{1, 2}));
  B.capture("_Z1kPf", "k(float*)", 1, 0, bytesOf(std::vector<float>{3, 4}));
  B.capture("_Z1kPf", "k(float*)", 2, 0, bytesOf(std::vector<float>{5, 6}));
  B.capture("_Z1kPf", "k(float*)", 3, 0, bytesOf(std::vector<float>{7}),
            /*Dump=*/false);
  Profile P = B.read();
  // Same size, other bytes: the recorded hash no longer matches.
  D.write("c.json.k0.a0.bin",
          llvm::StringRef("\0\0\0\0\0\0\0\0", 8));
  auto E1 = readDump(P.Captures[0]);
  ASSERT_FALSE(static_cast<bool>(E1));
  std::string M1 = llvm::toString(E1.takeError());
  EXPECT_TRUE(contains(M1, "c.json.k0.a0.bin hashes to"));
  EXPECT_TRUE(contains(M1, "corrupt or stale dump"));
  D.write("c.json.k1.a0.bin", "abc");
  auto E2 = readDump(P.Captures[1]);
  ASSERT_FALSE(static_cast<bool>(E2));
  EXPECT_TRUE(contains(llvm::toString(E2.takeError()),
                       "has 3 bytes but the capture records 8"));
  llvm::sys::fs::remove(D.file("c.json.k2.a0.bin"));
  auto E3 = readDump(P.Captures[2]);
  ASSERT_FALSE(static_cast<bool>(E3));
  EXPECT_TRUE(contains(llvm::toString(E3.takeError()), "cannot read dump"));
  auto E4 = readDump(P.Captures[3]);
  ASSERT_FALSE(static_cast<bool>(E4));
  EXPECT_TRUE(contains(llvm::toString(E4.takeError()), "has no dump"));
}

} // namespace

// libkloop-cupti writes "seq": -1 for a kernel record whose launch call it did
// not see (docs/cupti.md); the reader must accept it (it used to reject the
// whole profile as corrupt) and must still refuse other negative values. The
// optional "memory", "l2_flush" and "stream_kind" members are read too.
TEST(Profile, UnseenLaunchSeqAndNewMembers) {
  auto Launch = [](int64_t Seq) {
    return json{{"seq", Seq},        {"kernel", "k"},     {"grid", {1, 1, 1}},
                {"block", {32, 1, 1}}, {"start_ns", 10},    {"end_ns", 20},
                {"duration_ns", 10},   {"stream_kind", "created"}};
  };
  json J = {{"schema", "kloop-cupti/1"},
            {"launches", {Launch(0), Launch(-1)}},
            {"captures", json::array()},
            {"memory", {{"live_allocations", 2}, {"live_bytes", 96}, {"peak_bytes", 128}}},
            {"l2_flush", {{"enabled", true}, {"flushes", 1}, {"skipped", 1}, {"bytes", 1024}}}};
  auto P = parseProfile(J.dump(), "x.json");
  ASSERT_TRUE(static_cast<bool>(P)) << llvm::toString(P.takeError());
  ASSERT_EQ(P->Launches.size(), 2u);
  EXPECT_EQ(P->Launches[0].Seq, 0u);
  EXPECT_EQ(P->Launches[1].Seq, UnseenLaunchSeq);
  EXPECT_EQ(P->Launches[1].StreamKind, "created");
  EXPECT_TRUE(P->Memory.Known);
  EXPECT_EQ(P->Memory.LiveAllocations, 2u);
  EXPECT_EQ(P->Memory.LiveBytes, 96u);
  EXPECT_EQ(P->Memory.PeakBytes, 128u);
  EXPECT_TRUE(P->L2Flush.Known && P->L2Flush.Enabled);
  EXPECT_EQ(P->L2Flush.Flushes, 1u);
  EXPECT_EQ(P->L2Flush.Skipped, 1u);

  J["launches"][1]["seq"] = -2;
  auto Bad = parseProfile(J.dump(), "x.json");
  ASSERT_FALSE(static_cast<bool>(Bad));
  EXPECT_NE(llvm::toString(Bad.takeError()).find("x.json: launches[1].seq: expected -1 or a non-negative integer"),
            std::string::npos);
}

// "errors", "dropped_records" and "kernel_trace" are read; profileProblems() names what makes a profile
// incomplete, and says nothing for a clean one. Malformed members are errors with their path.
TEST(Profile, ErrorsDroppedRecordsAndKernelTrace) {
  json J = {{"schema", "kloop-cupti/1"}, {"launches", json::array()}, {"captures", json::array()}};
  auto Clean = parseProfile(J.dump(), "c.json");
  ASSERT_TRUE(static_cast<bool>(Clean)) << llvm::toString(Clean.takeError());
  EXPECT_EQ(profileProblems(*Clean), "");
  EXPECT_EQ(Clean->KernelTrace, "");

  J["errors"] = {"a failed", "b failed", "c failed", "d failed"};
  J["dropped_records"] = 5;
  J["kernel_trace"] = "serial";
  auto P = parseProfile(J.dump(), "p.json");
  ASSERT_TRUE(static_cast<bool>(P)) << llvm::toString(P.takeError());
  EXPECT_EQ(P->Errors.size(), 4u);
  EXPECT_EQ(P->DroppedRecords, 5u);
  EXPECT_EQ(P->KernelTrace, "serial");
  std::string M = profileProblems(*P);
  EXPECT_NE(M.find("profile p.json is incomplete: 4 error(s)"), std::string::npos) << M;
  EXPECT_NE(M.find("'a failed'; 'b failed'; 'c failed'; ...)"), std::string::npos) << M;
  EXPECT_EQ(M.find("d failed"), std::string::npos) << M;
  EXPECT_NE(M.find("5 kernel record(s) dropped"), std::string::npos) << M;

  J["errors"] = {"ok", 3};
  auto Bad = parseProfile(J.dump(), "b.json");
  ASSERT_FALSE(static_cast<bool>(Bad));
  EXPECT_NE(llvm::toString(Bad.takeError()).find("b.json: errors[1]: expected a string"), std::string::npos);
  J["errors"] = "oops";
  auto Bad2 = parseProfile(J.dump(), "b.json");
  ASSERT_FALSE(static_cast<bool>(Bad2));
  EXPECT_NE(llvm::toString(Bad2.takeError()).find("b.json: errors: expected an array of strings"), std::string::npos);
}
