#!/usr/bin/env python3
"""Writes the compilation database of kloop's bundled examples (nvcc command lines).

    python3 examples/gen_compile_commands.py            # examples/compile_commands.json, relative
    python3 examples/gen_compile_commands.py --absolute [-o FILE]

The checked-in examples/compile_commands.json is the relative form: "directory" is "." and
means the directory that holds the database (so the tree can move); `--absolute` writes the
examples directory's absolute path instead, which any clang tool reads as-is.
One entry per translation unit: the kernel file and the harness of every example.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = ["saxpy", "reduction", "matmul", "transpose", "stencil2d", "softmax", "layernorm",
            "histogram"]


def entries(directory):
    out = []
    for ex in EXAMPLES:
        for tu in (f"{ex}.cu", f"{ex}_main.cu"):
            src = f"{ex}/{tu}"
            if not os.path.exists(os.path.join(HERE, src)):
                sys.exit(f"gen_compile_commands.py: missing {src}")
            obj = f"build/{ex}/{tu[:-3]}.o"
            out.append({
                "directory": directory,
                "arguments": ["nvcc", "-O3", "-arch=sm_90", "-std=c++17", "-c", src, "-o", obj],
                "file": src,
                "output": obj,
            })
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--absolute", action="store_true", help="absolute \"directory\" entries")
    ap.add_argument("-o", "--output", default=os.path.join(HERE, "compile_commands.json"))
    a = ap.parse_args()
    db = entries(HERE if a.absolute else ".")
    with open(a.output + ".tmp", "w") as f:
        json.dump(db, f, indent=2)
        f.write("\n")
    os.replace(a.output + ".tmp", a.output)
    print(f"wrote {a.output} ({len(db)} entries)")


if __name__ == "__main__":
    main()
