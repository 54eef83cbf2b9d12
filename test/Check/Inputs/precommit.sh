#!/usr/bin/env bash
# Drives the real pre-commit tool on a scratch git repository (test/Check/precommit.test): the
# hook comes from this checkout's .pre-commit-hooks.yaml, at its HEAD commit (pre-commit clones it).
#   precommit.sh KLOOP_SRC WORKDIR INPUTS MOCK_INPUTS
set -euo pipefail
src=$1 work=$2 inputs=$3 mock=$4
export PRE_COMMIT_HOME=$work/pre-commit-home GIT_CONFIG_NOSYSTEM=1 HOME=$work/home
mkdir -p "$HOME" "$work/repo"
git config --global user.email t@t
git config --global user.name t
git config --global init.defaultBranch main
git config --global --add safe.directory '*'
cd "$work/repo"
git init -q
cp "$inputs/kernels.cu" .
sed -e "s|@DIR@|$work/repo|g" -e "s|@INPUTS@|$mock|g" "$inputs/compile_commands.json.in" > compile_commands.json
rev=$(git -C "$src" rev-parse HEAD)
cat > .pre-commit-config.yaml <<YAML
repos:
  - repo: $src
    rev: $rev
    hooks:
      - id: kloop-check
        args: [-p, ., --warnings-as-errors=*]
YAML
git add -A
git commit -qm base
pre-commit install >/dev/null
echo "== commit of a kernel change"
sed -i 's/k < 8; ++k/k < 8; k += 1/' kernels.cu
git add kernels.cu
if git commit -qm "change sum8" 2>&1; then echo "COMMIT: allowed"; else echo "COMMIT: blocked"; fi
echo "commits: $(git rev-list --count HEAD)"
echo "== the fix-its applied, then the same commit"
kloop check --from-ref HEAD -p . --fix kernels.cu >/dev/null 2>&1
git add kernels.cu
if git commit -qm "change sum8, fixed" 2>&1; then echo "COMMIT: allowed"; else echo "COMMIT: blocked"; fi
echo "commits: $(git rev-list --count HEAD)"
