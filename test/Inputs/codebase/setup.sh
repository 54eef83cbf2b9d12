#!/bin/sh
# setup.sh DIR MOCKCUDA...: copies the tiny project (project/) to DIR, writes its compilation database
# DIR/build/compile_commands.json (parsed with the mock CUDA headers, %mockcuda) and builds it once (build.sh).
set -e
here=$(cd "$(dirname "$0")" && pwd)
dir=$1; shift
rm -rf "$dir" && mkdir -p "$dir" && cp -r "$here/project/." "$dir/"
mkdir -p "$dir/build"
sed -e "s|@ROOT@|$dir|g" -e "s|@MOCKCUDA@|$*|g" "$here/compile_commands.json.in" > "$dir/build/compile_commands.json"
(cd "$dir" && sh build.sh build)
