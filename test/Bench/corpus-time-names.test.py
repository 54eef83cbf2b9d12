import sys
sys.path.insert(0, sys.argv[1])
import corpus

cases = {
    "convert.cu": "_Z16dequantize_blockILi32ELi1EXadL_ZN47_INTERNAL_11a973c8_10_convert_cu_683dd96b_1105015dequantize_q8_0EPKvliR6float2EEfEvS2_PT2_lll5uint3lll",
    "first definition": "_Z16dequantize_blockILi128ELi1EXadL_ZN41_INTERNAL_11a973c8_10_convert_cu_ecf1720215dequantize_q1_0EPKvliR6float2EE6__halfEvS2_PT2_lll5uint3lll",
    "short name tail": "_Z1kIXadL_ZN33_INTERNAL_478908a3_4_g_cu__Z3getv1fERfEEEvPf",
    "plain": "_Z5scalePff",
}
for name, sym in cases.items():
    print(f"time-based: {name}: {corpus.time_based_module_id(sym)}")
print("key:", corpus.match_key("void k<&_INTERNAL_ff356fc6_4_f_cu_3636d4a8_14588::f(float&)>(float*)"))


class Opts:
    demangler = None
    clang = "/usr/lib/llvm-22/bin/clang++"  # run.sh's default: llvm-cxxfilt sits beside it


sym = "_Z1kIXadL_ZN40_INTERNAL_ff356fc6_4_f_cu_3636d4a8_145881fERfEEEvPf"
# cu++filt's and c++filt's spelling of the symbol (no parameter types in the template argument): the
# match key must come from LLVM's demangler instead, as kloop's does.
real = corpus.demangle
corpus.demangle = lambda d, names: ({sym: "void k<&_INTERNAL_ff356fc6_4_f_cu_3636d4a8_14588::f>(float*)"}
                                    if d == Opts.demangler else real(d, names))
m = corpus.kernel_match([{"kernels": [sym], "file": "f.cu", "rc": 0, "first_error": ""}],
                        {"mangled": ["_Z1kIXadL_ZL1fRfEEEvPf"], "unknown_keys": ["void k<&f(float&)>(float*)"]}, Opts)
print(f"matched by key: {m['matched_by_key_time_based']} of {m['nvcc_time_based']} time-based, unmatched {len(m['unmatched_nvcc'])}")
