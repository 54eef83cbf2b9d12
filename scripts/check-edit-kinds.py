#!/usr/bin/env python3
"""Every edit kind has its file, its registration, its docs section and its tests.

    check-edit-kinds.py [--root DIR]

For each enumerator of `enum class EditKind` (include/kloop/Edit/Proposal.h), spelled in
snake case as in the JSON (SetLaunchBounds: set_launch_bounds), checks that
lib/Edit/Kinds/<Enumerator>.cpp exists, that lib/Edit/Kinds/Module.cpp calls
register<Enumerator>, that docs/edits.md has a section `### <kind>` naming that file, and that
test/Apply/Kinds/<kind>.test exists. Every test/Apply/Kinds/*.test path that a section names
must exist. Prints one line per problem and a summary; exit status 1 on any problem.
"""
import argparse
import os
import re
import sys


def snake(name):
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=".")
    root = ap.parse_args().root
    read = lambda rel: open(os.path.join(root, rel), encoding="utf-8").read()
    enum = re.search(r"enum class EditKind\s*\{(.*?)\};", read("include/kloop/Edit/Proposal.h"), re.S)
    kinds = re.findall(r"^\s*([A-Z]\w*)\s*,", re.sub(r"//[^\n]*", "", enum.group(1)), re.M) if enum else []
    module = read("lib/Edit/Kinds/Module.cpp")
    docs = read("docs/edits.md")
    sections = dict(re.findall(r"^### (\w+)\n(.*?)(?=^##)", docs, re.S | re.M))
    problems = []
    for k in kinds:
        name, source = snake(k), "lib/Edit/Kinds/%s.cpp" % k
        if not os.path.exists(os.path.join(root, source)):
            problems.append("%s: %s does not exist" % (name, source))
        if not re.search(r"\bregister%s\(R\)" % k, module):
            problems.append("%s: lib/Edit/Kinds/Module.cpp does not call register%s" % (name, k))
        text = sections.get(name)
        if text is None:
            problems.append("%s: docs/edits.md has no section '### %s'" % (name, name))
            continue
        if source not in text:
            problems.append("%s: its docs section does not name %s" % (name, source))
        test = "test/Apply/Kinds/%s.test" % name
        if not os.path.exists(os.path.join(root, test)):
            problems.append("%s: %s does not exist" % (name, test))
        for t in re.findall(r"test/Apply/Kinds/[\w.-]+\.test", text):
            if not os.path.exists(os.path.join(root, t)):
                problems.append("%s: its docs section names %s, which does not exist" % (name, t))
    for p in problems:
        print("check-edit-kinds: " + p)
    print("check-edit-kinds: %d kinds, %d problems" % (len(kinds), len(problems)))
    return 1 if problems or not kinds else 0


if __name__ == "__main__":
    sys.exit(main())
