//===- ConfigTest.cpp - .kloop.yaml parsing, validation, placeholders -----===//
#include "kloop/Measure/Config.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

using namespace kloop::measure;
using namespace llvm;

namespace {

const char *Full = R"(version: 1
name: saxpy
sources: [saxpy.cu]
protected: [harness.h]
build:
  command: "nvcc -O3 -arch=sm_90 -o {build_dir}/saxpy {source_dir}/saxpy.cu"
  timeout_s: 300
run:
  command: "{build_dir}/saxpy --n {n} --seed {seed} --iters {iters}"
  cwd: "."
  env: {FOO: "1"}
  timeout_s: 60
targets: [saxpy]
iters: 20
seeds: 3
held_out_seeds: 1
l2: rotate
shapes:
  - {name: n16M, args: {n: "16777216"}, bytes: 201326592, flops: 33554432}
  - {name: n1M, args: {n: "1048576"}, bytes: 12582912, flops: 2097152, held_out: true}
outputs:
  - {kernel: saxpy, arg: 1, dtype: f32, tolerance: {kind: rel, value: 1.0e-5}}
)";

/// Parses \p Text and returns the error message ("" on success).
std::string errorOf(StringRef Text) {
  auto C = parseConfig(Text, "w/.kloop.yaml");
  if (C)
    return "";
  return toString(C.takeError());
}

/// The full example with \p From replaced by \p To (must occur).
std::string variant(StringRef From, StringRef To) {
  std::string S = Full;
  size_t P = S.find(From.str());
  EXPECT_NE(P, std::string::npos) << From.str();
  if (P != std::string::npos)
    S.replace(P, From.size(), To.str());
  return S;
}

TEST(ConfigTest, ParsesTheDocumentedExample) {
  auto C = parseConfig(Full, "w/.kloop.yaml");
  ASSERT_TRUE(bool(C)) << toString(C.takeError());
  EXPECT_EQ(C->Name, "saxpy");
  EXPECT_EQ(C->Version, 1u);
  ASSERT_EQ(C->Sources.size(), 1u);
  EXPECT_EQ(C->Sources[0], "saxpy.cu");
  EXPECT_EQ(C->Protected[0], "harness.h");
  EXPECT_EQ(C->Build.TimeoutS, 300u);
  EXPECT_EQ(C->Run.TimeoutS, 60u);
  EXPECT_EQ(C->Run.Env.at("FOO"), "1");
  EXPECT_EQ(C->Run.Cwd, ".");
  EXPECT_EQ(C->Targets, std::vector<std::string>{"saxpy"});
  EXPECT_EQ(C->Iters, 20u);
  EXPECT_EQ(C->Seeds, 3u);
  EXPECT_EQ(C->HeldOutSeeds, 1u);
  EXPECT_EQ(C->L2, L2Policy::Rotate);
  ASSERT_EQ(C->Shapes.size(), 2u);
  EXPECT_EQ(C->Shapes[0].Name, "n16M");
  EXPECT_EQ(C->Shapes[0].Args.at("n"), "16777216");
  EXPECT_EQ(*C->Shapes[0].Bytes, 201326592u);
  EXPECT_EQ(*C->Shapes[0].Flops, 33554432u);
  EXPECT_FALSE(C->Shapes[0].HeldOut);
  EXPECT_TRUE(C->Shapes[1].HeldOut);
  ASSERT_EQ(C->Outputs.size(), 1u);
  EXPECT_EQ(C->Outputs[0].Kernel, "saxpy");
  EXPECT_EQ(C->Outputs[0].Arg, 1u);
  EXPECT_EQ(C->Outputs[0].DType, "f32");
  EXPECT_EQ(C->Outputs[0].Tol.Kind, ToleranceKind::Rel);
  EXPECT_DOUBLE_EQ(C->Outputs[0].Tol.Value, 1.0e-5);
  EXPECT_EQ(C->seedList(false), (std::vector<unsigned>{0, 1, 2}));
  EXPECT_EQ(C->seedList(true), (std::vector<unsigned>{0, 1, 2, 3}));
  EXPECT_TRUE(C->isTarget("saxpy(int, float, float const*, float*)"));
  EXPECT_FALSE(C->isTarget("daxpy(int)"));
  EXPECT_NE(C->findShape("n1M"), nullptr);
  EXPECT_EQ(C->findShape("n2M"), nullptr);
  EXPECT_TRUE(StringRef(C->Path).ends_with("w/.kloop.yaml"));
  EXPECT_TRUE(StringRef(C->Dir).ends_with("w"));
}

TEST(ConfigTest, DefaultsForOptionalFields) {
  auto C = parseConfig("name: x\nbuild: {command: make}\nrun: {command: ./x}\ntargets: [k]\n", "a.yaml");
  ASSERT_TRUE(bool(C)) << toString(C.takeError());
  EXPECT_EQ(C->Build.TimeoutS, 600u);
  EXPECT_EQ(C->Run.TimeoutS, 120u);
  EXPECT_EQ(C->Iters, 20u);
  EXPECT_EQ(C->Seeds, 1u);
  EXPECT_EQ(C->HeldOutSeeds, 0u);
  EXPECT_EQ(C->L2, L2Policy::None);
  EXPECT_EQ(C->PlacementPadMiB, 128u);
  ASSERT_EQ(C->Shapes.size(), 1u);
  EXPECT_EQ(C->Shapes[0].Name, "default");
  EXPECT_FALSE(C->Shapes[0].Bytes.has_value());
}

TEST(ConfigTest, ExactToleranceNeedsNoValue) {
  auto C = parseConfig(variant("{kind: rel, value: 1.0e-5}", "{kind: exact}"), "w.yaml");
  ASSERT_TRUE(bool(C)) << toString(C.takeError());
  EXPECT_EQ(C->Outputs[0].Tol.Kind, ToleranceKind::Exact);
}

// outputs[].access: write (the default: poisoned before each captured launch)
// or readwrite (the kernel reads the buffer: not poisoned, still compared).
TEST(ConfigTest, OutputAccess) {
  auto C = parseConfig(Full, "w.yaml");
  ASSERT_TRUE(bool(C)) << toString(C.takeError());
  EXPECT_EQ(C->Outputs[0].Access, OutputAccess::Write);
  for (auto [Text, Want] : {std::pair{"write", OutputAccess::Write}, std::pair{"readwrite", OutputAccess::ReadWrite}}) {
    auto V = parseConfig(variant("dtype: f32,", std::string("dtype: f32, access: ") + Text + ","), "w.yaml");
    ASSERT_TRUE(bool(V)) << toString(V.takeError());
    EXPECT_EQ(V->Outputs[0].Access, Want) << Text;
    EXPECT_EQ(toString(Want), Text);
  }
}

// Each validation error names the file, a line:col, and the field.
struct BadCase {
  const char *From, *To, *Expect;
};

class ConfigErrorTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(ConfigErrorTest, NamesFileAndField) {
  BadCase B = GetParam();
  std::string E = errorOf(variant(B.From, B.To));
  EXPECT_NE(E.find("w/.kloop.yaml:"), std::string::npos) << E;
  EXPECT_NE(E.find("error:"), std::string::npos) << E;
  EXPECT_NE(E.find(B.Expect), std::string::npos) << "expected '" << B.Expect << "' in: " << E;
}

INSTANTIATE_TEST_SUITE_P(
    All, ConfigErrorTest,
    ::testing::Values(
        BadCase{"iters: 20", "iterz: 20", "unknown key 'iterz'"},
        BadCase{"  timeout_s: 300", "  timeout: 300", "unknown key 'timeout'"},
        BadCase{"  command: \"nvcc", "  cmd: \"nvcc", "unknown key 'cmd'"},
        BadCase{"build:\n  command: \"nvcc -O3 -arch=sm_90 -o {build_dir}/saxpy {source_dir}/saxpy.cu\"",
                "build:\n  cwd: \".\"", "build.command: missing"},
        BadCase{"  command: \"{build_dir}/saxpy --n {n} --seed {seed} --iters {iters}\"\n", "",
                "run.command: missing"},
        BadCase{"name: saxpy\n", "", "name: missing"},
        BadCase{"{name: n16M, args", "{args", "shapes[0].name: missing"},
        BadCase{"{name: n1M,", "{name: n16M,", "duplicate shape name 'n16M'"},
        BadCase{"kind: rel", "kind: relative", "tolerance.kind: 'relative' is not one of abs|rel|ulp|exact"},
        BadCase{"value: 1.0e-5", "value: -1.0e-5", "tolerance.value: must not be negative"},
        BadCase{"value: 1.0e-5", "value: tiny", "tolerance.value: expected a number"},
        BadCase{"{kind: rel, value: 1.0e-5}", "{kind: exact, value: 0.5}", "must be 0 or absent for kind exact"},
        BadCase{"{kind: rel, value: 1.0e-5}", "{kind: ulp, value: 1.5}", "whole number of ULPs"},
        BadCase{"{kind: rel, value: 1.0e-5}", "{kind: abs}", "tolerance.value: missing"},
        BadCase{"  timeout_s: 300", "  timeout_s: -5", "build.timeout_s: expected a non-negative integer, got '-5'"},
        BadCase{"  timeout_s: 60", "  timeout_s: 0", "run.timeout_s: must be positive"},
        BadCase{"  timeout_s: 60", "  timeout_s: 60\n  drain_timeout_s: 0", "run.drain_timeout_s: must be positive"},
        BadCase{"  timeout_s: 60", "  timeout_s: 60\n  drain_timeout_s: 2.5",
                "run.drain_timeout_s: expected a non-negative integer, got '2.5'"},
        BadCase{"  timeout_s: 60", "  timeout_s: 60\n  drain_timeout_s: 3601",
                "run.drain_timeout_s: 3601 is out of range (at most 3600)"},
        BadCase{"  timeout_s: 300", "  timeout_s: 300\n  drain_timeout_s: 5", "unknown key 'drain_timeout_s'"},
        BadCase{"bytes: 201326592", "bytes: -1", "shapes[n16M].bytes: expected a non-negative integer"},
        BadCase{"flops: 2097152", "flops: 2e6", "shapes[n1M].flops: expected a non-negative integer"},
        BadCase{"held_out: true", "held_out: maybe", "shapes[n1M].held_out: expected true or false"},
        BadCase{"iters: 20", "iters: -3", "iters: expected a non-negative integer, got '-3'"},
        BadCase{"iters: 20", "iters: 0", "iters: must be at least 1"},
        BadCase{"seeds: 3", "seeds: three", "seeds: expected a non-negative integer"},
        BadCase{"held_out_seeds: 1", "held_out_seeds: -1", "held_out_seeds: expected a non-negative integer"},
        BadCase{"l2: rotate", "l2: evict", "l2: 'evict' is not one of rotate|flush|none"},
        BadCase{"version: 1", "version: 2", "version: 2 is not supported"},
        BadCase{"dtype: f32", "dtype: float", "outputs[0].dtype: 'float' is not one of"},
        BadCase{"arg: 1, ", "", "outputs[0].arg: missing"},
        BadCase{"dtype: f32,", "dtype: f32, access: rw,", "outputs[0].access: 'rw' is not one of write|readwrite"},
        BadCase{"dtype: f32,", "dtype: f32, access: read,", "outputs[0].access: 'read' is not one of write|readwrite"},
        BadCase{"dtype: f32,", "dtype: f32, acces: readwrite,", "unknown key 'acces'"},
        BadCase{"arg: 1", "arg: -1", "outputs[0].arg: expected a non-negative integer"},
        BadCase{"{kernel: saxpy,", "{kernel: daxpy,", "kernel 'daxpy' contains none of the targets"},
        BadCase{"targets: [saxpy]", "targets: []", "targets: missing or empty"},
        BadCase{"--iters {iters}", "--iters {iterations}", "run.command: unknown placeholder '{iterations}'"},
        BadCase{"{name: n1M, args: {n: \"1048576\"}", "{name: n1M, args: {m: \"1048576\"}",
                "shape 'n1M' has no such key in args"},
        BadCase{"-o {build_dir}/saxpy", "-o {build_dir}/saxpy{seed}", "build.command: placeholder '{seed}'"},
        BadCase{"  env: {FOO: \"1\"}", "  env: {\"FOO BAR\": \"1\"}", "run.env: 'FOO BAR' is not a valid"},
        BadCase{"sources: [saxpy.cu]", "sources: [\"\"]", "sources: empty file name"},
        BadCase{"{name: n16M, args: {n: \"16777216\"}", "{name: n16M, args: {seed: \"1\", n: \"16777216\"}",
                "'seed' is reserved"},
        BadCase{"{name: n16M,", "{name: n16M, held_out: true,", "every shape is held_out"},
        BadCase{"targets: [saxpy]", "targets: saxpy", "targets"},
        BadCase{"l2: rotate", "l2: [rotate", "w/.kloop.yaml:21:1: error: Expected , between entries!"},
        BadCase{"  cwd: \".\"", "  cwd: \".\"\n  cwd: \"..\"", "duplicated mapping key 'cwd'"},
        BadCase{"l2: rotate", "l2: rotate\nsearch: {timing: fast}", "search.timing: 'fast' is not one of auto|replay|workload"},
        BadCase{"l2: rotate", "l2: rotate\nsearch: {timng: replay}", "unknown key 'timng'"},
        BadCase{"l2: rotate", "l2: rotate\nsearch: {cubin_command: \"nvcc -o {cubin} {seed}.cu\"}",
                "search.cubin_command: placeholder '{seed}' is not available (only {source_dir} {cubin})"},
        BadCase{"l2: rotate", "l2: rotate\nsearch: {cubin_command: \" \"}", "search.cubin_command: must not be empty"},
        BadCase{"l2: rotate", "l2: rotate\nsearch: {replay_l2: cold}",
                "search.replay_l2: 'cold' is not one of flush, steady, rotate, rotate-sets, flush-dirty or warm"},
        BadCase{"l2: rotate", "l2: rotate\nsearch: {replay_placements: 0}",
                "search.replay_placements: 0 is out of range (1 to 16"},
        BadCase{"l2: rotate", "l2: rotate\nsearch: {replay_placements: 17}",
                "search.replay_placements: 17 is out of range (at most 16)"},
        BadCase{"l2: rotate", "l2: rotate\nsearch: {replay_placements: two}",
                "search.replay_placements: expected a non-negative integer, got 'two'"},
        BadCase{"l2: rotate", "l2: rotate\nsearch: {replay_train: 257}",
                "search.replay_train: 257 is out of range (at most 256)"},
        BadCase{"l2: rotate", "l2: rotate\nsearch: {replay_train: -1}",
                "search.replay_train: expected a non-negative integer, got '-1'"}));

TEST(ConfigTest, SearchTimingDefaultsToAutoAndIsRead) {
  auto Default = parseConfig(Full, "w/.kloop.yaml");
  ASSERT_TRUE(bool(Default)) << toString(Default.takeError());
  EXPECT_EQ(Default->Search.Timing, SearchTiming::Auto);
  EXPECT_EQ(Default->Search.CubinCommand, "");
  EXPECT_EQ(Default->Search.ReplayL2, "");
  EXPECT_EQ(Default->Search.ReplayPlacements, 4u);
  EXPECT_EQ(Default->Search.ReplayTrain, 8u);
  // Unset, the replay L2 follows the workload's own l2.
  EXPECT_EQ(replayL2Of(*Default), "rotate-sets");
  for (auto [Policy, Mode] : {std::pair<const char *, const char *>{"flush", "flush-dirty"}, {"none", "steady"}}) {
    auto Other = parseConfig(variant("l2: rotate", std::string("l2: ") + Policy), "w/.kloop.yaml");
    ASSERT_TRUE(bool(Other)) << toString(Other.takeError());
    EXPECT_EQ(replayL2Of(*Other), Mode) << Policy;
  }
  auto Set = parseConfig(variant("l2: rotate", "l2: rotate\nsearch:\n  timing: replay\n  replay_l2: flush-dirty\n"
                                               "  replay_placements: 1\n"
                                               "  replay_train: 0\n"
                                               "  cubin_command: \"nvcc -cubin -o {cubin} {source_dir}/saxpy.cu\""),
                         "w/.kloop.yaml");
  ASSERT_TRUE(bool(Set)) << toString(Set.takeError());
  EXPECT_EQ(Set->Search.Timing, SearchTiming::Replay);
  EXPECT_EQ(Set->Search.CubinCommand, "nvcc -cubin -o {cubin} {source_dir}/saxpy.cu");
  EXPECT_EQ(Set->Search.ReplayL2, "flush-dirty");
  EXPECT_EQ(Set->Search.ReplayPlacements, 1u);
  EXPECT_EQ(Set->Search.ReplayTrain, 0u);
  EXPECT_EQ(replayL2Of(*Set), "flush-dirty");
  EXPECT_EQ(searchTimingName(SearchTiming::Workload), "workload");
}

TEST(ConfigTest, DrainTimeoutDefaultsTo30AndIsRead) {
  auto Default = parseConfig(Full, "w/.kloop.yaml");
  ASSERT_TRUE(bool(Default)) << toString(Default.takeError());
  EXPECT_EQ(Default->Run.DrainTimeoutS, 30u);
  auto Set = parseConfig(variant("  timeout_s: 60", "  timeout_s: 60\n  drain_timeout_s: 7"), "w/.kloop.yaml");
  ASSERT_TRUE(bool(Set)) << toString(Set.takeError());
  EXPECT_EQ(Set->Run.DrainTimeoutS, 7u);
}

TEST(ConfigTest, PlacementPadIsReadAndBounded) {
  const char *Base = "name: x\nbuild: {command: make}\nrun: {command: ./x}\ntargets: [k]\n";
  auto Off = parseConfig(std::string(Base) + "placement_pad_mib: 0\n", "a.yaml");
  ASSERT_TRUE(bool(Off)) << toString(Off.takeError());
  EXPECT_EQ(Off->PlacementPadMiB, 0u);
  auto Big = parseConfig(std::string(Base) + "placement_pad_mib: 4097\n", "a.yaml");
  ASSERT_FALSE(bool(Big));
  EXPECT_NE(toString(Big.takeError()).find("placement_pad_mib: 4097 is out of range"), std::string::npos);
  auto Word = parseConfig(std::string(Base) + "placement_pad_mib: lots\n", "a.yaml");
  ASSERT_FALSE(bool(Word));
  EXPECT_NE(toString(Word.takeError()).find("placement_pad_mib: expected a non-negative integer"), std::string::npos);
}

TEST(ConfigTest, SyntaxErrorHasLineAndColumn) {
  std::string E = errorOf("name: x\nbuild: {command: make\n");
  EXPECT_NE(E.find("w/.kloop.yaml:"), std::string::npos) << E;
  // The YAML scanner reports a position on line 2 or 3 (end of input).
  EXPECT_TRUE(E.find("w/.kloop.yaml:2:") != std::string::npos || E.find("w/.kloop.yaml:3:") != std::string::npos)
      << E;
}

TEST(ConfigTest, UnknownKeyReportsItsLine) {
  std::string E = errorOf(variant("l2: rotate", "l2: rotate\nflavour: mild"));
  EXPECT_NE(E.find("w/.kloop.yaml:18:1: error: unknown key 'flavour'"), std::string::npos) << E;
}

TEST(ConfigTest, EmptyFileIsAnError) {
  std::string E = errorOf("  \n");
  EXPECT_NE(E.find("w/.kloop.yaml: error: the workload description is empty"), std::string::npos) << E;
}

TEST(ConfigTest, ScalarDocumentIsAnError) {
  std::string E = errorOf("just a string\n");
  EXPECT_NE(E.find("w/.kloop.yaml"), std::string::npos) << E;
  EXPECT_NE(E.find("error"), std::string::npos) << E;
}

TEST(ConfigTest, MissingFileIsAnError) {
  auto C = loadConfig("/nonexistent/dir/.kloop.yaml");
  ASSERT_FALSE(bool(C));
  std::string E = toString(C.takeError());
  EXPECT_NE(E.find("/nonexistent/dir/.kloop.yaml: error: cannot read"), std::string::npos) << E;
}

TEST(ExpandTest, SubstitutesEveryPlaceholder) {
  PlaceholderValues V;
  V.BuildDir = "/b";
  V.SourceDir = "/s";
  V.Seed = 7;
  V.Iters = 20;
  V.Args["n"] = "1024";
  auto R = expandCommand("{build_dir}/x --n {n} --seed {seed} -i {iters} -s {source_dir}", V, "run.command");
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(*R, "/b/x --n 1024 --seed 7 -i 20 -s /s");
}

TEST(ExpandTest, QuotesValuesIntoOneShellWord) {
  PlaceholderValues V;
  V.BuildDir = "/my builds/it's";
  auto R = expandCommand("{build_dir}/x", V, "run.command");
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(*R, "'/my builds/it'\\''s'/x");
}

TEST(ExpandTest, LeavesShellBracesAlone) {
  PlaceholderValues V;
  auto R = expandCommand("echo ${HOME} {a,b} {{literal}} {1}", V, "run.command");
  ASSERT_TRUE(bool(R)) << toString(R.takeError());
  EXPECT_EQ(*R, "echo ${HOME} {a,b} {literal} {1}");
}

TEST(ExpandTest, UnknownPlaceholderIsAnError) {
  PlaceholderValues V;
  V.Args["n"] = "1";
  auto R = expandCommand("x {m}", V, "run.command");
  ASSERT_FALSE(bool(R));
  std::string E = toString(R.takeError());
  EXPECT_NE(E.find("run.command: unknown placeholder '{m}'"), std::string::npos) << E;
  EXPECT_NE(E.find("n"), std::string::npos) << E;
}

TEST(ExpandTest, UnavailablePlaceholderIsAnError) {
  PlaceholderValues V;
  V.BuildDir = "/b";
  auto R = expandCommand("make -C {build_dir} SEED={seed}", V, "build.command");
  ASSERT_FALSE(bool(R));
  EXPECT_NE(toString(R.takeError()).find("build.command: placeholder '{seed}' is not available"),
            std::string::npos);
}

TEST(ExpandTest, UnterminatedPlaceholderIsAnError) {
  PlaceholderValues V;
  auto R = expandCommand("x {build_dir", V, "run.command");
  ASSERT_FALSE(bool(R));
  EXPECT_NE(toString(R.takeError()).find("unterminated placeholder"), std::string::npos);
}

TEST(ExpandTest, ListsPlaceholdersInOrder) {
  EXPECT_EQ(placeholdersIn("{b} {a} {b} ${c} {{d}}"), (std::vector<std::string>{"b", "a"}));
}

} // namespace
