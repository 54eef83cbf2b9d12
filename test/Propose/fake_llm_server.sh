# Sourced by bash scripts that run kloop against test/Propose/fake_llm_server.py (bench/llm-replay/run.sh,
# test/Optimize/Inputs/replay/llm_batch.sh). start_fake_llm_server SCRIPT DIR starts the server on the
# replies of SCRIPT, its stdout and stderr in DIR/server.out and DIR/server.err, and sets SERVER_PID and
# PORT; it returns 1, PORT empty, when the server printed no port within 10 s.
start_fake_llm_server() {
  python3 "$(dirname "${BASH_SOURCE[0]}")/fake_llm_server.py" --script "$1" >"$2/server.out" 2>"$2/server.err" &
  SERVER_PID=$!
  PORT=
  for _ in $(seq 100); do
    PORT=$(sed -n 's/^PORT \([0-9]*\)$/\1/p' "$2/server.out")
    [ -n "$PORT" ] && return 0
    sleep 0.1
  done
  return 1
}
