#!/usr/bin/env bash
# test/Optimize/llm-batch.test: serves the fake LLM server's script SCRIPT (test/Propose/fake_llm_server.py),
# runs the rest of the command line against it as the llm proposer's endpoint (KLOOP_LLM_* set), and
# writes what the server received to OUT/stats.json.
#   llm_batch.sh SCRIPT OUT COMMAND...
set -u
script=$1; out=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../../Propose/fake_llm_server.sh"
start_fake_llm_server "$script" "$out" || { echo "llm_batch.sh: the fake server did not start" >&2; exit 2; }
trap 'kill $SERVER_PID 2>/dev/null' EXIT
port=$PORT
export KLOOP_PROMPTS_DIR="$here/../../../../prompts"
env KLOOP_LLM_BASE_URL="http://127.0.0.1:$port/v1" KLOOP_LLM_MODEL=batch-test KLOOP_LLM_API=openai KLOOP_LLM_API_KEY= "$@"
rc=$?
python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())' \
  "http://127.0.0.1:$port/stats" > "$out/stats.json"
exit $rc
