#!/usr/bin/env python3
# Prints what test/Optimize/replay-timing.test checks in a journal (steps.py JOURNAL): the replay capture
# step, each search step's timing, and the final step's two figures, one line each. With --builds
# (steps.py JOURNAL --builds, test/Optimize/replay-build.test), also each candidate's build step and the
# journal's build records of its round. With --proposals (test/Optimize/batch.test), also each
# candidate's propose step (its batch and the SCALE it sets), whether its apply took a candidate prepared
# ahead, and the proposals table's model and tokens. With --agreement (test/Optimize/replay-agreement.test),
# also each verify step's agreement rows (kloop optimize --agreement) and the workload's verdict.
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
builds = "--builds" in sys.argv[2:]
proposals = "--proposals" in sys.argv[2:]
agreement = "--agreement" in sys.argv[2:]
rows = db.execute("select round, state, step_key, payload from steps where status = 'finished' order by id")
for rnd, state, key, payload in rows:
    p = json.loads(payload) if payload else {}
    if state == "measure" and (key == "capture" or key.startswith("capture:")):
        if p["replay"]:
            print("%s: replay reused=%s stale=%s launches=%d kernels=%s" %
                  (key, p["reused"], p["stale"], p["launches"], ",".join(p["kernels"])))
        else:
            print("%s: workload reason=%s" % (key, p["reason"]))
    elif state == "propose" and proposals:
        row = db.execute("select model, tokens_in, tokens_out, parse_error from proposals where id = ?",
                         (p.get("proposal_id"),)).fetchone()
        b = p.get("batch")
        value = (p.get("proposal") or {}).get("edits", [{}])[0].get("value")
        print("propose %s: batch=%s value=%s model=%s tokens=%s/%s refusal=%s" % (
            key, "%d/%d/%d asked=%d" % (b["round"], b["index"], b["size"], b["asked"]) if b else None, value,
            row[0] if row else None, row[1] if row else None, row[2] if row else None, row[3] if row else None))
    elif state == "apply" and proposals:
        print("apply %s: prepared=%s" % (key, "prepared_ahead_s" in p))
    elif state == "build" and builds and key != "baseline":
        records = db.execute("select succeeded from builds where round = ? order by id", (rnd,)).fetchall()
        print("build %s: succeeded=%s cubin=%s records=%s" % (key, p["succeeded"], p.get("cubin"),
                                                             ",".join(str(bool(r[0])) for r in records)))
    elif state == "verify":
        t = (p.get("detail") or {}).get("replay_time")
        split = "" if t is None else " worker_starts=%d gated=%s timer=%s split=%s l2=%s l2_note=%s placements=%s placement_note=%s" % (
            t["worker_starts"], t["gated"], t.get("timer"), ",".join(k for k in sorted(t) if k.endswith("_s")),
            t.get("l2"), t.get("l2_note"), t.get("placements"), t.get("placement_note"))
        shapes = ",".join(e["shape"] for e in p.get("evidence") or [])
        groups = ",".join(str(e.get("groups")) for e in p.get("evidence") or [])
        print("verify %s: timing=%s outcome=%s fallback=%s%s groups=%s shapes=%s" %
              (key, p.get("timing"), p.get("outcome"), p.get("replay_fallback"), split, groups, shapes))
        a = (p.get("detail") or {}).get("agreement")
        if agreement and a and "error" in a:
            print("agreement %s: error=%s" % (key, a["error"].replace("\n", " ")))
        elif agreement and a:
            for r in a["rows"]:
                print("agreement %s: %s/%s (%s) replay=%.4f workload=%.4f difference=%+.2f%% interval=%s verdict=%s" % (
                    key, r["kernel"], r["shape"], r["workload_kernel"], r["replay"], r["workload"],
                    r["difference_pct"], "[%+.2f%%, %+.2f%%]" % tuple(r["interval_pct"]) if r["interval_pct"] else None,
                    r["verdict"]))
            print("agreement %s: largest=%s verdicts=%s workload_outcome=%s workload_shapes=%s" % (
                key, "%.2f%%" % a["largest_difference_pct"] if a["largest_difference_pct"] is not None else None,
                ",".join("%s:%d" % kv for kv in sorted(a["verdicts"].items())), a["workload"]["outcome"],
                ",".join(e["shape"] for e in a["workload"]["evidence"])))
        elif agreement:
            print("agreement %s: none" % key)
    elif state == "decide":
        print("decide %s: timing=%s outcome=%s explanation=%s" %
              (key, p.get("timing"), p.get("outcome"), p.get("explanation")))
    elif state == "done":
        s = p.get("search") or {}
        ev = lambda rows: ",".join("%s/%s" % (e["kernel"], e["shape"]) for e in rows or [])
        print("final: best=%s search_timing=%s search_evidence=%s final_timing=%s final_outcome=%s final_evidence=%s" %
              (p.get("best"), s.get("timing"), ev(s.get("evidence")), p.get("final_timing"),
               p.get("final_outcome"), ev(p.get("evidence"))))
