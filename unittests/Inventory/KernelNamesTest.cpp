//===- KernelNamesTest.cpp - nvcc's kernel symbols and the matching rule --===//
//
// Expected symbols are what `nvcc -arch=sm_90 -cubin` (CUDA 13.0) + `readelf -sW`
// printed for the snippets in the comments; clang's names are what clang 22
// mangles for the same declarations. test/Extract/names-*.cu check the same
// rules end to end against nvcc.
//
//===----------------------------------------------------------------------===//
#include "kloop/Inventory/KernelNames.h"

#include "gtest/gtest.h"
#include "llvm/Demangle/Demangle.h"

using namespace kloop;

namespace {

// /tmp/names-exp/a.cu, whose first external definition is `plain(float*)`.
const char *ModA = "_a2f7c6a0_4_a_cu_acc5a52f";
// /tmp/names-exp/e.cu, whose first external definition is `int first_def = 1;`.
const char *ModE = "_2d9551f7_4_e_cu_9c2c88f5";

std::string nvcc(llvm::StringRef Clang, llvm::StringRef Mod, bool Rdc = false) {
  llvm::Expected<std::string> S = nvccSymbol(Clang, Mod, Rdc);
  if (!S)
    return "error: " + llvm::toString(S.takeError());
  return *S;
}

TEST(NvccModuleId, PathCrcFileNameAndFirstDefinition) {
  EXPECT_EQ(nvccModuleId("/tmp/names-exp/a.cu", "_Z5plainPf"), ModA);
  EXPECT_EQ(nvccModuleId("/tmp/names-exp/b.cu", "_Z4hostPf"), "_b042694e_4_b_cu_18f5cf2a");
  EXPECT_EQ(nvccModuleId("/tmp/names-exp/e.cu", "first_def"), ModE);
}

TEST(NvccModuleId, ShortNamesStayAndOtherBytesBecomeUnderscores) {
  // `int abcdefgh = 1;` (8 characters) is kept, `int abcdefghi = 1;` hashed.
  EXPECT_EQ(nvccModuleId("/tmp/names-exp/b.cu", "abcdefgh"), "_b042694e_4_b_cu_abcdefgh");
  EXPECT_EQ(nvccModuleId("/tmp/names-exp/b.cu", "abcdefghi"), "_b042694e_4_b_cu_8da988af");
  EXPECT_EQ(nvccModuleId("/tmp/names-exp/my-file.v2.cu", "_Z4hostPf"), "_32e7184d_13_my_file_v2_cu_18f5cf2a");
}

TEST(NvccSymbol, ExternalNamesAreClangs) {
  EXPECT_EQ(nvcc("_Z2tkIfLi4EEvPT_", ModA), "_Z2tkIfLi4EEvPT_");
  EXPECT_EQ(nvcc("_Z3fpkIXadL_Z6op_extfEEEvPf", ModA), "_Z3fpkIXadL_Z6op_extfEEEvPf");
  EXPECT_EQ(nvcc("ckern", ModA), "ckern");
}

TEST(NvccSymbol, StaticKernelLosesItsLinkageMarker) {
  // static __global__ void skern(float *x);
  EXPECT_EQ(nvcc("_ZL5skernPf", ModA), "_Z5skernPf");
  // template <int N> static __global__ void stk(int *); stk<3>
  EXPECT_EQ(nvcc("_ZL3stkILi3EEvPi", "_08fe0e2b_4_c_cu_884ad2bb"), "_Z3stkILi3EEvPi");
}

TEST(NvccSymbol, AnonymousNamespaceCarriesTheModuleId) {
  EXPECT_EQ(nvcc("_ZN12_GLOBAL__N_15akernEPf", ModA), "_ZN36_GLOBAL__N__a2f7c6a0_4_a_cu_acc5a52f5akernEPf");
  // tk2<S> with S in an anonymous namespace.
  EXPECT_EQ(nvcc("_Z3tk2IN12_GLOBAL__N_11SEEvPT_", ModA), "_Z3tk2IN36_GLOBAL__N__a2f7c6a0_4_a_cu_acc5a52f1SEEvPT_");
}

TEST(NvccSymbol, StaticFunctionAsTemplateArgument) {
  // template <float (*F)(float)> __global__ void fpk(float *); fpk<op_static>
  EXPECT_EQ(nvcc("_Z3fpkIXadL_ZL9op_staticfEEEvPf", ModA),
            "_Z3fpkIXadL_ZN34_INTERNAL_a2f7c6a0_4_a_cu_acc5a52f9op_staticEfEEEvPf");
  // fpk<op_anon>, op_anon in an anonymous namespace.
  EXPECT_EQ(nvcc("_Z3fpkIXadL_ZN12_GLOBAL__N_17op_anonEfEEEvPf", ModA),
            "_Z3fpkIXadL_ZN34_INTERNAL_a2f7c6a0_4_a_cu_acc5a52f36_GLOBAL__N__a2f7c6a0_4_a_cu_acc5a52f7op_"
            "anonEfEEEvPf");
  // k1<ns::sf>, static in a named namespace.
  EXPECT_EQ(nvcc("_Z2k1IXadL_ZN2nsL2sfEfEEEvPf", ModE),
            "_Z2k1IXadL_ZN34_INTERNAL_2d9551f7_4_e_cu_9c2c88f52ns2sfEfEEEvPf");
  // k1<st<int>>, a static function template.
  EXPECT_EQ(nvcc("_Z2k1IXadL_ZL2stIiEffEEEvPf", ModE),
            "_Z2k1IXadL_ZN34_INTERNAL_2d9551f7_4_e_cu_9c2c88f52stIiEEffEEEvPf");
}

TEST(NvccSymbol, PseudoNamespaceShiftsLaterSubstitutions) {
  // k2<&ns::sv>(int *, int *): the pseudo-namespace is one more candidate.
  EXPECT_EQ(nvcc("_Z2k2IXadL_ZN2nsL2svEEEEvPiS1_", ModE),
            "_Z2k2IXadL_ZN34_INTERNAL_2d9551f7_4_e_cu_9c2c88f52ns2svEEEEvPiS2_");
  // k3<s1, s2>(float *, float *): the second entity refers to it.
  EXPECT_EQ(nvcc("_Z2k3IXadL_ZL2s1fEEXadL_ZL2s2fEEEvPfS0_", ModE),
            "_Z2k3IXadL_ZN34_INTERNAL_2d9551f7_4_e_cu_9c2c88f52s1EfEEXadL_ZNS0_2s2EfEEEvPfS1_");
  // k4<float, s1>(T *, T *)
  EXPECT_EQ(nvcc("_Z2k4IfXadL_ZL2s1fEEEvPT_S1_", ModE),
            "_Z2k4IfXadL_ZN34_INTERNAL_2d9551f7_4_e_cu_9c2c88f52s1EfEEEvPT_S2_");
}

TEST(NvccSymbol, RelocatableDeviceCodePrefixesInternalKernels) {
  EXPECT_EQ(nvcc("_ZL5skernPf", ModA, true), "__nv_static_25__a2f7c6a0_4_a_cu_acc5a52f__Z5skernPf");
  EXPECT_EQ(nvcc("_ZN12_GLOBAL__N_15akernEPf", ModA, true),
            "__nv_static_25__a2f7c6a0_4_a_cu_acc5a52f__ZN36_GLOBAL__N__a2f7c6a0_4_a_cu_acc5a52f5akernEPf");
  EXPECT_EQ(nvcc("_Z3tk2IN12_GLOBAL__N_11SEEvPT_", ModA, true),
            "__nv_static_25__a2f7c6a0_4_a_cu_acc5a52f__Z3tk2IN36_GLOBAL__N__a2f7c6a0_4_a_cu_acc5a52f1SEEvPT_");
  EXPECT_EQ(nvcc("_ZN2ns4innsEPi", ModA, true), "_ZN2ns4innsEPi");
  // ep(P), P in an anonymous namespace, and lam<a lambda of host()> stay external.
  const char *ModC = "_08fe0e2b_4_c_cu_884ad2bb";
  EXPECT_EQ(nvcc("_Z2epN12_GLOBAL__N_11PE", ModC, true), "_Z2epN36_GLOBAL__N__08fe0e2b_4_c_cu_884ad2bb1PE");
  EXPECT_EQ(nvcc("_Z3lamIZ4hostPiEUliE_EvT_S0_", ModC, true), "_Z3lamIZ4hostPiEUliE_EvT_S0_");
}

TEST(NvccSymbol, RefusesWhatDoesNotDemangle) {
  EXPECT_NE(nvcc("_Z3fpkIXadL_ZL9", ModA).find("error: cannot spell '_Z3fpkIXadL_ZL9' as nvcc does: it does not "
                                            "demangle"),
            std::string::npos);
}

TEST(NvccSymbol, RefusesAnInternalEntityUnderASubstitution) {
  // k<ns::f, ns::g>, both static in ns: clang reaches g's scope through S0_;
  // nvcc's spelling of that case was not established, so no name is claimed.
  std::string R = nvcc("_Z1kIXadL_ZN2nsL1fEvEEXadL_ZNS0_L1gEvEEEvv", ModE);
  EXPECT_NE(R.find("error: "), std::string::npos) << R;
  EXPECT_NE(R.find("scope is a substitution"), std::string::npos) << R;
  EXPECT_EQ(llvm::demangle("_Z1kIXadL_ZN2nsL1fEvEEXadL_ZNS0_L1gEvEEEvv"), "void k<&ns::f(), &ns::g()>()");
}

TEST(KernelMatchKey, SameForClangAndNvccNames) {
  EXPECT_EQ(kernelMatchKey("_ZL5skernPf"), "skern(float*)");
  EXPECT_EQ(kernelMatchKey("__nv_static_25__a2f7c6a0_4_a_cu_acc5a52f__Z5skernPf"), "skern(float*)");
  EXPECT_EQ(kernelMatchKey("_Z3fpkIXadL_ZN34_INTERNAL_a2f7c6a0_4_a_cu_acc5a52f9op_staticEfEEEvPf"),
            kernelMatchKey("_Z3fpkIXadL_ZL9op_staticfEEEvPf"));
  EXPECT_EQ(kernelMatchKey("ckern"), "ckern");
}

KernelSymbol internalSymbol() {
  KernelSymbol K;
  K.Clang = "_ZN12_GLOBAL__N_15akernEPf";
  K.Nvcc = "_ZN36_GLOBAL__N__a2f7c6a0_4_a_cu_acc5a52f5akernEPf";
  K.Internal = true;
  K.Key = kernelMatchKey(K.Clang);
  return K;
}

TEST(SymbolNamesKernel, ExactNames) {
  KernelSymbol K = internalSymbol();
  EXPECT_TRUE(symbolNamesKernel(K, K.Nvcc));
  EXPECT_TRUE(symbolNamesKernel(K, K.Clang));
  EXPECT_FALSE(symbolNamesKernel(K, ""));
  EXPECT_FALSE(symbolNamesKernel(K, "_ZN36_GLOBAL__N__a2f7c6a0_4_a_cu_acc5a52f5bkernEPf"));
}

TEST(SymbolNamesKernel, InternalKernelBuiltElsewhereMatchesByKey) {
  KernelSymbol K = internalSymbol();
  // The same kernel, built from another path (another module id), and with -rdc.
  EXPECT_TRUE(symbolNamesKernel(K, "_ZN36_GLOBAL__N__469ec884_4_a_cu_acc5a52f5akernEPf"));
  EXPECT_TRUE(symbolNamesKernel(
      K, "__nv_static_25__a2f7c6a0_4_a_cu_acc5a52f__ZN36_GLOBAL__N__a2f7c6a0_4_a_cu_acc5a52f5akernEPf"));
  // Another signature is another kernel.
  EXPECT_FALSE(symbolNamesKernel(K, "_ZN36_GLOBAL__N__469ec884_4_a_cu_acc5a52f5akernEPi"));
}

TEST(SymbolNamesKernel, ExternalKernelNeedsItsExactName) {
  KernelSymbol K;
  K.Clang = K.Nvcc = "_Z5plainPf";
  K.Key = kernelMatchKey(K.Clang);
  EXPECT_TRUE(symbolNamesKernel(K, "_Z5plainPf"));
  // A static kernel of the same name elsewhere is not this one.
  EXPECT_FALSE(symbolNamesKernel(K, "__nv_static_25__a2f7c6a0_4_a_cu_acc5a52f__Z5plainPf"));
}

TEST(KernelSymbolOf, ReadsTheTypedInventorySymbol) {
  KernelSymbol K = internalSymbol();
  inv::Symbol S;
  S.Mangled = K.Nvcc;
  S.ClangMangled = K.Clang;
  S.Linkage = "internal";
  S.MatchKey = K.Key;
  S.NvccKnown = true;
  KernelSymbol Back = kernelSymbolOf(S);
  EXPECT_EQ(Back.Nvcc, K.Nvcc);
  EXPECT_EQ(Back.Clang, K.Clang);
  EXPECT_TRUE(Back.Internal);
  EXPECT_EQ(Back.Key, K.Key);

  // nvcc's name unknown: "mangled" is clang's, and Nvcc stays empty with the reason.
  S.Mangled = K.Clang;
  S.NvccKnown = false;
  S.NvccUnknownReason = "a local lambda in the name";
  S.Linkage = "external";
  Back = kernelSymbolOf(S);
  EXPECT_EQ(Back.Nvcc, "");
  EXPECT_EQ(Back.Unknown, "a local lambda in the name");
  EXPECT_FALSE(Back.Internal);
}

} // namespace
