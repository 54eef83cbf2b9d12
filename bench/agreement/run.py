#!/usr/bin/env python3
"""Agreement of replay's speed-ups with the workload's (issue 14, item 5), on the bundled examples.

Run on the GPU machine from the repository root (bench/agreement/README.md):

    source .gpu/env.sh
    bench/agreement/run.sh -o /tmp/agree [--examples saxpy,matmul] [--candidates 3] [--timing-rounds 3]

Per example, `kloop optimize --agreement` on a copy: every replayed search step is also timed by the
workload compare, and its journal holds both speed-ups per kernel and shape with the difference and its
interval (docs/optimize.md, "Agreement of replay and the workload"). This prints those rows side by
side, the search shapes no row covers and why, and a summary; OUT/summary.json has them all.
"""
import argparse
import importlib.util
import json
import os
import re
import shlex
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("throughput_bench", os.path.join(HERE, "..", "throughput", "run.py"))
tp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tp)
log, fmt = tp.log, tp.fmt


def parse_args(argv):
    p = argparse.ArgumentParser(prog="bench/agreement/run.sh", description=__doc__.split("\n")[0])
    p.add_argument("-o", dest="out", required=True, help="output directory (created; must not exist)")
    p.add_argument("--examples", default="all", help="comma-separated examples, or all (default)")
    p.add_argument("--candidates", type=int, default=3, help="kloop optimize --max-candidates (default 3)")
    p.add_argument("--timing-rounds", type=int, default=3,
                   help="kloop optimize --timing-rounds: replay's and the workload's rounds (default 3)")
    p.add_argument("--screen-seeds", type=int, default=0,
                   help="kloop optimize --screen-seeds: the workload side's seeds per shape (default 0: all)")
    p.add_argument("--time-budget", type=float, default=0,
                   help="kloop optimize --time-budget per example, seconds (default 0: none)")
    p.add_argument("--kloop", default=None, help="the kloop binary (default: kloop on PATH, else .gpu/kb/bin/kloop)")
    p.add_argument("--examples-dir", default="examples", help="where the examples are (default examples)")
    p.add_argument("--proposer", default="builtin", help="kloop optimize --proposer (default builtin)")
    p.add_argument("--compiler-args", default="-std=c++17", help="arguments after -- of kloop optimize")
    p.add_argument("--extra-optimize-args", default="", help="more kloop optimize arguments")
    a = p.parse_args(argv)
    for name in ("candidates", "timing_rounds"):
        if getattr(a, name) < 1:
            p.error("--%s must be at least 1" % name.replace("_", "-"))
    if a.screen_seeds < 0 or a.time_budget < 0:
        p.error("--screen-seeds and --time-budget must not be negative")
    for name in ("extra_optimize_args", "compiler_args"):
        try:
            shlex.split(getattr(a, name))
        except ValueError as e:
            p.error("--%s: %s" % (name.replace("_", "-"), e))
    if not os.path.isdir(a.examples_dir):
        p.error("--examples-dir %s: not a directory" % a.examples_dir)
    if not a.out:
        p.error("-o: empty")
    if a.examples == "all":
        a.examples = sorted(e for e in os.listdir(a.examples_dir)
                            if os.path.isfile(os.path.join(a.examples_dir, e, ".kloop.yaml")))
    else:
        a.examples = [e for e in a.examples.split(",") if e]
    for e in a.examples:
        if not os.path.isfile(os.path.join(a.examples_dir, e, ".kloop.yaml")):
            p.error("--examples: no %s/%s/.kloop.yaml" % (a.examples_dir, e))
    if not a.examples:
        p.error("--examples: no example")
    if len(set(a.examples)) != len(a.examples):
        p.error("--examples: an example is named twice")
    tp.check_kloop_and_out(p, a)
    return a


def search_shapes(yaml_text):
    """The names of the shapes that are not held out, in the description's order: the items of its
    top-level `shapes:` list, in flow style (`- {name: X, ...}`) or block style (`- name: X` and more
    lines indented under it)."""
    m = re.search(r"^shapes:[ \t]*\n((?:[ \t]+.*\n?|[ \t]*\n)*)", yaml_text, re.M)
    if not m:
        return []
    items = re.split(r"^[ \t]*-[ \t]", m.group(1), flags=re.M)[1:]
    out = []
    for item in items:
        name = re.search(r"""\bname:\s*["']?([^"',}\s]+)""", item)
        if name and not re.search(r"\bheld_out:\s*true\b", item):
            out.append(name.group(1))
    return out


def steps(db):
    """(candidate key, verify payload) of every search step, in order."""
    return [(k, p) for r, st, k, s, f, p in tp.steps_of(db) if st == "verify" and r >= 1]


def example_rows(key, payload):
    a = (payload.get("detail") or {}).get("agreement")
    return [dict(r, candidate=key) for r in a["rows"]] if a else []


def why_no_row(key, payload):
    """Why search step key has no agreement row."""
    if payload.get("timing") != "replay":
        return "timed by workload runs: %s" % (payload.get("replay_fallback") or "no replay")
    if not (payload.get("detail") or {}).get("agreement"):
        return "replay %s, nothing to compare" % payload.get("outcome")
    return "no kernel and shape matched the workload's rows"


def bench_example(a, ex, top):
    log("=== %s" % ex)
    yaml_path = tp.copy_example(a.examples_dir, ex, os.path.join(top, ex, "src"))
    db, outdir = os.path.join(top, ex, "run.db"), os.path.join(top, ex, "out")
    cmd = [a.kloop, "optimize", "--agreement", "--config", yaml_path, "--journal", db, "-o", outdir,
           "--proposer", a.proposer, "--max-candidates", str(a.candidates), "--plateau", "0", "--no-canary",
           "--timing-rounds", str(a.timing_rounds), "--screen-seeds", str(a.screen_seeds), "--prepare-jobs", "0",
           "--progress", "always"] + (["--time-budget", str(a.time_budget)] if a.time_budget else []) + \
        shlex.split(a.extra_optimize_args) + ["--"] + shlex.split(a.compiler_args)
    code, wall = tp.run(cmd, os.path.join(top, ex, "optimize.log"))
    res = {"example": ex, "exit": code, "wall_s": wall, "rows": [], "steps": [],
           "shapes": {s: [] for s in search_shapes(open(yaml_path).read())}}
    if not os.path.exists(db):
        log("kloop optimize exited %d without a journal; see %s/%s/optimize.log" % (code, top, ex))
        return res
    for key, p in steps(db):
        rows = example_rows(key, p)
        res["rows"] += rows
        res["steps"].append({"candidate": key, "timing": p.get("timing"), "outcome": p.get("outcome"),
                             "rows": len(rows), "why_no_row": None if rows else why_no_row(key, p),
                             "workload_s": ((p.get("detail") or {}).get("agreement") or {}).get("workload_s")})
    log("kloop optimize: exit %d, %.0f s, %d search step(s), %d row(s)" % (code, wall, len(res["steps"]),
                                                                        len(res["rows"])))
    log("%-7s %-34s %9s %9s %10s %-20s %s" % ("cand", "kernel/shape", "replay", "workload", "difference", "interval",
                                              "verdict"))
    for r in res["rows"]:
        ci = r["interval_pct"]
        log("%-7s %-34s %8.4fx %8.4fx %+9.2f%% %-20s %s" % (
            r["candidate"], "%s/%s" % (tp.kernel_base(r["kernel"]), r["shape"]), r["replay"], r["workload"],
            r["difference_pct"], "[%+.2f%%, %+.2f%%]" % tuple(ci) if ci else "-", r["verdict"]))
    for s in res["steps"]:
        if s["why_no_row"]:
            log("%-7s no row: %s" % (s["candidate"], s["why_no_row"]))
    for shape in res["shapes"]:
        verdicts = [r["verdict"] for r in res["rows"] if r["shape"].split("#")[0] == shape]
        res["shapes"][shape] = verdicts
        if not verdicts:
            log("shape %s: no row" % shape)
    return res


def summarize(results):
    rows = [dict(r, example=x["example"]) for x in results for r in x["rows"]]
    counts = {v: sum(1 for r in rows if r["verdict"] == v) for v in ("within", "beyond", "undecided", "no interval")}
    worst = max(rows, key=lambda r: abs(r["difference_pct"]), default=None)
    uncovered = ["%s/%s" % (x["example"], s) for x in results for s, v in x["shapes"].items() if not v]
    shown = ["%s/%s" % (x["example"], s) for x in results for s, v in x["shapes"].items() if v and
             all(k == "within" for k in v)]
    log("agreement: %d row(s) over %d example(s); within 2%%: %d, beyond: %d, undecided: %d, no interval: %d" % (
        len(rows), len(results), counts["within"], counts["beyond"], counts["undecided"], counts["no interval"]))
    if worst:
        log("largest difference: %+.2f%% (%s %s %s/%s)" % (worst["difference_pct"], worst["example"],
                                                          worst["candidate"], tp.kernel_base(worst["kernel"]),
                                                          worst["shape"]))
    total = sum(len(x["shapes"]) for x in results)
    log("search shapes with every row within 2%%: %d of %d%s" % (len(shown), total,
                                                                "; with no row: " + ", ".join(uncovered)
                                                                if uncovered else ""))
    return {"rows": len(rows), "verdicts": counts, "largest_difference_pct": abs(worst["difference_pct"])
            if worst else None, "shapes_within": shown, "shapes_without_row": uncovered, "search_shapes": total}


def main(argv):
    a = parse_args(argv)
    os.makedirs(a.out)
    top = os.path.abspath(a.out)
    t0 = time.time()
    results = []
    for ex in a.examples:
        os.makedirs(os.path.join(top, ex))
        results.append(bench_example(a, ex, top))
    summary = {"schema": "kloop-agreement-bench/1", "wall_s": time.time() - t0, "examples": results,
               "summary": summarize(results),
               "settings": {k: getattr(a, k) for k in ("candidates", "timing_rounds", "screen_seeds", "time_budget",
                                                        "proposer", "examples")}}
    with open(os.path.join(top, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    log("total %.0f s; %s/summary.json" % (summary["wall_s"], a.out))
    failed = [x["example"] for x in results if x["exit"] != 0]
    if failed:
        log("kloop optimize failed on: %s (their optimize.log says why)" % ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
