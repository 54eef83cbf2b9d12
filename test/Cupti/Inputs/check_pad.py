#!/usr/bin/env python3
"""check_pad.py PLAIN.json PADDED.json PAD_BYTES: the padded run reports its pad, its captures hold the
same bytes at other addresses, and the pad is not counted as the program's memory (the leak check)."""
import json, sys

plain, padded = (json.load(open(p)) for p in sys.argv[1:3])
pad = int(sys.argv[3])
print("pad bytes", plain["placement_pad_bytes"], padded["placement_pad_bytes"], "asked", pad)
print("errors", len(plain["errors"]), len(padded["errors"]))
caps = list(zip(plain["captures"], padded["captures"]))
print("captures", len(caps), "same hashes", all(a["hash"] == b["hash"] for a, b in caps),
      "moved", sum(a["ptr"] != b["ptr"] for a, b in caps))
print("live bytes equal", plain["memory"]["live_bytes"] == padded["memory"]["live_bytes"])
