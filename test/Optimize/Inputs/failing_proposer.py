#!/usr/bin/env python3
# A command proposer that fails in a different way each round (the context's "round"): 1 exits 3
# with a message on stderr, 2 kills itself with SIGKILL, 3 writes 17 MiB to stdout, 4 sleeps past
# any short --command-timeout.
import json, os, signal, sys, time
r = json.load(sys.stdin)["round"]
if r == 1:
    sys.stderr.write("agent: out of ideas\n")
    sys.exit(3)
if r == 2:
    os.kill(os.getpid(), signal.SIGKILL)
if r == 3:
    sys.stdout.write("x" * (17 << 20))
    sys.exit(0)
time.sleep(60)
