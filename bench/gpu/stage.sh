#!/usr/bin/env bash
# Stages a build of this (CPU) machine for the GPU machine, after ../shared/gpu/prepare.sh filled .gpu/:
# `cmake --install BUILD --prefix` a scratch prefix, stripped (kloop, kloop-replay, libkloop-cupti.so,
# prompts, report assets, docs), packed as .gpu/kb.txz, since the tree that travels is capped at 64 MiB.
#   bench/gpu/stage.sh [BUILD]          (default build/)
# On the GPU machine, in the device call: source .gpu/env.sh && tar -C .gpu -xJf .gpu/kb.txz
# and the binaries are in .gpu/kb/bin (the default of bench/throughput/run.sh and bench/gpu/optimize.sh).
set -euo pipefail
build=${1:-build}
root=$(git rev-parse --show-toplevel)
cd "$root"
[ -f .gpu/env.sh ] || { echo "stage.sh: no .gpu/env.sh: run ../shared/gpu/prepare.sh first" >&2; exit 1; }
[ -x "$build/bin/kloop" ] || { echo "stage.sh: no $build/bin/kloop: build first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/kb" --strip > "$tmp/install.log"
tar -C "$tmp" -cJf .gpu/kb.txz.new kb
mv .gpu/kb.txz.new .gpu/kb.txz
du -sh .gpu/kb.txz .gpu
