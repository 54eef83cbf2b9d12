//===- CudaInstallationTest.cpp - nvcc.profile parsing ----------------------===//
#include "kloop/Frontend/CudaInstallation.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

using namespace kloop;

TEST(CudaInstallation, ReadsProfileIncludesThatExist) {
  llvm::SmallString<128> Root;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("kloop-cuda", Root));
  llvm::SmallString<128> Inc(Root), Cccl(Root);
  llvm::sys::path::append(Inc, "targets", "x86_64-linux", "include");
  llvm::sys::path::append(Cccl, "targets", "x86_64-linux", "include", "cccl");
  ASSERT_FALSE(llvm::sys::fs::create_directories(Cccl));
  const char *Profile = "TOP = $(_HERE_)/..\n"
                        "INCLUDES += \"-I$(TOP)/$(_TARGET_DIR_)/include\" $(_SPACE_)\n"
                        "SYSTEM_INCLUDES += \"-isystem\" \"$(TOP)/$(_TARGET_DIR_)/include/cccl\" $(_SPACE_)\n"
                        "SYSTEM_INCLUDES += \"-isystem\" \"$(TOP)/does/not/exist\"\n";
  CudaInstallation I;
  readNvccProfile(Profile, Root, I);
  ASSERT_EQ(I.Includes.size(), 1u);
  EXPECT_EQ(I.Includes[0], std::string(Inc));
  ASSERT_EQ(I.SystemIncludes.size(), 1u);
  EXPECT_EQ(I.SystemIncludes[0], std::string(Cccl));
}

TEST(CudaInstallation, ExplicitPathWithoutHeadersIsRejected) {
  EXPECT_FALSE(findCudaInstallation("/nonexistent/cuda").has_value());
}
