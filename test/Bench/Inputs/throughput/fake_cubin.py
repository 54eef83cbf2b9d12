#!/usr/bin/env python3
# The search.cubin_command of test/Bench/throughput.test: `fake_cubin.py VARIANT_FILE CUBIN [FLAGS...]`
# copies the source directory's variant file (what the fake replay worker reads as a cubin), or writes
# "slow" when the benchmark appends compiler flags (its planted slowdown).
import sys
variant, cubin, flags = sys.argv[1], sys.argv[2], sys.argv[3:]
open(cubin, "w").write("slow\n" if flags else open(variant).read())
