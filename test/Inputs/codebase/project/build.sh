#!/bin/sh
# The tiny project's build (test/Optimize/codebase*.test): BUILD_DIR/variant says how the fake program
# (../fake_program.py) behaves: "base" for BLOCK 128 in saxpy.cu, and $CAND_VARIANT (default "fast") for the
# BLOCK 256 that test/Optimize/Inputs/fixed_proposer.py proposes. $BUILD_FAIL makes the build fail.
set -e
[ -z "$BUILD_FAIL" ] || { echo "build.sh: error: BUILD_FAIL is set" >&2; exit 1; }
mkdir -p "$1"
if grep -q 'define BLOCK 256' saxpy.cu; then echo "${CAND_VARIANT:-fast}"; else echo base; fi > "$1/variant"
