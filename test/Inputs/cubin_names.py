#!/usr/bin/env python3
"""Compares a `kloop extract` document (argv[1]) with the function symbols of a cubin
as `readelf -sW` prints them (argv[2]). Prints, for FileCheck, one line per inventory
symbol; then one EXTRA line per cubin kernel symbol no inventory kernel names.
Where nvcc's name was not known, KEYMATCH says which cubin symbol, demangled by
llvm-cxxfilt without nvcc's __nv_static_ prefix and _INTERNAL_ qualifiers, equals
the inventory's match_key (that symbol is then not EXTRA)."""
import json
import re
import subprocess
import sys


def key(sym):
    m = re.match(r"__nv_static_(\d+)_", sym)
    if m:
        sym = sym[m.end() + int(m.group(1)) + 1:]
    d = subprocess.run(["llvm-cxxfilt", sym], capture_output=True, text=True).stdout.strip()
    return re.sub(r"_INTERNAL_[^:]*::", "", d)

doc = json.load(open(sys.argv[1]))
cubin = set()
for line in open(sys.argv[2]):
    f = line.split()
    # Num: Value Size Type Bind Vis Ndx Name (the Vis column may hold "[<other>: 10]").
    if len(f) >= 8 and f[3] == "FUNC":
        cubin.add(f[-1])
listed = set()
for k in doc["kernels"]:
    for s in k["symbols"]:
        listed.add(s["mangled"])
        print("%s %s linkage=%s nvcc_known=%s library=%s %s" % (
            "FOUND" if s["mangled"] in cubin else "MISSING", k["id"], s["linkage"],
            "1" if s["nvcc_known"] else "0", "1" if k.get("library") else "0", s["mangled"]))
        if not s["nvcc_known"]:
            for c in sorted(cubin):
                if key(c) == s["match_key"]:
                    listed.add(c)
                    print("KEYMATCH %s %s" % (k["id"], s["match_key"]))
for name in sorted(cubin - listed):
    print("EXTRA %s" % name)
