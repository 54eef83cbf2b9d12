#!/usr/bin/env python3
# A stand-in for `kloop apply PROPOSAL FILE... --in-place --root DIR -- ARGS` in optimize tests:
# applies set_constant edits of macros by rewriting `#define NAME VALUE`, refuses every other kind
# the way kloop apply does (stderr `kloop apply: refused: ...`, exit 1).
import json, re, sys
args = sys.argv[1:]
if "--" in args:
    args = args[:args.index("--")]
proposal = json.load(open(args[0]))
files = [a for a in args[1:] if not a.startswith("--") and a.endswith(".cu")]
texts = {f: open(f).read() for f in files}
for e in proposal["edits"]:
    if e["kind"] != "set_constant" or not e["id"].startswith("macro:"):
        print("kloop apply: refused: %s %s: not supported by the fake" % (e["kind"], e["id"]), file=sys.stderr)
        sys.exit(1)
    name = e["id"][len("macro:"):]
    for f in files:
        texts[f] = re.sub(r"#define %s \d+" % name, "#define %s %d" % (name, e["value"]), texts[f])
for f, t in texts.items():
    open(f, "w").write(t)
