#!/bin/sh
# setup.sh DIR MOCKCUDA...: copies the tiny project (project/) to DIR/p (DIR/run removed), writes its compilation database
# DIR/p/build/compile_commands.json (parsed with the mock CUDA headers, %mockcuda) and builds it once (build.sh).
set -e
here=$(cd "$(dirname "$0")" && pwd)
top=$1; dir=$1/p; shift
rm -rf "$top/run"
rm -rf "$dir" && mkdir -p "$dir" && cp -r "$here/project/." "$dir/"
mkdir -p "$dir/build"
sed -e "s|@ROOT@|$dir|g" -e "s|@MOCKCUDA@|$*|g" "$here/compile_commands.json.in" > "$dir/build/compile_commands.json"
(cd "$dir" && sh build.sh build)
