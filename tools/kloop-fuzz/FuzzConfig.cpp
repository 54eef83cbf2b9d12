//===- FuzzConfig.cpp - libFuzzer target for .kloop.yaml parsing ----------===//
///
/// \file
/// LLVMFuzzerTestOneInput feeds arbitrary bytes to kloop::measure::parseConfig
/// (include/kloop/Measure/Config.h), which reads every `.kloop.yaml` a user or a
/// repository supplies (issue 12, item 11). Besides "no crash, no sanitizer
/// report", it checks and aborts (a crash to libFuzzer) when one fails:
///   1. a refusal is a non-empty message that starts with the file name;
///   2. an accepted description has a name, at least one target, and only
///      relative, non-empty source and protected file names.
///
/// Built two ways, as FuzzProposal.cpp: with clang 22 and -fsanitize=fuzzer,address
/// as kloop-fuzz-config (tools/kloop-fuzz/CMakeLists.txt), and with the project's
/// compiler into MeasureTests, which replays tools/kloop-fuzz/corpus-config on
/// every CI run (unittests/Measure/FuzzConfigCorpusTest.cpp).
///
//===----------------------------------------------------------------------===//
#include "kloop/Measure/Config.h"

#include "llvm/Support/Path.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {
[[noreturn]] void violated(const char *What, const std::string &Detail) {
  std::fprintf(stderr, "kloop-fuzz-config: property violated: %s: %s\n", What, Detail.c_str());
  std::abort();
}
} // namespace

/// libFuzzer's entry point. \p Data / \p Size: the input bytes (any content,
/// not NUL-terminated). Returns 0 always; a failed property aborts.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  llvm::StringRef Text(reinterpret_cast<const char *>(Data), Size);
  llvm::Expected<kloop::measure::WorkloadConfig> C = kloop::measure::parseConfig(Text, "fuzz.yaml");
  if (!C) {
    std::string Msg = llvm::toString(C.takeError());
    if (!llvm::StringRef(Msg).starts_with("fuzz.yaml") || Msg.size() <= 10)
      violated("a refusal names the file and a reason", Msg);
    return 0;
  }
  if (llvm::StringRef(C->Name).trim().empty())
    violated("an accepted description has a name", Text.str());
  if (C->Targets.empty())
    violated("an accepted description has targets", Text.str());
  for (const std::vector<std::string> *List : {&C->Sources, &C->Protected})
    for (const std::string &F : *List)
      if (llvm::StringRef(F).trim().empty() || llvm::sys::path::is_absolute(F))
        violated("file names are relative and not empty", F);
  return 0;
}
