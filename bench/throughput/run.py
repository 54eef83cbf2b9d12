#!/usr/bin/env python3
"""Search throughput of kloop optimize, workload path against replay path (issue 14, item 6).

Run on the GPU machine from the repository root (bench/throughput/README.md):

    source .gpu/env.sh
    bench/throughput/run.sh -o /tmp/tp [--examples saxpy,histogram] [--candidates 4] [--workload-candidates 2]
                            [--comparisons 50] [--iters 10] [--timing-rounds 1] [--planted-flags "-Xptxas -O0"]
                            [--kloop BIN] [--examples-dir DIR] [--proposer builtin] [--compiler-args "-std=c++17"]

Per example, in one run and side by side:
  1. kloop optimize with search.timing: workload, then with search.timing: replay (the builtin
     proposer, --no-canary), both one candidate at a time (--prepare-jobs 0), then replay again with
     the next candidates prepared ahead on --prepare-jobs threads (path "ahead"); from each journal:
     candidates per minute over the search rounds, the
     GPU busy fraction (sum of the timed kernels' durations, median x samples per side, over the
     search's wall time), and the time split per candidate (propose, apply, build, verify+decide; for
     replayed steps also the replay worker's split from detail.replay_time);
  2. on the replay run's capture: `kloop replay --repeat C` of the baseline's cubin against itself
     (A/A: accepted ones are false accepts) and against a planted slowdown (the same source built
     with --planted-flags): the slower candidate must never be accepted, and with the sides swapped
     the faster one should be;
  3. the baseline's median per shape measured by the workload (first workload-timed step) and by
     replay (timed by CUPTI, and by events gated and with --no-gate), and, per replayed run, the speed-up of every candidate it and
     the workload run judged from the same incumbent, measured each way per shape (issue 14, item 5:
     within 2%). --replay-l2 runs the replay paths once per L2 mode (search.replay_l2).
Writes OUT/summary.json and, per example, OUT/EX/ (journals, logs, cubins).
"""
import argparse
import json
import math
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import time


def parse_args(argv):
    p = argparse.ArgumentParser(prog="bench/throughput/run.sh", description=__doc__.split("\n")[0])
    p.add_argument("-o", dest="out", required=True, help="output directory (created; must not exist)")
    p.add_argument("--examples", default="saxpy", help="comma-separated examples (default saxpy)")
    p.add_argument("--candidates", type=int, default=4, help="candidates of the replay run (default 4)")
    p.add_argument("--workload-candidates", type=int, default=2,
                   help="candidates of the workload run (default 2; 40-95 s each on the H200)")
    p.add_argument("--comparisons", type=int, default=50,
                   help="A/A and planted-slowdown comparisons each (default 50; the issue asks 200)")
    p.add_argument("--iters", type=int, default=10, help="timed launches per side of a comparison (default 10)")
    p.add_argument("--timing-rounds", type=int, default=1, help="kloop optimize --timing-rounds (default 1)")
    p.add_argument("--planted-flags", default="-Xptxas -O0",
                   help="extra compiler flags that make the planted slow cubin (default '-Xptxas -O0')")
    p.add_argument("--paths", default="workload,replay,ahead",
                   help="which search paths to run: workload, replay, ahead (replay with candidates prepared ahead); "
                        "default all three; a path named twice runs twice, the second as PATH#2")
    p.add_argument("--replay-l2", default="default",
                   help="comma-separated search.replay_l2 modes (flush, steady, rotate, flush-dirty, warm, or default: "
                        "unset, the mode that follows the workload's l2); the replay and ahead paths run once per "
                        "mode, the first under the path's name, the others as PATH@MODE (default: default)")
    p.add_argument("--prepare-jobs", type=int, default=8, help="kloop optimize --prepare-jobs of the ahead path "
                                                               "(default 8)")
    p.add_argument("--kloop", default=None,
                   help="the kloop binary (default: kloop on PATH, else .gpu/kb/bin/kloop, where the GPU machine "
                        "unpacks the staged binaries)")
    p.add_argument("--examples-dir", default="examples", help="where the examples are (default examples)")
    p.add_argument("--proposer", default="builtin", help="kloop optimize --proposer (default builtin)")
    p.add_argument("--compiler-args", default="-std=c++17", help="arguments after -- of kloop optimize")
    p.add_argument("--extra-optimize-args", default="", help="more kloop optimize arguments (tests)")
    a = p.parse_args(argv)
    for name in ("candidates", "workload_candidates", "comparisons", "iters", "timing_rounds"):
        if getattr(a, name) < 0 or (name != "workload_candidates" and getattr(a, name) == 0):
            p.error("--%s must be %s" % (name.replace("_", "-"), "at least 1" if name != "workload_candidates"
                                          else "at least 0"))
    a.examples = [e for e in a.examples.split(",") if e]
    a.paths = [x for x in a.paths.split(",") if x]
    bad = [x for x in a.paths if x not in ("workload", "replay", "ahead")]
    if bad or not a.paths:
        p.error("--paths: expected workload, replay and/or ahead, got %r" % a.paths)
    a.replay_l2 = [m for m in a.replay_l2.split(",") if m]
    bad = [m for m in a.replay_l2 if m not in ("flush", "steady", "rotate", "flush-dirty", "warm", "default")]
    if bad or not a.replay_l2:
        p.error("--replay-l2: expected flush, steady, rotate, flush-dirty, warm and/or default, got %r" % a.replay_l2)
    if a.prepare_jobs < 1:
        p.error("--prepare-jobs must be at least 1")
    for e in a.examples:
        if not os.path.isfile(os.path.join(a.examples_dir, e, ".kloop.yaml")):
            p.error("--examples: no %s/%s/.kloop.yaml" % (a.examples_dir, e))
    check_kloop_and_out(p, a)
    return a


def check_kloop_and_out(p, a):
    """Resolves a.kloop (default: kloop on PATH, else .gpu/kb/bin/kloop, where the GPU machine unpacks the
    staged binaries) and refuses an existing -o, through argparse parser p's error."""
    if a.kloop is None:
        a.kloop = shutil.which("kloop") or (".gpu/kb/bin/kloop" if os.path.isfile(".gpu/kb/bin/kloop") else None)
        if a.kloop is None:
            p.error("--kloop: no kloop on PATH and no .gpu/kb/bin/kloop")
    a.kloop = os.path.abspath(a.kloop) if os.sep in a.kloop else a.kloop
    if os.path.exists(a.out):
        p.error("-o %s: exists (the benchmark writes a fresh directory)" % a.out)


def log(msg):
    print(msg, flush=True)


def with_search_key(yaml_text, key, value):
    """The .kloop.yaml text with search.KEY set to value."""
    if re.search(r"^  %s:" % key, yaml_text, re.M):
        return re.sub(r"^  %s:.*$" % key, "  %s: %s" % (key, value), yaml_text, flags=re.M)
    if re.search(r"^search:\s*$", yaml_text, re.M):
        return re.sub(r"^search:\s*$", "search:\n  %s: %s" % (key, value), yaml_text, flags=re.M)
    return yaml_text.rstrip("\n") + "\nsearch:\n  %s: %s\n" % (key, value)


def with_timing(yaml_text, timing, replay_l2=None):
    """The .kloop.yaml text with search.timing (and search.replay_l2 when given) set."""
    text = with_search_key(yaml_text, "timing", timing)
    return with_search_key(text, "replay_l2", replay_l2) if replay_l2 else text


def yaml_scalar(text, key):
    m = re.search(r'^  %s:\s*"?(.*?)"?\s*$' % key, text, re.M)
    return m.group(1) if m else None


def tolerance_of(yaml_text):
    """kloop replay's --tolerance for the outputs (exact unless one abs/rel tolerance is given)."""
    for m in re.finditer(r"dtype:\s*(\w+),\s*tolerance:\s*\{kind:\s*(\w+)(?:,\s*value:\s*([^}\s]+))?", yaml_text):
        dtype, kind, value = m.groups()
        if kind in ("abs", "rel") and dtype in ("f32", "f64"):
            return "%s:%s,%s" % (kind, value, dtype)
    return "exact"


def run(cmd, logfile, cwd=None, env=None):
    t0 = time.time()
    with open(logfile, "w") as f:
        r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=cwd, env=env)
    return r.returncode, time.time() - t0


def steps_of(db):
    con = sqlite3.connect(db)
    rows = con.execute("select round, state, step_key, started_ns, finished_ns, payload from steps "
                       "where status = 'finished' order by id").fetchall()
    con.close()
    return [(r, st, k, s, f, json.loads(p) if p else {}) for r, st, k, s, f, p in rows]


SPLIT = (("propose", ("propose",)), ("apply", ("apply",)), ("build", ("build",)),
         ("verify", ("verify", "measure", "decide")))
REPLAY_SPLIT = ("cubin_build_s", "worker_start_s", "capture_load_s", "modules_s", "restore_s", "timed_s",
                "check_s", "round_trip_s")


def analyse(db):
    """Search-round figures of one kloop optimize journal."""
    steps = [s for s in steps_of(db) if s[0] >= 1]
    rounds = sorted({s[0] for s in steps})
    out = {"candidates": len(rounds), "replayed": 0, "workload_timed": 0, "prepared": 0, "outcomes": {},
           "split_s": {k: 0.0 for k, _ in SPLIT}, "replay_split_s": {k: 0.0 for k in REPLAY_SPLIT},
           "worker_starts": 0, "kernel_s": 0.0, "wall_s": 0.0, "per_round": {}, "cubin_builds": 0,
           "workload_builds": 0}
    if not steps:
        return out
    out["wall_s"] = (max(s[4] for s in steps) - min(s[3] for s in steps)) * 1e-9
    for rnd, state, key, start, fin, p in steps:
        for name, states in SPLIT:
            if state in states:
                out["split_s"][name] += (fin - start) * 1e-9
        if state == "build":
            out["cubin_builds" if p.get("cubin") else "workload_builds"] += 1
        if state == "apply" and "prepared_ahead_s" in p:
            out["prepared"] += 1
        if state == "propose":
            out["per_round"].setdefault(rnd, {})["proposal"] = p.get("proposal")
        if state == "verify":
            timing = p.get("timing")
            out["replayed" if timing == "replay" else "workload_timed"] += 1
            out["last_verdict_ns"] = max(out.get("last_verdict_ns", 0), fin)
            r = out["per_round"].setdefault(rnd, {})
            r.update(timing=timing, evidence=p.get("evidence") or [], outcome=p.get("outcome"))
            for e in p.get("evidence") or []:
                for side in ("base", "cand"):
                    if e.get(side + "_median_ns") and e.get(side + "_n"):
                        out["kernel_s"] += e[side + "_median_ns"] * e[side + "_n"] * 1e-9
            rt = (p.get("detail") or {}).get("replay_time")
            if rt:
                for k in REPLAY_SPLIT:
                    out["replay_split_s"][k] += rt.get(k, 0.0)
                out["worker_starts"] = max(out["worker_starts"], rt.get("worker_starts", 0))
        if state == "decide":
            out["outcomes"][p.get("outcome")] = out["outcomes"].get(p.get("outcome"), 0) + 1
            out["per_round"].setdefault(rnd, {})["accepted"] = bool(p.get("accepted"))
    n = max(1, len(rounds))
    out["per_candidate_s"] = {k: v / n for k, v in out["split_s"].items()}
    if out["replayed"]:
        out["per_replayed_step_s"] = {k: v / out["replayed"] for k, v in out["replay_split_s"].items()}
    out["candidates_per_minute"] = 60.0 * len(rounds) / out["wall_s"] if out["wall_s"] > 0 else None
    # Rounds refused before a build (an empty or malformed proposal) cost little; this counts only the
    # candidates that were timed, up to the last verdict.
    out["measured"] = out["replayed"] + out["workload_timed"]
    span = (out.get("last_verdict_ns", 0) - min(s[3] for s in steps)) * 1e-9
    out["measured_per_minute"] = 60.0 * out["measured"] / span if out["measured"] and span > 0 else None
    out["gpu_busy"] = out["kernel_s"] / out["wall_s"] if out["wall_s"] > 0 else None
    return out


def baseline_medians(a):
    """Shape -> the baseline's median (ns) from the first step that measured it, up to the run's first
    acceptance (the rounds after it time a new incumbent, not the baseline)."""
    out = {}
    for rnd in sorted(a["per_round"]):
        for e in a["per_round"][rnd].get("evidence", []):
            key = "%s/%s" % (e["kernel"], e["shape"])
            if e.get("base_median_ns") and key not in out:
                out[key] = e["base_median_ns"]
        if a["per_round"][rnd].get("accepted"):
            break
    return out


def repeat_counts(text):
    m = re.search(r"comparison\(s\) by decide's rule: accepted (\d+) rejected (\d+) crashed (\d+) "
                  r"failed_verification (\d+) fallback (\d+)", text)
    if not m:
        return None
    return dict(zip(("accepted", "rejected", "crashed", "failed_verification", "fallback"), map(int, m.groups())))


def replay_median_us(text):
    """Launch index -> baseline median (us) from kloop replay's table."""
    return {int(m.group(1)): float(m.group(2)) for m in re.finditer(r"^  (\d+)\s+.*?\s([0-9.]+) us", text, re.M)}


def fmt(v, spec="%.2f"):
    return "-" if v is None else spec % v


def copy_example(examples_dir, ex, src_root):
    """Copies example ex and the examples' common/ (the harness its protected files include) under
    src_root; returns the copy's .kloop.yaml path."""
    shutil.copytree(os.path.join(examples_dir, ex), os.path.join(src_root, ex))
    common = os.path.join(examples_dir, "common")
    if os.path.isdir(common):
        shutil.copytree(common, os.path.join(src_root, "common"))
    return os.path.join(src_root, ex, ".kloop.yaml")


def bench_example(a, ex, top):
    src_root = os.path.join(top, ex, "src")
    yaml_path = copy_example(a.examples_dir, ex, src_root)
    yaml_text = open(yaml_path).read()
    res = {"example": ex, "paths": {}}
    log("=== %s" % ex)
    for path, kind, mode in runs_of(a):
        n = a.workload_candidates if kind == "workload" else a.candidates
        if n == 0:
            continue
        timing = "workload" if kind == "workload" else "replay"
        cfg = os.path.join(src_root, ex, ".kloop.%s.yaml" % path)
        open(cfg, "w").write(with_timing(yaml_text, timing, mode))
        db, outdir = os.path.join(top, ex, path + ".db"), os.path.join(top, ex, path)
        cmd = [a.kloop, "optimize", "--config", cfg, "--journal", db, "-o", outdir, "--proposer", a.proposer,
               "--max-candidates", str(n), "--plateau", "0", "--no-canary", "--timing-rounds",
               str(a.timing_rounds), "--prepare-jobs", str(a.prepare_jobs if kind == "ahead" else 0)] + \
            shlex.split(a.extra_optimize_args) + ["--"] + shlex.split(a.compiler_args)
        code, wall = run(cmd, os.path.join(top, ex, path + ".log"))
        if not os.path.exists(db):
            log("%s: kloop optimize (%s) exited %d without a journal; see %s/%s.log" % (ex, path, code, top + "/" + ex,
                                                                                       path))
            continue
        r = analyse(db)
        r.update(exit=code, run_wall_s=wall)
        res["paths"][path] = r
    log("%-9s %10s %8s %9s %8s %8s %8s %9s  %s" % ("path", "candidates", "cand/min", "gpu busy", "propose",
                                                   "apply", "build", "verify", "(s per candidate; outcomes)"))
    for path, r in res["paths"].items():
        pc = r.get("per_candidate_s", {})
        cands = "%d" % r["candidates"] + (" (%d rep)" % r["replayed"] if path != "workload" else "") + \
            (" %d ahead" % r["prepared"] if path.startswith("ahead") else "")
        log("%-9s %10s %8s %8s%% %8s %8s %8s %9s  %s" % (
            path, cands, fmt(r.get("candidates_per_minute")), fmt(100 * r["gpu_busy"] if r.get("gpu_busy") is not None
                                                                   else None, "%.3f"),
            fmt(pc.get("propose")), fmt(pc.get("apply")), fmt(pc.get("build")), fmt(pc.get("verify")),
            ", ".join("%s %d" % kv for kv in sorted(r["outcomes"].items(), key=lambda kv: str(kv[0])))))
    for path, r in res["paths"].items():
        log("%s timed candidates: %d, %s per minute (first search step to the last verdict)" % (
            path, r["measured"], fmt(r.get("measured_per_minute"))))
    for path, r in res["paths"].items():
        if r.get("per_replayed_step_s"):
            log("%s split (s per replayed step): " % path + " ".join(
                "%s %.3f" % (k[:-2], v) for k, v in r["per_replayed_step_s"].items()) +
                "; worker started %d time(s); build steps: %d cubin alone, %d workload" % (
                    r["worker_starts"], r["cubin_builds"], r["workload_builds"]))
    rep = res["paths"].get("replay")
    res["checks"] = replay_checks(a, ex, top, src_root, yaml_text, rep)
    wl = res["paths"].get("workload")
    baseline_agreement(res, wl, rep)
    for path, r in res["paths"].items():
        if wl and path != "workload":
            agreement(res, path, wl, r, "workload" if path.startswith("workload") else "replay")
    return res


def runs_of(a):
    """(run name, path kind, search.replay_l2 or None) for every kloop optimize run of an example. A path
    named again in --paths runs again: its second run is PATH#2 (the run-to-run spread of one path)."""
    out, seen = [], {}
    for path in a.paths:
        seen[path] = seen.get(path, 0) + 1
        again = "" if seen[path] == 1 else "#%d" % seen[path]
        if path == "workload":
            out.append((path + again, path, None))
            continue
        for i, mode in enumerate(a.replay_l2):
            out.append(((path if i == 0 else "%s@%s" % (path, mode)) + again, path, None if mode == "default" else mode))
    return out


def edits_of(round_):
    """A round's proposed edits: what makes two runs' candidates the same (the rationale and provenance
    quote the profile, whose figures differ from run to run)."""
    p = round_.get("proposal")
    return p.get("edits") if isinstance(p, dict) else p


def kernel_base(name):
    """A kernel's name without "void", template arguments, parameters and namespaces: the workload's
    evidence rows name the target ("layernorm_rows"), replay's the captured launch's demangled name
    ("void layernorm_rows<128>(...)")."""
    return re.split(r"[<(]", re.sub(r"^void\s+", "", name), 1)[0].split("::")[-1].strip()


def same_kernel(a, b):
    """Whether two evidence rows name one kernel (kernel_base)."""
    return kernel_base(a) == kernel_base(b)


def common_candidates(w, r, timing):
    """Every round both runs judged from the same incumbent (nothing accepted before it in either), with
    the same proposal, timed by the workload in w and as `timing` says in r."""
    out = []
    for rnd in sorted(set(w["per_round"]) & set(r["per_round"])):
        a, b = w["per_round"][rnd], r["per_round"][rnd]
        if edits_of(a) != edits_of(b):
            break
        if a.get("timing") == "workload" and b.get("timing") == timing and a.get("evidence") and b.get("evidence"):
            out.append((rnd, a, b))
        if a.get("accepted") or b.get("accepted"):
            break
    return out


AGREE_PCT = 2.0  # issue 14, item 5


def difference_interval(e, w):
    """The ~95% interval (percent) of speed-up e / speed-up w from the two rows' bootstrap 95% intervals
    (ci_low, ci_high of median(base) / median(cand), docs/optimize.md): on the log scale, the half-widths
    added in quadrature, as for the difference of two independent estimates. None without both intervals."""
    if not all(isinstance(x.get(k), (int, float)) and x.get(k) > 0 for x in (e, w) for k in ("ci_low", "ci_high")):
        return None
    h = math.hypot(math.log(e["ci_high"] / e["ci_low"]) / 2, math.log(w["ci_high"] / w["ci_low"]) / 2)
    d = math.log(e["speedup"] / w["speedup"])
    return [(math.exp(d - h) - 1) * 100, (math.exp(d + h) - 1) * 100]


def verdict(interval):
    """Whether the difference is shown within AGREE_PCT, shown beyond it, or neither."""
    if interval is None:
        return "no interval"
    lo, hi = interval
    if -AGREE_PCT <= lo and hi <= AGREE_PCT:
        return "within"
    return "beyond" if lo > AGREE_PCT or hi < -AGREE_PCT else "undecided"


def agreement(res, path, wl, rep, timing="replay"):
    """Issue 14, item 5: per common candidate and shape, the speed-up by the run `path` (replay, or the
    workload again) and by the workload run, their difference with its interval, and whether that shows
    agreement within AGREE_PCT."""
    rows = []
    for rnd, a, b in common_candidates(wl, rep, timing):
        for e in b["evidence"]:
            match = [x for x in a["evidence"] if same_kernel(x["kernel"], e["kernel"]) and x["shape"] == e["shape"]]
            if match and match[0].get("speedup") and e.get("speedup"):
                w = match[0]
                d = (e["speedup"] / w["speedup"] - 1) * 100
                ci = difference_interval(e, w)
                rows.append({"round": rnd, "kernel": e["kernel"], "shape": e["shape"], "timing": timing,
                             "replay": e["speedup"],
                             "workload": w["speedup"], "difference_pct": d, "difference_ci_pct": ci,
                             "verdict": verdict(ci)})
                log("agreement %-16s cand-%d %s/%s: %s %.4fx, workload %.4fx, %+.2f%% [%s] %s" % (
                    path, rnd, e["kernel"], e["shape"], timing, e["speedup"], w["speedup"], d,
                    "%+.2f%%, %+.2f%%" % tuple(ci) if ci else "-", rows[-1]["verdict"]))
    worst = max((abs(x["difference_pct"]) for x in rows), default=None)
    counts = {v: sum(1 for x in rows if x["verdict"] == v) for v in ("within", "beyond", "undecided")}
    log("agreement %-16s %d comparison(s); largest difference %s; within %g%%: %d, beyond: %d, undecided: %d" % (
        path, len(rows), fmt(worst, "%.2f%%"), AGREE_PCT, counts["within"], counts["beyond"], counts["undecided"]))
    res.setdefault("agreement", {})[path] = {"rows": rows, "largest_difference_pct": worst, "verdicts": counts}


def build_cubin(a, ex, src_root, yaml_text, out, flags, logfile):
    tmpl = yaml_scalar(yaml_text, "cubin_command")
    if not tmpl:
        cu = re.search(r"^sources:\s*\[([^\],]+\.cu)", yaml_text, re.M)
        if not cu:
            return "no search.cubin_command and no single .cu source"
        tmpl = "nvcc -cubin -arch=native -o {cubin} {source_dir}/" + cu.group(1).strip()
    cmd = tmpl.replace("{cubin}", shlex.quote(out)).replace("{source_dir}", shlex.quote(os.path.join(src_root, ex)))
    code, _ = run(["/bin/sh", "-c", cmd + (" " + flags if flags else "")], logfile, cwd=os.path.join(src_root, ex))
    return None if code == 0 and os.path.isfile(out) else "the cubin build failed (%s)" % logfile


def replay_checks(a, ex, top, src_root, yaml_text, rep):
    cap = os.path.join(top, ex, "replay", "capture")
    checks = {}
    if not os.path.isfile(os.path.join(cap, "manifest.json")):
        log("replay checks: no capture (%s)" % ("the replay run made none" if rep else "no replay run"))
        return checks
    base, slow = os.path.join(top, ex, "base.cubin"), os.path.join(top, ex, "planted.cubin")
    for out, flags in ((base, ""), (slow, a.planted_flags)):
        why = build_cubin(a, ex, src_root, yaml_text, out, flags, out + ".log")
        if why:
            log("replay checks: %s" % why)
            return checks
    tol = tolerance_of(yaml_text)
    common = ["--iters", str(a.iters), "--tolerance", tol]

    def replay(name, extra):
        logfile = os.path.join(top, ex, name + ".log")
        code, wall = run([a.kloop, "replay", cap] + common + extra, logfile)
        return code, wall, open(logfile).read()

    for name, cand_base, cand in (("aa", base, base), ("planted", base, slow), ("planted_reversed", slow, base)):
        code, wall, text = replay(name, ["--cubin", cand_base, "--candidate-cubin", cand,
                                         "--repeat", str(a.comparisons)])
        checks[name] = {"exit": code, "wall_s": wall, "counts": repeat_counts(text)}
    for name, extra in (("cupti", []), ("gated", ["--timer", "events"]), ("ungated", ["--timer", "events", "--no-gate"])):
        code, wall, text = replay("median_" + name, ["--cubin", base] + extra)
        checks["median_" + name] = replay_median_us(text)
    c = lambda n, k: (checks[n]["counts"] or {}).get(k)
    log("A/A under replay: %s of %d accepted (false accepts; %s s for all)" % (
        fmt(c("aa", "accepted"), "%d"), a.comparisons, fmt(checks["aa"]["wall_s"], "%.1f")))
    log("planted slowdown (%s): the slower candidate accepted %s of %d, rejected %s; swapped (a real speed-up) "
        "accepted %s of %d" % (a.planted_flags, fmt(c("planted", "accepted"), "%d"), a.comparisons,
                               fmt(c("planted", "rejected"), "%d"), fmt(c("planted_reversed", "accepted"), "%d"),
                               a.comparisons))
    return checks


def kernel_shape_key(key):
    """A baseline_medians key with the kernel named as same_kernel compares names: "layernorm_rows/SHAPE"
    for both the workload's "layernorm_rows" and replay's "void layernorm_rows<128>"."""
    kernel, _, shape = key.rpartition("/")
    return "%s/%s" % (kernel_base(kernel), shape)


def baseline_agreement(res, wl, rep):
    log("baseline median       %-24s %14s %14s %9s" % ("kernel/shape", "workload", "replay", "rep/wl"))
    wmed = {kernel_shape_key(k): v for k, v in (baseline_medians(wl) if wl else {}).items()}
    rmed = {kernel_shape_key(k): v for k, v in (baseline_medians(rep) if rep else {}).items()}
    cupti = res["checks"].get("median_cupti", {})
    gated = res["checks"].get("median_gated", {})
    ungated = res["checks"].get("median_ungated", {})
    rows = []
    for key in sorted(set(wmed) | set(rmed)):
        w, r = wmed.get(key), rmed.get(key)
        rows.append({"shape": key, "workload_ns": w, "replay_ns": r})
        log("                      %-24s %14s %14s %9s" % (
            key, fmt(w / 1e3 if w else None, "%.3f us"), fmt(r / 1e3 if r else None, "%.3f us"),
            fmt(r / w if r and w else None, "%.3f")))
    if gated:
        log("replay of the baseline alone (the first search shape's capture, launch 0): CUPTI %s us; events: gated %s us, "
            "no gate %s us" % (fmt(cupti.get(0), "%.3f"), fmt(gated.get(0), "%.3f"), fmt(ungated.get(0), "%.3f")))
    res["baseline_medians"] = rows


def main(argv):
    a = parse_args(argv)
    os.makedirs(a.out)
    t0 = time.time()
    results = []
    for ex in a.examples:
        os.makedirs(os.path.join(a.out, ex))
        results.append(bench_example(a, ex, os.path.abspath(a.out)))
    summary = {"schema": "kloop-throughput-bench/1", "wall_s": time.time() - t0, "examples": results,
               "settings": {k: getattr(a, k) for k in ("candidates", "workload_candidates", "comparisons", "iters",
                                                        "timing_rounds", "planted_flags", "paths", "proposer",
                                                        "prepare_jobs", "replay_l2")}}
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    log("total %.0f s; %s/summary.json" % (summary["wall_s"], a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
