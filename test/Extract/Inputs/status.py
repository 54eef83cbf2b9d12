#!/usr/bin/env python3
"""Prints the statuses of a `kloop extract` JSON document (stdin), one line each, for FileCheck:
translation units with their errors, then kernels, device functions and launch sites with
status, editability and the errors attributed to them, then regions that are not editable."""
import json
import sys

doc = json.load(sys.stdin)
for tu in doc["translation_units"]:
    sides = tu.get("sides")
    print("TU %s %s sides=%s" % (tu["file"], tu["status"],
                                 "-" if sides is None else "%s/%s" % (sides["device"], sides["host"])))
    for e in tu["errors"]:
        print("TUERR %s" % e)


def entity(tag, x, extra=""):
    print("%s %s %s editable=%d%s%s" % (tag, x["id"], x["status"], x["editable"], extra,
                                        "" if x["editable"] else " reason=" + x["not_editable_reason"]))
    for e in x["errors"]:
        print("%sERR %s %s" % (tag, x["id"], e))


for k in doc["kernels"]:
    entity("KERNEL", k)
    for kind in ("loops", "shared_arrays", "local_constants"):
        for r in k[kind]:
            if not r["editable"]:
                print("REGION %s editable=0 reason=%s" % (r["id"], r["not_editable_reason"]))
for f in doc["device_functions"]:
    entity("DEVFN", f)
for l in doc["launch_sites"]:
    entity("LAUNCH", l, " kernel=%s" % l["kernel"])
