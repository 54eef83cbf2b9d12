#!/usr/bin/env python3
# kloop optimize's --apply-command in test/Report/html.test: refuses macro:HOSTILE with a reason that
# would run script and load an image if the HTML report did not escape it; applies anything else as
# test/Optimize/Inputs/timing-first/variant_apply.py does.
import json, os, sys
HOSTILE = "</script><img src=x onerror=\"document.title='pwned'\"><b>bold</b> & more"
proposal = json.load(open(sys.argv[1]))
if any(e["id"] == "macro:HOSTILE" for e in proposal["edits"]):
    print(json.dumps({"applied": False, "refusals": [{"edit_index": 0, "edit": "set_constant macro:HOSTILE",
                                                      "reason": HOSTILE}]}))
    sys.exit(0)
here = os.path.dirname(os.path.abspath(__file__))
os.execv(sys.executable, [sys.executable, os.path.join(here, "..", "..", "Optimize", "Inputs", "timing-first",
                                                       "variant_apply.py")] + sys.argv[1:])
