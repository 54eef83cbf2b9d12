#!/usr/bin/env python3
"""Lists the places in lib/ that read the inventory's JSON by string key (issue 13, item 2).

    check-inventory-keys.py [--root DIR] [--allow PATH]... [FILE...]

The inventory (docs/inventory.md) has one typed form, kloop::inv::Inventory
(include/kloop/Inventory/Model.h), and one reader, lib/Inventory/Model.cpp. Every other
library reads its fields; this check finds code that reads the document's members by key
instead. Exit status 1 when it finds any outside the allowed files.

What counts, precisely:
  * The inventory's keys are the member names Model.cpp's reader reads (the string literal
    of every `O.read("k"`, `O.object("k"`, `O.objects("k"`, `O.has("k"`, `O.member("k"`),
    less GENERIC: names that other documents kloop reads (edits, the journal, profiles,
    ptxas reports, captures) use too, so that a read of them says nothing about which
    document is read. What is left names the inventory alone ("kernels", "editable",
    "hardware_fact", "qualified_name", ...).
  * A read is one of these, with the key as a string literal: `["k"]` not followed by an
    assignment or an append (`J["k"] = ...`, `J["k"].push_back(...)` write), `.value("k"`, `.contains("k"`, `.at("k"`,
    `.find("k"`, `.count("k"`.
  * Files: the C++ sources (.cpp, .h, .inc) under DIR/lib, or the FILEs given, less ALLOWED
    and the --allow paths (a path ending in / allows a directory). Comments are ignored.
Not seen: a key held in a variable (`for (const char *K : {"loops"}) E[K]`).
"""
import argparse
import os
import re
import sys

# Files that may read the inventory's JSON by key, and why.
ALLOWED = {
    # The one reader of the typed model, and the reader of its launch formulas' part.
    "lib/Inventory/Model.cpp",
    "lib/Inventory/LaunchFormula.cpp",
    # The extractor, which writes the document: per-translation-unit entities are JSON
    # objects (TUEntity::Data) that mergeInventory joins; typedInventory reads the result once.
    "lib/Inventory/Collector.cpp",
    "lib/Inventory/Inventory.cpp",
    "lib/Inventory/HardwareFacts.cpp",
    "lib/Inventory/ExtractCache.cpp",
    "lib/Inventory/SharedArrayUses.cpp",
    # The extractor's error attribution: a kernel's "calls" and "indirect_pointer" in the per-unit
    # entities, before mergeInventory (markBrokenCallees).
    "lib/Inventory/Errors.cpp",
    # The edit kinds read the entities of the translation unit they just parsed (TUEntity::Data,
    # the extractor's per-unit JSON beside each entity's AST node), not an inventory document.
    # Typing TUEntity is the step after this one.
    "lib/Edit/Kinds/AddConst.cpp",
    "lib/Edit/Kinds/AddKernelVariant.cpp",
    "lib/Edit/Kinds/AddRestrict.cpp",
    "lib/Edit/Kinds/SetConstant.cpp",
    "lib/Edit/Kinds/SetLaunchConfig.cpp",
    "lib/Edit/Kinds/SetUnroll.cpp",
    "lib/Edit/LaunchLimits.cpp",
    # The planner's key of another architecture's facts, a kernel's "mangled" in the parse (archFactKey).
    "lib/Edit/Plan.cpp",
    # The edited code's launch formulas, from the launch sites of the units apply re-parsed.
    "lib/Edit/Apply.cpp",
    # Temporarily: the structural rules still read the JSON; their own helper converts them
    # to inv::Inventory (issue 13, item 2). Remove this line then.
    "lib/Edit/Rules/",
}

# Member names of the inventory that other documents kloop reads use as well ("kernels": the
# measure, compare, ptxas and capture documents have one too).
GENERIC = {
    "kernels", "begin", "block", "bytes", "column", "constant", "context", "count", "default", "device",
    "end", "entry", "errors", "expr", "extern", "file", "function", "grid", "host", "id",
    "init", "kernel", "kind", "line", "max_threads", "min_blocks", "name", "owner", "reason",
    "root", "schema", "shared_memory", "state", "static", "status", "stream", "type", "value",
    "version", "index", "refusal", "text",
    # the edit language's replace_stmt has a "stmt" too (docs/edits.md)
    "stmt",
}

READER = re.compile(r'\bO\.(?:read|object|objects|has|member)\("([a-z_]+)"')
EXTENSIONS = (".cpp", ".h", ".inc")


def inventory_keys(root):
    with open(os.path.join(root, "lib/Inventory/Model.cpp"), encoding="utf-8") as f:
        return sorted(set(READER.findall(f.read())) - GENERIC)


def strip_comments(text):
    """text without // and /* */ comments (string literals kept; lines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def read_pattern(keys):
    k = "|".join(re.escape(x) for x in keys)
    return re.compile(r'\[\s*"(' + k + r')"\s*\](?!\s*=[^=]|\.(?:push|emplace)_back\()'
                      r'|\.(?:value|contains|at|find|count)\(\s*"(' + k + r')"')


def allowed(rel, extra):
    for a in list(ALLOWED) + extra:
        if rel == a or (a.endswith("/") and rel.startswith(a)):
            return True
    return False


def sources(root, files):
    if files:
        return files
    out = []
    for d, _, names in os.walk(os.path.join(root, "lib")):
        out += [os.path.join(d, n) for n in names if n.endswith(EXTENSIONS)]
    return sorted(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=".")
    ap.add_argument("--allow", action="append", default=[])
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    pattern = read_pattern(inventory_keys(a.root))
    found = checked = 0
    for path in sources(a.root, a.files):
        rel = os.path.relpath(path, a.root)
        if allowed(rel, a.allow):
            continue
        checked += 1
        with open(path, encoding="utf-8", errors="replace") as f:
            text = strip_comments(f.read())
        for no, line in enumerate(text.split("\n"), 1):
            for m in pattern.finditer(line):
                found += 1
                print(f"{rel}:{no}: reads the inventory's \"{m.group(1) or m.group(2)}\" by key: "
                      "read the typed kloop::inv::Inventory (kloop/Inventory/Model.h) instead")
    print(f"check-inventory-keys: {checked} files, {found} reads of inventory keys")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
