#!/usr/bin/env python3
"""Prints a `kloop extract` JSON document (stdin) as one line per entity, for FileCheck."""
import json
import sys


def v(x):
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "1" if x else "0"
    if isinstance(x, list):
        return "x".join(v(i) for i in x)
    return str(x)


def dim(d):
    return "-" if d is None else "%s=%s" % (d["expr"], v(d.get("value")))


doc = json.load(sys.stdin)
print("SCHEMA %s v%s" % (doc["schema"], doc["version"]))
for tu in doc["translation_units"]:
    print("TU %s %s %s" % (tu["file"], tu["status"], " | ".join(tu["errors"])))
for k in doc["kernels"]:
    lb = k["launch_bounds"]
    print("KERNEL %s editable=%s static=%s file=%s:%d lb=%s/%s mangled=%s%s" % (
        k["id"], v(k["editable"]), v(k["static"]), k["location"]["file"], k["location"]["begin"]["line"],
        dim(lb["max_threads"]) if lb else "-", dim(lb["min_blocks"]) if lb else "-", ",".join(k["mangled"]),
        "" if k["editable"] else " reason=" + k["not_editable_reason"]))
    for tp in k["template_params"]:
        print("TPARAM %s kind=%s" % (tp.get("id", k["id"] + "/tparam:" + tp["name"]), tp["kind"]))
    for i in k["instantiations"]:
        print("INST %s %s" % (i["id"], i["mangled"]))
    for p in k["params"]:
        print("PARAM %s type=%s ptr=%s const=%s restrict=%s written=%s" % (
            p["id"], p["type"], v(p["pointer"]), v(p["const_pointee"]), v(p["restrict"]), v(p["written"])))
    for l in k["loops"]:
        u = l["unroll"]
        print("LOOP %s kind=%s depth=%d parent=%s unroll=%s trip=%s editable=%s" % (
            l["id"], l["loop_kind"], l["depth"], v(l["parent"]),
            "-" if u is None else (v(u.get("count")) if u.get("count") is not None else u.get("state", "?")),
            v(l["trip_count"]), v(l["editable"])))
    for s in k["shared_arrays"]:
        print("SHARED %s dims=%s bytes=%s dynamic=%s extern=%s editable=%s" % (
            s["id"], ",".join(dim(d) for d in s["dims"]) or "-", v(s["bytes"]), v(s["dynamic"]), v(s["extern"]),
            v(s["editable"])))
    for c in k["local_constants"]:
        print("LOCALCONST %s value=%s" % (c["id"], v(c["value"])))
    print("CALLS %s %s" % (k["id"], ",".join(k["calls"]) or "-"))
    print("SITES %s %s" % (k["id"], ",".join(k["launch_sites"]) or "-"))
for f in doc["device_functions"]:
    print("DEVFN %s calls=%s" % (f["id"], ",".join(f["calls"]) or "-"))
for l in doc["launch_sites"]:
    print("LAUNCH %s kernel=%s via=%s grid=%s block=%s smem=%s stream=%s targs=%s" % (
        l["id"], v(l["kernel"]), l["via"], dim(l["grid"]), dim(l["block"]), dim(l["shared_memory"]),
        "-" if l["stream"] is None else l["stream"]["expr"],
        ",".join(dim(a) for a in l["template_args"]) or "-"))
for c in doc["constants"]:
    print("CONST %s kind=%s value=%s editable=%s" % (c["id"], c["constant_kind"], v(c.get("value")), v(c.get("editable", True))))
    for u in c["uses"]:
        print("USE %s %s %s line=%s" % (c["id"], u["context"], u["owner"], u.get("line")))
