#!/usr/bin/env python3
"""Runs a command against test/Propose/fake_llm_server.py.

    with_fake_llm.py SCRIPT.json -- COMMAND [ARG...]

Starts the fake server with SCRIPT.json, runs COMMAND with KLOOP_LLM_BASE_URL set to
it (and KLOOP_LLM_API=openai, KLOOP_LLM_MODEL=fake-model unless set), stops the server
and exits with COMMAND's exit status. COMMAND's stdout and stderr pass through.
"""
import os
import subprocess
import sys


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.stderr.write(__doc__)
        return 2
    here = os.path.dirname(os.path.abspath(__file__))
    server = subprocess.Popen(
        [sys.executable, os.path.join(here, "..", "fake_llm_server.py"), "--script", sys.argv[1]],
        stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline().split()
        if len(line) != 2 or line[0] != "PORT":
            sys.stderr.write("with_fake_llm.py: the fake server did not start\n")
            return 2
        env = dict(os.environ)
        env["KLOOP_LLM_BASE_URL"] = "http://127.0.0.1:%s/v1" % line[1]
        env.setdefault("KLOOP_LLM_API", "openai")
        env.setdefault("KLOOP_LLM_MODEL", "fake-model")
        return subprocess.call(sys.argv[3:], env=env)
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    sys.exit(main())
