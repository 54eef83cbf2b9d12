#!/usr/bin/env python3
"""Lists the function definitions in lib/ longer than a limit (issue 13, item 4).

    check-function-length.py [--root DIR] [--max 150] [--allowlist FILE] [FILE...]

Scans the C++ sources (.cpp, .h, .inc) under DIR/lib, or the FILEs given, and prints
every function definition whose body spans more than --max lines (from the line of its
opening brace to the line of its closing brace) as

    lib/Optimize/Optimize.cpp:120: runOptimize is 411 lines (limit 150)

A function named in the allowlist (lines `PATH:NAME`, `#` starts a comment; PATH relative to
DIR) is reported as allowed; any other is new and the exit status is 1. An allowlist entry
that no longer names a long function is reported as stale (a note, not a failure).

How functions are found: comments, string and character literals (raw strings included)
and preprocessor lines are blanked first, then braces are matched. A `{` at namespace or
class scope opens a function body when the declaration before it has a parameter list at
parenthesis depth 0, is not a class/struct/union/enum/namespace head and has no `=` at
depth 0 (a variable's initializer). Braces of a constructor's member initializers
(`: A{1}, B(2) {`) are skipped. Everything inside a body (lambdas, local classes) counts
toward that body. Lambdas at namespace scope (`auto f = [] {...};`) are not counted.
"""
import argparse
import os
import re
import sys

EXTENSIONS = (".cpp", ".h", ".inc", ".cc", ".hpp")
CLASS_HEAD = re.compile(r"^\s*(class|struct|union|enum|namespace)\b")
ACCESS = re.compile(r"\b(public|private|protected)\s*:(?!:)")
OPERATOR = re.compile(r"\boperator\s*(\(\)|\[\]|[^\s(]+)")
RAW_STRING = re.compile(r'(?:u8|u|U|L)?R"([^()\\\s]{0,16})\(')


def blank(text):
    """text with comments, literals and preprocessor lines replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            # A preprocessor line, with its backslash continuations.
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        if c == "\n":
            out.append(c)
            i += 1
            line_start = True
            continue
        if c in " \t\r\f\v":
            out.append(c)
            i += 1
            continue
        line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        m = RAW_STRING.match(text, i)
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            close = ")" + m.group(1) + '"'
            end = text.find(close, m.end())
            end = n if end < 0 else end + len(close)
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        if c == "'" and is_digit_separator(text, i):
            out.append(" ")
            i += 1
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            end = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:end - 1]) + c if end - i >= 2 else " ")
            i = end
            continue
        out.append(c)
        i += 1
    return "".join(out)


def is_digit_separator(text, i):
    """text[i] is the ' of a number such as 1'000 or 0xFF'FF (not a character literal)."""
    j = i
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "'."):
        j -= 1
    return j < i and text[j].isdigit() and i + 1 < len(text) and text[i + 1].isalnum()


def strip_macro_calls(head):
    """head without leading invocations of upper-case macros that end without a `;`
    (`LLVM_YAML_IS_SEQUENCE_VECTOR(T)` before a namespace)."""
    while True:
        m = re.match(r"\s*[A-Z][A-Z0-9_]*\s*\(", head)
        if not m:
            return head
        depth = 1
        for j in range(m.end(), len(head)):
            if head[j] == "(":
                depth += 1
            elif head[j] == ")":
                depth -= 1
                if depth == 0:
                    break
        rest = head[j + 1:]
        if depth or not re.match(r"\s*(\n|$)", rest) or "(" not in rest and not CLASS_HEAD.match(rest):
            return head
        head = rest


def strip_template(head):
    """head without a leading `template <...>` (nested angle brackets included)."""
    head = strip_macro_calls(head)
    m = re.match(r"\s*template\s*<", head)
    if not m:
        return head
    depth, parens = 1, 0
    for j in range(m.end(), len(head)):
        if head[j] in "([":
            parens += 1
        elif head[j] in ")]":
            parens -= 1
        elif parens == 0 and head[j] == "<":
            depth += 1
        elif parens == 0 and head[j] == ">":
            depth -= 1
            if depth == 0:
                return strip_template(head[j + 1:])
    return head


def depth0(head):
    """head with everything inside (), [] and <> of templates left out."""
    out, depth = [], 0
    for ch in head:
        if ch in "([":
            depth += 1
            continue
        if ch in ")]":
            depth -= 1
            continue
        if depth == 0:
            out.append(ch)
    return "".join(out)


def is_function_head(head):
    h = strip_template(ACCESS.sub(" ", head))
    if CLASS_HEAD.match(h) or not h.strip():
        return False
    h = OPERATOR.sub(" operatorX", h)
    if "(" not in h:
        return False
    top = depth0(h)
    if re.search(r"(?<![<>=!])=(?!=)", top):
        return False
    if re.match(r"\s*(extern|if|for|while|switch|catch|do|else|try|return)\b", h):
        return False
    return True


def in_member_initializers(head):
    """A `{` after this head opens a member initializer (`: A{1}`), not the body."""
    h = strip_template(ACCESS.sub(" ", head))
    top = depth0(h)
    colon = re.search(r"(?<!:):(?!:)", top)
    return colon is not None and re.search(r"[A-Za-z0-9_>]\s*$", h) is not None


def function_name(head):
    h = strip_template(ACCESS.sub(" ", head))
    m = re.search(r"(operator\s*(?:\(\)|\[\]|[^\s(]+)|~?[A-Za-z_][\w]*(?:\s*<[^()]*>)?(?:\s*::\s*~?[A-Za-z_]\w*)*)\s*\(", h)
    if not m:
        return "?"
    return re.sub(r"\s+", "", m.group(1))


def functions(text):
    """(name, first line of the body, body lines) of every function definition in text."""
    code = blank(text)
    found = []
    i, n = 0, len(code)
    head_start = 0
    scopes = []  # names of the classes we are in ("" for namespaces and other scopes)
    while i < n:
        c = code[i]
        if c == ";":
            head_start = i + 1
        elif c == "}":
            if scopes:
                scopes.pop()
            head_start = i + 1
        elif c == "{":
            head = code[head_start:i]
            if head.count("(") > head.count(")") or (is_function_head(head) and in_member_initializers(head)):
                # A braced initializer inside parentheses (`T V = T{}`) or of a member (`: A{1}`).
                i = match_brace(code, i) + 1
                continue
            if is_function_head(head):
                end = match_brace(code, i)
                first = code.count("\n", 0, i) + 1
                last = code.count("\n", 0, end) + 1
                name = function_name(head)
                owner = next((s for s in reversed(scopes) if s), "")
                if owner and "::" not in name:
                    name = owner + "::" + name
                found.append((name, first, last - first + 1))
                i = end + 1
                head_start = i
                continue
            m = re.match(r"\s*(?:class|struct|union)\s+(?:alignas\s*\([^)]*\)\s*)?(\w+)",
                         strip_template(ACCESS.sub(" ", head)))
            scopes.append(m.group(1) if m else "")
            head_start = i + 1
        i += 1
    return found


def match_brace(code, i):
    depth = 0
    for j in range(i, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(code) - 1


def read_allowlist(path):
    allowed = set()
    if not path:
        return allowed
    with open(path, encoding="utf-8") as f:
        for line in f:
            entry = line.split("#", 1)[0].strip()
            if entry:
                allowed.add(entry)
    return allowed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=".")
    ap.add_argument("--max", type=int, default=150)
    ap.add_argument("--allowlist")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    files = list(a.files)
    if not files:
        for d, _, names in os.walk(os.path.join(root, "lib")):
            files += [os.path.join(d, x) for x in names if x.endswith(EXTENSIONS)]
    allowed = read_allowlist(a.allowlist)
    seen_allowed = set()
    total = new = 0
    for path in sorted(files):
        rel = os.path.relpath(os.path.abspath(path), root)
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError as e:
            print("check-function-length: cannot read %s: %s" % (path, e.strerror), file=sys.stderr)
            return 2
        for name, line, length in functions(text):
            total += 1
            if length <= a.max:
                continue
            key = rel + ":" + name
            if key in allowed:
                seen_allowed.add(key)
                print("%s:%d: %s is %d lines (limit %d; allowed)" % (rel, line, name, length, a.max))
            else:
                new += 1
                print("%s:%d: %s is %d lines (limit %d)" % (rel, line, name, length, a.max))
    for key in sorted(allowed - seen_allowed):
        print("note: allowlist entry %s is not over %d lines (any more): remove it" % (key, a.max))
    print("check-function-length: %d functions in %d files, %d over %d lines not allowed" %
          (total, len(files), new, a.max))
    return 1 if new else 0


if __name__ == "__main__":
    sys.exit(main())
