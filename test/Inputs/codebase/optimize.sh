#!/bin/sh
# optimize.sh DIR ARGS...: `kloop optimize -p build` (codebase mode) in DIR/p, the tiny project setup.sh made,
# with the fake GPU and CUPTI library, the fixed proposer (BLOCK 256) and the fake apply; run directory
# DIR/run. ARGS are added (--kernels, --test, --fix, ...).
here=$(cd "$(dirname "$0")" && pwd)
t=$(cd "$here/../.." && pwd)
d=$1
shift
cd "$d/p" || exit 1
exec env KLOOP_NVIDIA_SMI="$t/Measure/Inputs/fake-nvidia-smi.sh" KLOOP_CUPTI_LIB="$t/Measure/Inputs/fake-workload.sh" \
  kloop optimize -p build --run "python3 $here/fake_program.py build" --build "sh build.sh {build_dir}" \
  --proposer command --command "python3 $t/Optimize/Inputs/fixed_proposer.py" \
  --apply-command "$t/Optimize/Inputs/fake_apply.py" --no-ptxas --max-candidates 1 --timing-rounds 2 --no-canary \
  -o "$d/run" "$@"
