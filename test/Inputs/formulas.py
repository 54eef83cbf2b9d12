#!/usr/bin/env python3
# Prints each launch site's config_formula (docs/inventory.md, "Launch formulas") of a kloop extract
# document on stdin, one line per site, in infix: "FORMULA <id> callee=<c> grid=x,y,z block=x,y,z smem=s
# args=a;b" or "UNKNOWN <id> <reason>" or "NONE <id>" (no formula: a launch API other than <<<>>>).
import json, sys

def infix(f):
    if f is None:
        return "-"
    if "const" in f:
        return str(f["const"])
    if "var" in f:
        return f["var"]
    a = [infix(x) for x in f["args"]]
    op = f["op"]
    if op == "cast":
        return "(%s)%s" % (f["type"], a[0])
    if op in ("neg", "~", "!"):
        return {"neg": "-"}.get(op, op) + a[0]
    if op == "?:":
        return "(%s ? %s : %s)" % tuple(a)
    if op in ("min", "max"):
        return "%s(%s, %s)" % (op, a[0], a[1])
    return "(%s %s %s)" % (a[0], op, a[1])

for site in json.load(sys.stdin)["launch_sites"]:
    f = site.get("config_formula")
    if f is None:
        print("NONE", site["id"])
    elif "unknown" in f:
        print("UNKNOWN", site["id"], f["unknown"])
    else:
        dims = lambda d: ",".join(infix(x) for x in f[d])
        print("FORMULA %s callee=%s grid=%s block=%s smem=%s args=%s" % (
            site["id"], f["callee"], dims("grid"), dims("block"), infix(f["shared_memory"]),
            ";".join(infix(a["formula"]) for a in f["args"])))
