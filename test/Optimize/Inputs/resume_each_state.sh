#!/usr/bin/env bash
# Kills `kloop optimize` at every state of the state machine in turn (KLOOP_TEST_CRASH_AT), resumes
# it, and checks that the resumed journal holds exactly the finished steps of an uninterrupted run,
# none twice. Usage: resume_each_state.sh WORKDIR FAKE_APPLY -- COMPILER ARGS
set -u
work=$1; apply=$2; shift 3
cfg=$(dirname "$0")/tiny/.kloop.yaml
common=(--config "$cfg" --no-ptxas --max-candidates 2 --apply-command "$apply")
export KLOOP_NVIDIA_SMI=false
finished() {
  sqlite3 "$1" "select round||':'||state||':'||step_key from steps where status='finished' order by 1"
}
rm -rf "$work" && mkdir -p "$work"
kloop optimize "${common[@]}" --journal "$work/ref.db" -o "$work/ref" -- "$@" >/dev/null || { echo "FAIL: reference run"; exit 1; }
finished "$work/ref.db" > "$work/ref.steps"
status=0
for at in extract:0 build:0 propose:1 apply:1 build:1 verify:1 measure:1 decide:1 propose:2 decide:2 done:0; do
  d=$work/${at/:/-}
  env KLOOP_TEST_CRASH_AT=$at kloop optimize "${common[@]}" --journal "$d.db" -o "$d" -- "$@" >/dev/null 2>&1
  rc=$?
  if [ "$rc" != 137 ]; then echo "FAIL: $at: expected the run to die with 137, got $rc"; status=1; continue; fi
  kloop optimize --resume "${common[@]}" --journal "$d.db" -o "$d" -- "$@" >/dev/null 2>"$d.err" \
    || { echo "FAIL: $at: resume failed: $(tail -n 2 "$d.err")"; status=1; continue; }
  finished "$d.db" > "$d.steps"
  if ! diff -q "$work/ref.steps" "$d.steps" >/dev/null; then
    echo "FAIL: $at: finished steps differ from the uninterrupted run:"; diff "$work/ref.steps" "$d.steps"; status=1; continue
  fi
  dups=$(sqlite3 "$d.db" "select count(*) from (select 1 from steps where status='finished' group by round,state,step_key having count(*)>1)")
  if [ "$dups" != 0 ]; then echo "FAIL: $at: $dups finished step(s) redone"; status=1; continue; fi
  echo "ok: killed at $at, resumed, $(wc -l < "$d.steps") finished steps, none redone"
done
exit $status
