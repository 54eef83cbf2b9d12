#!/usr/bin/env bash
# Runs kloop's lit tests on the GPU machine, which has no LLVM install: lit, FileCheck and `not` travel
# in .gpu/ (bench/gpu/README: copied there from llvm-22-tools before the device call), the binaries in
# .gpu/kb/. Run from the repository root after `source .gpu/env.sh`:
#   bench/gpu/lit.sh [lit args...]        e.g. bench/gpu/lit.sh --filter 'gpu-' -v
set -euo pipefail
root=$PWD; obj=${KLOOP_LIT_OBJ:-/tmp/kloop-lit}
mkdir -p "$obj/test"
cat > "$obj/test/lit.site.cfg.py" <<CFG
config.kloop_src_root = "$root"
config.kloop_obj_root = "$obj"
config.kloop_tools_dir = "$root/.gpu/kb/bin"
config.kloop_lib_dir = "$root/.gpu/kb/lib"
config.llvm_tools_dir = "$root/.gpu/kb/bin"
config.cuda_path = "${CUDA_HOME:-/usr/local/cuda}"
lit_config.load_config(config, "$root/test/lit.cfg.py")
CFG
exec python3 "$root/.gpu/lit/lit.py" "$obj/test" "$@"
