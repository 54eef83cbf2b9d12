#!/usr/bin/env bash
# kloop's entry points on a fresh Debian 12 machine (see README.md):
#   scripts/dev.sh test   install dependencies, build, run every lit and gtest test
#   scripts/dev.sh demo   install dependencies, build, run the main job on examples/
set -euo pipefail
cd "$(dirname "$0")/.."
build=${KLOOP_BUILD_DIR:-build}
jobs=${KLOOP_JOBS:-$(nproc)}
scripts/bootstrap.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
case "${1:-}" in
  test)
    cmake --build "$build" -j "$jobs" --target check ;;
  demo)
    cmake --build "$build" -j "$jobs" --target kloop
    scripts/demo.sh "$build" ;;
  *) echo "usage: scripts/dev.sh test|demo" >&2; exit 2 ;;
esac
