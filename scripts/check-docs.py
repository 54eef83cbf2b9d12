#!/usr/bin/env python3
"""Checks that what docs/ and README.md quote still exists (issue 13, item 6).

Mechanically checkable claims, each quoted in backticks or in a fenced code block:
  paths       a path under one of the repository's top-level source folders (lib/, include/, ...)
              names a file or folder of the checkout;
  commands    `kloop SUB` names a subcommand that `kloop --help` lists;
  options     `kloop SUB ... --opt` names an option that `kloop SUB --help-hidden` lists
              (options after a bare `--` belong to the compiler and are not checked);
  variables   KLOOP_* environment variables appear in the sources (lib/, include/, tools/, scripts/,
              bench/, test/);
  schemas     "kloop-NAME/N" JSON schema names appear in the sources;
  yaml keys   the first column of docs/kloop-yaml.md's field table names keys that
              lib/Measure/Config.cpp reads (each dotted component appears there as a string literal).

Usage: check-docs.py --kloop PATH/TO/kloop [--root REPO]
Prints one line per stale claim, "FILE:LINE: KIND 'CLAIM' ...", and exits 1 when there is any; 0 and a
summary line otherwise. Placeholders (<Kind>, {build_dir}, *, ...) are skipped, not guessed.
"""
import argparse
import pathlib
import re
import subprocess
import sys

TOP_DIRS = ("lib", "include", "tools", "test", "unittests", "bench", "scripts", "examples", "docs", "prompts", ".ci")
SOURCE_DIRS = ("lib", "include", "tools", "scripts", "bench", "test", "unittests", "examples", "prompts", ".ci")
# Not after "=": an option's value there may be relative to another tool (gcc -print-file-name=include/omp.h).
PATH_RE = re.compile(r"(?<![\w./=-])((?:%s)/[\w.+/-]*[\w/])" % "|".join(re.escape(d) for d in TOP_DIRS))
PLACEHOLDER = re.compile(r"[<>{}*]|\.\.\.|\bN\b|\bNAME\b|\bKind\b")
# `kloop SUB` (or `path/to/kloop SUB`) as a command: at the start of a line or span, or after && || or |;
# not `kloop SUB:` (a header kloop prints).
CMD_RE = re.compile(r"(?:^\s*(?:\$\s+)?|(?:&&|\|\||\|)\s*)(?:[\w.~/-]*/)?kloop\s+([a-z][a-z-]*)\b(?!:)(.*)")
OPT_RE = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
VAR_RE = re.compile(r"\bKLOOP_[A-Z0-9_]*[A-Z0-9]\b")
SCHEMA_RE = re.compile(r"\bkloop-[a-z][a-z-]*/\d+\b")


def quoted_spans(text):
    """Yields (line number, text) of every inline code span and every fenced code line."""
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            yield n, line
            continue
        for m in re.finditer(r"`([^`]+)`", line):
            yield n, m.group(1)


def kloop_help(kloop, sub=None):
    args = [kloop] + ([sub, "--help-hidden"] if sub else ["--help"])
    out = subprocess.run(args, capture_output=True, text=True, timeout=60)
    return out.stdout + out.stderr


def subcommands(kloop):
    text = kloop_help(kloop)
    block = text.split("SUBCOMMANDS:", 1)[-1].split("OPTIONS:", 1)[0]
    return {m.group(1) for m in re.finditer(r"^\s+([a-z][a-z-]*)\s+-", block, re.M)}


class Checker:
    def __init__(self, root, kloop):
        self.root = root
        self.kloop = kloop
        self.subs = subcommands(kloop)
        self.options = {}
        self.sources = self._read_sources()
        self.problems = []
        self.checked = 0

    def _read_sources(self):
        chunks = []
        for d in SOURCE_DIRS:
            for p in (self.root / d).rglob("*"):
                if p.is_file() and p.suffix in (".cpp", ".h", ".c", ".py", ".sh", ".cu", ".cuh", ".in", ".txt",
                                                ".test", ".yaml", ".json", ".map", ".md", ""):
                    try:
                        chunks.append(p.read_text(errors="replace"))
                    except OSError:
                        pass
        return "\n".join(chunks)

    def report(self, where, kind, claim, why):
        self.problems.append(f"{where}: {kind} '{claim}' {why}")

    def options_of(self, sub):
        if sub not in self.options:
            self.options[sub] = set(OPT_RE.findall(kloop_help(self.kloop, sub)))
        return self.options[sub]

    def check_path(self, where, path):
        # Placeholders are not guessed; shared libraries named under lib/ are build outputs.
        if PLACEHOLDER.search(path) or path.endswith(".so"):
            return
        self.checked += 1
        if not (self.root / path.rstrip("/")).exists():
            self.report(where, "path", path, "does not exist")

    def check_command(self, where, sub, rest):
        if sub not in self.subs:
            self.checked += 1
            self.report(where, "command", "kloop " + sub, "is not a subcommand (kloop --help)")
            return
        self.checked += 1
        rest = rest.split(" -- ", 1)[0]
        rest = re.split(r"[|;&]|\bkloop\b", rest, 1)[0]
        for opt in OPT_RE.findall(rest):
            self.checked += 1
            if opt not in self.options_of(sub):
                self.report(where, "option", f"kloop {sub} {opt}", f"is not an option of kloop {sub}")

    def check_text(self, rel, text):
        for n, span in quoted_spans(text):
            where = f"{rel}:{n}"
            for m in PATH_RE.finditer(span):
                # The whole token, so that `gpu-*.test` is seen as a placeholder, not as `gpu`.
                end = re.match(r"[^\s`'\"),;:]*", span[m.end():]).group(0)
                self.check_path(where, m.group(1) + end)
            for m in CMD_RE.finditer(span):
                self.check_command(where, m.group(1), m.group(2))
            for var in VAR_RE.findall(span):
                self.checked += 1
                if var not in self.sources:
                    self.report(where, "variable", var, "appears nowhere in the sources")
            for schema in SCHEMA_RE.findall(span):
                self.checked += 1
                if schema not in self.sources:
                    self.report(where, "schema", schema, "appears nowhere in the sources")

    def check_yaml_keys(self):
        doc = self.root / "docs" / "kloop-yaml.md"
        config = (self.root / "lib" / "Measure" / "Config.cpp").read_text()
        for n, line in enumerate(doc.read_text().splitlines(), 1):
            if not line.startswith("| `"):
                continue
            for key in re.findall(r"`([^`]+)`", line.split("|")[1]):
                for part in re.split(r"\.|\[\]", key):
                    if not part or PLACEHOLDER.search(part):
                        continue
                    self.checked += 1
                    if f'"{part}"' not in config:
                        self.report(f"docs/kloop-yaml.md:{n}", "yaml key", key,
                                    f"is not read by lib/Measure/Config.cpp (no \"{part}\")")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kloop", required=True, help="the kloop executable whose --help is the truth")
    ap.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parent.parent))
    a = ap.parse_args()
    root = pathlib.Path(a.root)
    c = Checker(root, a.kloop)
    files = sorted((root / "docs").rglob("*.md")) + [root / "README.md"]
    for f in files:
        c.check_text(f.relative_to(root), f.read_text())
    c.check_yaml_keys()
    for p in c.problems:
        print(p)
    print(f"check-docs: {c.checked} claims in {len(files)} files, {len(c.problems)} stale")
    return 1 if c.problems else 0


if __name__ == "__main__":
    sys.exit(main())
