#!/usr/bin/env python3
# A stand-in for kloop's in-process apply in optimize tests (`kloop optimize --apply-command`, a test
# seam; docs/optimize.md): called as `PROPOSAL FILE... --in-place --root DIR -- ARGS`, it applies
# set_constant edits of macros by rewriting `#define NAME VALUE` and refuses every other kind. It
# prints the outcome on stdout as kloop's apply-outcome JSON ({"applied", "refusals": [{"edit_index",
# "edit", "reason"}]}) and exits 0; kloop reads nothing from its stderr.
import json, re, sys
args = sys.argv[1:]
if "--" in args:
    args = args[:args.index("--")]
proposal = json.load(open(args[0]))
files = [a for a in args[1:] if not a.startswith("--") and a.endswith(".cu")]
texts = {f: open(f).read() for f in files}
for i, e in enumerate(proposal["edits"]):
    if e["kind"] != "set_constant" or not e["id"].startswith("macro:"):
        print(json.dumps({"applied": False, "refusals": [
            {"edit_index": i, "edit": "%s %s" % (e["kind"], e["id"]), "reason": "not supported by the fake"}]}))
        sys.exit(0)
    name = e["id"][len("macro:"):]
    for f in files:
        texts[f] = re.sub(r"#define %s \d+" % name, "#define %s %d" % (name, e["value"]), texts[f])
for f, t in texts.items():
    open(f, "w").write(t)
print(json.dumps({"applied": True, "refusals": []}))
