#!/bin/sh
# The tiny project's own test (test/Optimize/codebase*.test): passes unless $FAIL_TEST is set and the build in
# BUILD_DIR is a candidate's (its variant is not "base"); then it fails like a real test would.
v=$(cat "$1/variant")
echo "test_saxpy: variant $v"
if [ -n "$FAIL_TEST" ] && [ "$v" != base ]; then echo "test_saxpy: FAILED: y[3] expected 2.0, got 2.5"; exit 7; fi
echo "test_saxpy: ok"
