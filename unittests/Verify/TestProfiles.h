//===- TestProfiles.h - Synthetic capture files in a temp dir -------------===//
#ifndef KLOOP_UNITTESTS_VERIFY_TESTPROFILES_H
#define KLOOP_UNITTESTS_VERIFY_TESTPROFILES_H

#include "kloop/Verify/Profile.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kloop {
namespace verify {
namespace test {

/// A fresh directory, removed with its files at the end of the test.
class TempDir {
public:
  TempDir() {
    std::error_code EC =
        llvm::sys::fs::createUniqueDirectory("kloop-verify-test", Path);
    EXPECT_FALSE(EC) << EC.message();
  }
  ~TempDir() { llvm::sys::fs::remove_directories(Path); }
  std::string file(llvm::StringRef Name) const {
    llvm::SmallString<256> P(Path);
    llvm::sys::path::append(P, Name);
    return std::string(P);
  }
  void write(llvm::StringRef Name, llvm::StringRef Bytes) const {
    std::error_code EC;
    llvm::raw_fd_ostream OS(file(Name), EC);
    ASSERT_FALSE(EC) << EC.message();
    OS << Bytes;
  }
  llvm::SmallString<256> Path;
};

template <typename T> std::vector<uint8_t> bytesOf(const std::vector<T> &V) {
  std::vector<uint8_t> B(V.size() * sizeof(T));
  if (!V.empty())
    std::memcpy(B.data(), V.data(), B.size());
  return B;
}

inline std::string hex16(uint64_t H) {
  char Buf[17];
  snprintf(Buf, sizeof Buf, "%016llx", static_cast<unsigned long long>(H));
  return Buf;
}

/// Builds a kloop-cupti/1 profile: launches and captures (with dump files
/// written next to the JSON when requested).
class ProfileBuilder {
public:
  ProfileBuilder(const TempDir &Dir, std::string Base)
      : Dir(Dir), Base(std::move(Base)) {
    J = {{"schema", "kloop-cupti/1"},
         {"device",
          {{"name", "NVIDIA H200"}, {"cc", "9.0"}, {"l2_bytes", 62914560}}},
         {"launches", nlohmann::json::array()},
         {"env_samples", nlohmann::json::array()},
         {"nvml", false},
         {"captures", nlohmann::json::array()},
         {"overhead", {{"wall_ns_in_callbacks", 1234}}}};
  }

  /// Adds a launch of Mangled/Demangled; returns its seq.
  uint64_t launch(const std::string &Mangled, const std::string &Demangled,
                  uint64_t DurationNs = 1000, uint64_t Stream = 7,
                  const std::string &StreamKind = "") {
    uint64_t Seq = J["launches"].size();
    J["launches"].push_back({{"seq", Seq},
                             {"kernel", Mangled},
                             {"name", Demangled},
                             {"grid", {64, 1, 1}},
                             {"block", {256, 1, 1}},
                             {"registers", 16},
                             {"static_smem", 0},
                             {"dynamic_smem", 0},
                             {"stream", Stream},
                             {"context", 1},
                             {"start_ns", Seq * 10000},
                             {"end_ns", Seq * 10000 + DurationNs},
                             {"duration_ns", DurationNs}});
    if (!StreamKind.empty())
      J["launches"].back()["stream_kind"] = StreamKind;
    return Seq;
  }

  /// Sets the "memory" member: live allocations and bytes at exit.
  void memory(uint64_t LiveAllocations, uint64_t LiveBytes) {
    J["memory"] = {{"live_allocations", LiveAllocations},
                   {"live_bytes", LiveBytes},
                   {"peak_bytes", LiveBytes}};
  }

  /// Adds a launch and a capture of its argument Arg holding Bytes.
  void capture(const std::string &Mangled, const std::string &Demangled,
               uint64_t Ordinal, uint64_t Arg, const std::vector<uint8_t> &Bytes,
               bool Dump = true, bool Poisoned = true, bool NewLaunch = true) {
    uint64_t Seq = NewLaunch ? launch(Mangled, Demangled)
                             : J["launches"].size() - 1;
    nlohmann::json DumpName = nullptr;
    if (Dump) {
      std::string Name =
          Base + ".json.k" + std::to_string(Seq) + ".a" + std::to_string(Arg) +
          ".bin";
      Dir.write(Name, llvm::StringRef(reinterpret_cast<const char *>(
                                          Bytes.data()),
                                      Bytes.size()));
      DumpName = Name;
    }
    J["captures"].push_back({{"seq", Seq},
                             {"kernel", Mangled},
                             {"name", Demangled},
                             {"kernel_ordinal", Ordinal},
                             {"arg", Arg},
                             {"ptr", "0x7f0000001000"},
                             {"bytes", Bytes.size()},
                             {"hash", hex16(bufferHashOf(Bytes))},
                             {"dump", DumpName},
                             {"poisoned", Poisoned}});
  }

  /// Writes the JSON and reads it back through readProfile().
  Profile read() {
    std::string Name = Base + ".json";
    Dir.write(Name, J.dump(1));
    auto P = readProfile(Dir.file(Name));
    EXPECT_TRUE(static_cast<bool>(P)) << llvm::toString(P.takeError());
    return P ? std::move(*P) : Profile();
  }

  nlohmann::json J;

private:
  const TempDir &Dir;
  std::string Base;
};

} // namespace test
} // namespace verify
} // namespace kloop

#endif
