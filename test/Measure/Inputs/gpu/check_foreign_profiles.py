#!/usr/bin/env python3
"""Checks the NVML samples of libkloop-cupti.so profiles for gpu-foreign-load.test.

    check_foreign_profiles.py clean PROFILE...           no sample lists a foreign process, and at
                                                         least one lists a compute process (ours)
    check_foreign_profiles.py loaded PIDFILE PROFILE...  every sample lists the process in PIDFILE
                                                         among its foreign processes
Prints one line per check and the cost of the process queries (overhead.nvml_process_query_*);
exits 1 when a check fails.
"""
import json, sys

mode, args = sys.argv[1], sys.argv[2:]
pid = None
if mode == "loaded":
    pid = int(open(args[0]).read().strip())
    args = args[1:]
failed = False
queries = total_ns = max_ns = samples = 0
for path in args:
    p = json.load(open(path))
    env = p.get("env_samples", [])
    samples += len(env)
    o = p.get("overhead", {})
    queries += o.get("nvml_process_queries", 0)
    total_ns += o.get("nvml_process_query_ns", 0)
    max_ns = max(max_ns, o.get("nvml_process_query_max_ns", 0))
    if not env:
        print("%s: no NVML sample (nvml_error: %s)" % (path, p.get("nvml_error")))
        failed = True
    for i, s in enumerate(env):
        if mode == "clean" and s.get("foreign_processes") != 0:
            print("%s: env_samples[%d] foreign_processes %s, expected 0" % (path, i, s.get("foreign_processes")))
            failed = True
        if mode == "loaded" and (s.get("foreign_processes", -1) < 1 or pid not in s.get("foreign_pids", [])):
            print("%s: env_samples[%d] does not list pid %d as foreign: %s" % (path, i, pid, s))
            failed = True
    if mode == "clean" and not any(s.get("compute_processes", -1) >= 1 for s in env):
        print("%s: no sample lists a compute process" % path)
        failed = True
    if p.get("errors"):
        print("%s: errors: %s" % (path, p["errors"]))
print("%s: %d profiles, %d samples checked%s" % (mode, len(args), samples, ", FAILED" if failed else ", ok"))
print("process queries: %d, mean %.1f us, max %.1f us" %
      (queries, total_ns / queries / 1e3 if queries else 0, max_ns / 1e3))
sys.exit(1 if failed else 0)
