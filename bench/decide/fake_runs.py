#!/usr/bin/env python3
"""Synthetic runs for kloop-decide-bench (no GPU): what bench/decide/run.sh would write.

    fake_runs.py DIR [--comparisons 30] [--rounds 2] [--launches 30] [--slowdown 0.03]
                     [--noise 0.003] [--seed 1] [--throttle]

Writes DIR/<i>-<arm>-<r>.json (kloop-cupti/1 profiles, as libkloop-cupti.so writes them) and
DIR/<i>-<arm>-<r>.events (one CUDA-event time in ms per launch) for arms A and A2 (the same base
kernel) and S (SLOWDOWN slower). Every process has LAUNCHES saxpy launches, the first a slow warm-up,
interleaved with an init kernel that the tool must ignore. A launch lasts
50 us x (1 + process drift) x (1 + noise), with drift ~ N(0, NOISE/3) per process and noise
~ N(0, NOISE) per launch; its event time is the duration plus 1.5 us +- 0.1 us, in ms.
--throttle marks launches 5..9 of comparison 0, arm A, round 0 as throttled (NVML SW power cap),
preceded by a benign idle sample that must not count.
"""
import argparse, json, os, random

p = argparse.ArgumentParser()
p.add_argument("dir")
p.add_argument("--comparisons", type=int, default=30)
p.add_argument("--rounds", type=int, default=2)
p.add_argument("--launches", type=int, default=30)
p.add_argument("--slowdown", type=float, default=0.03)
p.add_argument("--noise", type=float, default=0.003)
p.add_argument("--seed", type=int, default=1)
p.add_argument("--throttle", action="store_true")
a = p.parse_args()
os.makedirs(a.dir, exist_ok=True)
rng = random.Random(a.seed)
name = "saxpy(long long, float, float const*, float const*, float*)"

def process(i, arm, r):
    scale = 1 + (a.slowdown if arm == "S" else 0.0)
    drift = 1 + rng.gauss(0, a.noise / 3)
    launches, events, env = [], [], []
    t, seq = 1_000_000_000, 0
    # init kernel first: not a saxpy launch.
    launches.append({"seq": seq, "kernel": "_Z4initxPfS_S_", "name": "init(long long, float*, float*, float*)",
                     "grid": [1056, 1, 1], "block": [256, 1, 1], "start_ns": t, "end_ns": t + 30000,
                     "duration_ns": 30000})
    seq += 1
    t += 100000
    env.append({"t_ns": t - 50000, "sm_clock_mhz": 1980, "mem_clock_mhz": 3201, "temp_c": 40,
                "power_mw": 300000, "throttle_reasons": 1})
    for k in range(a.launches):
        d = 50000.0 * scale * drift * (1 + rng.gauss(0, a.noise))
        if k == 0:
            d *= 1.5  # warm-up
        d = int(round(d))
        if a.throttle and (i, arm, r) == (0, "A", 0) and k in (5, 10):
            env.append({"t_ns": t - 1, "sm_clock_mhz": 1500, "mem_clock_mhz": 3201, "temp_c": 80,
                        "power_mw": 700000, "throttle_reasons": 4 if k == 5 else 1})
        launches.append({"seq": seq, "kernel": "_Z5saxpyxfPKfS0_Pf", "name": name, "grid": [65536, 1, 1],
                         "block": [256, 1, 1], "registers": 16, "static_smem": 0, "dynamic_smem": 0,
                         "stream": 7, "context": 1, "start_ns": t, "end_ns": t + d, "duration_ns": d})
        events.append((d + 1500 + rng.gauss(0, 100)) / 1e6)
        seq += 1
        t += d + 20000
    prof = {"schema": "kloop-cupti/1", "device": {"name": "Fake GPU", "cc": "9.0", "l2_bytes": 62914560},
            "launches": launches, "env_samples": env, "nvml": True, "captures": [],
            "overhead": {"wall_ns_in_callbacks": 1000}, "errors": [], "warnings": []}
    stem = os.path.join(a.dir, "%d-%s-%d" % (i, arm, r))
    with open(stem + ".json", "w") as f:
        json.dump(prof, f)
    with open(stem + ".events", "w") as f:
        f.write("".join("%.9g\n" % e for e in events))

for i in range(a.comparisons):
    for r in range(a.rounds):
        for arm in ("A", "A2", "S"):
            process(i, arm, r)
