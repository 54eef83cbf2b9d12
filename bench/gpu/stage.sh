#!/usr/bin/env bash
# Stages a build of this (CPU) machine for the GPU machine, after ../shared/gpu/prepare.sh filled .gpu/:
# `cmake --install BUILD --prefix` a scratch prefix, stripped (kloop, kloop-replay, libkloop-cupti.so,
# prompts, report assets, docs), packed as .gpu/kb.txz, since the tree that travels is capped at 64 MiB.
#   bench/gpu/stage.sh [BUILD]          (default build/)
# On the GPU machine, in the device call: source .gpu/env.sh && tar -C .gpu -xJf .gpu/kb.txz
# and the binaries are in .gpu/kb/bin (the default of bench/throughput/run.sh and bench/gpu/optimize.sh),
# with what bench/gpu/lit.sh needs.
set -euo pipefail
build=${1:-build}
root=$(git rev-parse --show-toplevel)
cd "$root"
[ -f .gpu/env.sh ] || { echo "stage.sh: no .gpu/env.sh: run ../shared/gpu/prepare.sh first" >&2; exit 1; }
[ -x "$build/bin/kloop" ] || { echo "stage.sh: no $build/bin/kloop: build first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/kb" --strip > "$tmp/install.log"
# For bench/gpu/lit.sh: FileCheck and not beside kloop, the build tree's place of libkloop-cupti.so, and
# lit itself (its package with a launcher) in .gpu/lit.
llvm=/usr/lib/llvm-22
cp "$llvm/bin/FileCheck" "$llvm/bin/not" "$tmp/kb/bin/"
[ ! -f "$tmp/kb/lib/kloop/libkloop-cupti.so" ] || cp "$tmp/kb/lib/kloop/libkloop-cupti.so" "$tmp/kb/lib/"
rm -rf .gpu/lit && mkdir -p .gpu/lit && cp -r "$llvm/utils/lit/lit" .gpu/lit/
printf 'import os, sys\nsys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))\nfrom lit.main import main\nmain()\n' > .gpu/lit/lit.py
tar -C "$tmp" -cJf .gpu/kb.txz.new kb
mv .gpu/kb.txz.new .gpu/kb.txz
du -sh .gpu/kb.txz .gpu
