#!/usr/bin/env python3
"""Per-example results table of `kloop optimize` runs, read from their journals.

usage: bench/gpu/results.py OUT_DIR EXAMPLE...

OUT_DIR is what bench/gpu/optimize.sh wrote: OUT_DIR/<example>.db (the journal), OUT_DIR/cmd-<example>.txt
(the exact command) and OUT_DIR/cache/ceilings.json (the ceilings `kloop optimize` measured on that GPU in
that run). Prints, in Markdown, per example and shape: the baseline median and the final median (ns), the
speed-up of the accepted change with its bootstrap 95% CI, % of roofline of baseline and final (the larger
of bytes / copy bandwidth and flops / FMA peak, over the median), then candidates tried / accepted /
rejected by the decision rule / refused, the evaluation time and the stop reason. Every number is read from
the journal: nothing is computed here but ratios of journaled values.

The baseline median of a shape is from the final check when a change was accepted (the change measured
against the original baseline, held-out shapes and seeds included), else from the first candidate's
compare against the baseline (search shapes only). Exit 1 when a journal is missing or unreadable.
"""
import json
import os
import sqlite3
import sys


def fmt_ns(v):
    if v is None:
        return "n/a"
    if v >= 1e6:
        return "%.3f ms" % (v / 1e6)
    if v >= 1e3:
        return "%.2f µs" % (v / 1e3)
    return "%.0f ns" % v


def pct(v):
    return "n/a" if v is None else "%.1f%%" % v


def one(db_path):
    if not os.path.isfile(db_path):
        raise ValueError("%s: %s" % (db_path, "no such file" if not os.path.exists(db_path) else "not a file"))
    con = sqlite3.connect("file:%s?mode=ro" % db_path, uri=True)
    run = con.execute("select id, stop_reason from runs order by id desc limit 1").fetchone()
    if run is None:
        raise ValueError("%s: no run in the journal" % db_path)
    run_id, stop = run
    steps = con.execute(
        "select state, round, step_key, payload, started_ns, finished_ns from steps "
        "where run = ? and status = 'finished' order by id", (run_id,)).fetchall()
    final = None
    first_measure = None
    t_eval = 0.0
    for state, rnd, key, payload, s, f in steps:
        p = json.loads(payload) if payload else None
        if state == "done" and key == "final":
            final = p
        if state == "measure" and rnd >= 1 and first_measure is None and p and p.get("evidence"):
            first_measure = p
        if rnd >= 1 and state in ("propose", "apply", "build", "verify") and f:
            t_eval += (f - s) / 1e9
    return con, run_id, stop, final, first_measure, t_eval


def counts(con, run_id):
    # Outcomes per proposal of this run: a refusal (kloop apply, or a refused compare), else its verdict.
    props = [r[0] for r in con.execute("select id from proposals where run = ?", (run_id,))]
    tried = len(props)
    accepted = rejected = refused = 0
    for pid in props:
        if con.execute("select 1 from refusals where proposal = ? limit 1", (pid,)).fetchone():
            refused += 1
            continue
        v = con.execute("select outcome from verdicts where proposal = ? order by id desc limit 1", (pid,)).fetchone()
        if v is None:
            continue
        if v[0] == "accepted":
            accepted += 1
        elif v[0] in ("build_failed", "failed_verification"):
            refused += 1
        else:
            rejected += 1
    return tried, accepted, rejected, refused


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    out, examples = argv[1], argv[2:]
    if not os.path.isdir(out):
        sys.stderr.write("results.py: %s: no such directory (the OUT_DIR of bench/gpu/optimize.sh)\n" % out)
        return 1
    ceil_path = os.path.join(out, "cache", "ceilings.json")
    if os.path.exists(ceil_path):
        for dev, c in json.load(open(ceil_path)).items():
            print("Ceilings measured by `kloop optimize` in this run on %s: copy %.1f GB/s, f32 FMA %.1f GFLOP/s." % (
                dev, c.get("copy_gbps", 0), c.get("fma_gflops_f32", 0)))
        print()
    print("| example | shape | baseline median | final median | speed-up [95% CI] | % roofline baseline → final "
          "| tried / accepted / rejected / refused | evaluation s | stop reason |")
    print("| --- | --- | ---: | ---: | --- | --- | --- | ---: | --- |")
    status = 0
    for ex in examples:
        db = os.path.join(out, ex + ".db")
        try:
            con, run_id, stop, final, first, t_eval = one(db)
            tried, acc, rej, ref = counts(con, run_id)
        except Exception as e:  # a missing or unreadable journal is reported, the others still printed
            print("| %s | journal unreadable: %s | | | | | | | |" % (ex, str(e).replace("|", "/")))
            status = 1
            continue
        accepted = bool(final and final.get("best") and final.get("evidence"))
        ev = final["evidence"] if accepted else (first or {}).get("evidence", [])
        tally = "%d / %d / %d / %d" % (tried, acc, rej, ref)
        stop = (final or {}).get("stop_reason", stop or "unfinished")
        if not ev:
            print("| %s | (no measurement) | | | | | %s | %.0f | %s |" % (ex, tally, t_eval, stop))
            continue
        for i, e in enumerate(ev):
            b, c = e.get("base_median_ns"), e.get("cand_median_ns")
            pr = e.get("pct_roofline")
            base_pct = pr * c / b if (pr is not None and b and c) else None
            if accepted:
                final_med, sp = c, "%.3fx [%.3f, %.3f]" % (b / c, e["ci_low"], e["ci_high"])
                roof = "%s → %s" % (pct(base_pct), pct(pr))
            else:
                final_med, sp = b, "none accepted"
                roof = "%s → (unchanged)" % pct(base_pct)
            print("| %s | %s%s | %s | %s | %s | %s | %s | %s | %s |" % (
                ex if i == 0 else "", e.get("shape"), "" if len(set(x.get("kernel") for x in ev)) == 1 else
                " (" + e.get("kernel", "?") + ")", fmt_ns(b), fmt_ns(final_med), sp, roof,
                tally if i == 0 else "", "%.0f" % t_eval if i == 0 else "", stop if i == 0 else ""))
    print()
    print("Commands (run from the repository root on the GPU machine):")
    print()
    for ex in examples:
        p = os.path.join(out, "cmd-%s.txt" % ex)
        if os.path.exists(p):
            print("- %s: `%s`" % (ex, open(p).read().strip()))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
