"""Plants the state a SIGKILL leaves in the middle of `kloop apply --in-place` (an intent
manifest, fsynced temporaries and backups of a process that no longer exists), so that a lit test
can check what the next kloop command does with it.

plant-intent.py DIR --renamed FILE... --pending FILE... [--missing-temp FILE]
  every FILE's new contents are its old contents with "// new" appended; --renamed files already
  have them (their temporary is gone), --pending files do not (their temporary is there), and
  --missing-temp removes one pending file's temporary (so the write cannot be finished).
"""
import argparse
import hashlib
import json
import os

DEAD_PID = 99999999  # above Linux's pid_max: no such process


def sha(data):
    return hashlib.sha256(data).hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--renamed", nargs="*", default=[])
    ap.add_argument("--pending", nargs="*", default=[])
    ap.add_argument("--missing-temp")
    a = ap.parse_args()
    files = []
    for i, name in enumerate(a.renamed + a.pending):
        path = os.path.join(a.dir, name)
        with open(path, "rb") as f:
            old = f.read()
        new = old + b"// new\n"
        tag = "%08d" % i
        temp, backup = "%s.kloop-tmp.%d.%s" % (name, DEAD_PID, tag), "%s.kloop-bak.%d.%s" % (name, DEAD_PID, tag)
        with open(os.path.join(a.dir, backup), "wb") as f:
            f.write(old)
        with open(os.path.join(a.dir, temp if name in a.pending else name), "wb") as f:
            f.write(new)
        if name == a.missing_temp:
            os.remove(os.path.join(a.dir, temp))
        files.append({"path": name, "temp": temp, "backup": backup, "old_sha256": sha(old), "new_sha256": sha(new)})
    with open(os.path.join(a.dir, ".kloop-apply-intent.json"), "w") as f:
        json.dump({"kloop_intent": 1, "pid": DEAD_PID, "files": files}, f)


main()
