//===- CodebaseTest.cpp - codebase mode's pure parts -----------------------===//
#include "kloop/Codebase/Codebase.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

using namespace kloop;
using namespace kloop::codebase;

namespace {

std::string readAll(const std::string &Path) { return (*llvm::MemoryBuffer::getFile(Path))->getBuffer().str(); }

void writeAll(const std::string &Path, llvm::StringRef Text) {
  std::error_code EC;
  llvm::raw_fd_ostream OS(Path, EC);
  ASSERT_FALSE(EC);
  OS << Text;
}

TEST(Codebase, RebaseBuildDirRewritesWordsInTheBuildDirectory) {
  EXPECT_EQ(rebaseBuildDir("build/app --n 4", "build", "/p/build", "{build_dir}"), "{build_dir}/app --n 4");
  EXPECT_EQ(rebaseBuildDir("./build/app --in build/x.bin", "build/", "/p/build", "B"), "B/app --in B/x.bin");
  EXPECT_EQ(rebaseBuildDir("/p/build/app && builder/x", "build", "/p/build", "B"), "B/app && builder/x");
  EXPECT_EQ(rebaseBuildDir("sh -c 'build/app 1'", "build", "/p/build", "B"), "sh -c 'B/app 1'");
  EXPECT_EQ(rebaseBuildDir("app --out=build/o", "build", "/p/build", "B"), "app --out=B/o");
}

TEST(Codebase, EscapeBracesDoublesThem) {
  EXPECT_EQ(escapeBraces("echo ${HOME} {a,b}"), "echo ${{HOME}} {{a,b}}");
}

TEST(Codebase, PatchNumberAndFileName) {
  std::string P = "From 0 Mon\nSubject: [PATCH] kloop: faster\n\nbody\n---\ndiff\n";
  std::string N = numberPatch(P, 2, 3, "k<4>", "Kernel k<4>.");
  EXPECT_NE(N.find("Subject: [PATCH 2/3] kloop: k<4>: faster\n"), std::string::npos) << N;
  EXPECT_NE(N.find("body\n\nKernel k<4>.\n---\ndiff\n"), std::string::npos) << N;
  EXPECT_EQ(patchFileName(2, "k<4>"), "0002-k-4-.patch");
}

TEST(Codebase, ApplyAllWritesNothingWhenOneFileChangedSinceTheRun) {
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("codebase-apply", Dir));
  std::string A = (Dir + "/a.cu").str(), B = (Dir + "/b.cu").str();
  writeAll(A, "a old\n");
  writeAll(B, "b edited meanwhile\n");
  std::vector<FileChange> Changes = {{A, "a.cu", "a old\n", "a new\n"}, {B, "b.cu", "b old\n", "b new\n"}};
  llvm::Error E = applyAll(Changes);
  ASSERT_TRUE(bool(E));
  EXPECT_NE(llvm::toString(std::move(E)).find("b.cu changed since kloop optimize copied it"), std::string::npos);
  EXPECT_EQ(readAll(A), "a old\n");
  EXPECT_EQ(readAll(B), "b edited meanwhile\n");
  writeAll(B, "b old\n");
  ASSERT_FALSE(bool(applyAll(Changes)));
  EXPECT_EQ(readAll(A), "a new\n");
  EXPECT_EQ(readAll(B), "b new\n");
  llvm::sys::fs::remove_directories(Dir);
}

TEST(Codebase, CMakeBuildCommandFromTheCache) {
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("codebase-cmake", Dir));
  std::string Root = std::string(Dir), Build = Root + "/build";
  ASSERT_FALSE(llvm::sys::fs::create_directories(Build));
  llvm::Expected<std::string> None = cmakeBuildCommand(Build, Root);
  ASSERT_FALSE(bool(None));
  EXPECT_NE(llvm::toString(None.takeError()).find("no CMakeCache.txt there"), std::string::npos);
  writeAll(Build + "/CMakeCache.txt", "// comment\nCMAKE_HOME_DIRECTORY:INTERNAL=" + Root +
                                          "/src\nCMAKE_GENERATOR:INTERNAL=Unix Makefiles\n"
                                          "CMAKE_CUDA_ARCHITECTURES:STRING=90\nCMAKE_BUILD_TYPE:STRING=\n");
  llvm::Expected<std::string> Cmd = cmakeBuildCommand(Build, Root);
  ASSERT_TRUE(bool(Cmd)) << llvm::toString(Cmd.takeError());
  EXPECT_EQ(*Cmd, "cmake -S {source_dir}/src -B {build_dir} -G 'Unix Makefiles' -DCMAKE_CUDA_ARCHITECTURES=90 && "
                  "cmake --build {build_dir} --parallel");
  llvm::sys::fs::remove_directories(Dir);
}

} // namespace
