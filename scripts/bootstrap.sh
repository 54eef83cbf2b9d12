#!/usr/bin/env bash
# Installs the Debian 12 packages kloop needs. Idempotent: installs only what is missing.
set -euo pipefail
pkgs=(clang-22 libclang-22-dev llvm-22-dev llvm-22-tools libclang-rt-22-dev nlohmann-json3-dev libcurl4-openssl-dev
      libsqlite3-dev sqlite3 libgtest-dev libgmock-dev cmake ninja-build python3 git strace pre-commit chromium)
# npm: the build's `npm ci` of web/ (Chart.js for kloop report --html). A Node.js that already brings its
# own npm (another vendor's nodejs package) is kept: Debian's npm would conflict with it.
command -v npm >/dev/null 2>&1 || pkgs+=(npm)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "bootstrap: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "bootstrap: all packages present"
fi
if [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "bootstrap: note: no CUDA toolkit at /usr/local/cuda; tests that need nvcc/CUPTI are skipped" >&2
fi
