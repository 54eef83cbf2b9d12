#!/usr/bin/env python3
"""The corpus benchmark's engine (bench/corpus/run.sh is its command line; see README.md there).

For every project of the manifest it measures, in one run: kloop extract's translation-unit
statuses, kernels, launch sites, time and peak RSS (first and second run); nvcc's kernel symbols
(`nvcc -cubin` for one architecture with each TU's own flags, `readelf -sW`, demangled); how many
of them kloop names exactly; and clang++ -fsyntax-only of both sides with kloop's flags. It prints
Markdown tables and writes one JSON document. It fetches and builds nothing but the cubins.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import shutil
import shlex
import subprocess
import sys
import time

CUDA_SUFFIXES = (".cu",)
# nvcc flags dropped from a TU's command for the cubin: outputs, phases, dependency files and
# architectures (replaced by -arch=ARCH). Value-taking ones consume the next argument when not joined.
NVCC_DROP_WITH_VALUE = {"-o", "--output-file", "-MF", "-MT", "-MQ", "--dependency-output",
                        "-arch", "--gpu-architecture", "-gencode", "--generate-code", "-code",
                        "--gpu-code", "-odir", "--output-directory", "-ccbin", "--compiler-bindir"}
NVCC_DROP_ALONE = {"-c", "--compile", "-M", "-MM", "-MD", "-MMD", "-E", "-dw", "--device-w",
                   "-dlink", "--device-link", "-link", "-lib", "-ptx", "-fatbin", "-cubin", "-G",
                   "--device-debug"}
# The clang floor keeps what decides the cost of a parse: macros, include paths, forced includes,
# the language standard and input language, and host-compiler flags passed through -Xcompiler.
CLANG_KEEP_WITH_VALUE = {"-I", "-isystem", "-include", "-D", "-U", "-iquote", "-idirafter"}


def parse_args(argv):
    p = argparse.ArgumentParser(description="kloop corpus benchmark")
    p.add_argument("manifest")
    p.add_argument("--kloop", required=True)
    p.add_argument("--nvcc", required=True)
    p.add_argument("--clang", required=True)
    p.add_argument("--cuda-path", required=True)
    p.add_argument("--readelf", default="readelf")
    p.add_argument("--demangler", default="c++filt")
    p.add_argument("--arch", default="sm_90")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--nvcc-timeout", type=float, default=600.0)
    p.add_argument("--work", required=True)
    p.add_argument("--json", required=True)
    p.add_argument("--md", default="")
    p.add_argument("--projects", default="", help="comma list: only these manifest names")
    p.add_argument("--reuse-nvcc", action="store_true", help="reuse the nvcc results kept in --work")
    p.add_argument("--recount", action="store_true", help="recount the nvcc side of the run in --work/--json")
    return p.parse_args(argv)


class BadInput(Exception):
    pass


# ---------------------------------------------------------------- manifest and databases

def read_manifest(path):
    """Lines `NAME SOURCE_DIR COMPILE_COMMANDS_JSON [sample=N]`; '#' starts a comment."""
    projects = []
    base = os.path.dirname(os.path.abspath(path))
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        raise BadInput(f"{path}: cannot read the manifest: {e.strerror}")
    for n, line in enumerate(lines, 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) not in (3, 4) or (len(fields) == 4 and not re.fullmatch(r"sample=[1-9][0-9]*", fields[3])):
            raise BadInput(f"{path}:{n}: expected 'NAME SOURCE_DIR COMPILE_COMMANDS_JSON [sample=N]', got '{line.strip()}'")
        src, db = (os.path.join(base, f) for f in fields[1:3])
        if not os.path.isdir(src):
            raise BadInput(f"{path}:{n}: source directory '{src}' does not exist")
        if not os.path.isfile(db):
            raise BadInput(f"{path}:{n}: compile database '{db}' does not exist")
        sample = int(fields[3].split("=")[1]) if len(fields) == 4 else 0
        projects.append({"name": fields[0], "src": os.path.abspath(src), "db": os.path.abspath(db), "sample": sample})
    if not projects:
        raise BadInput(f"{path}: the manifest names no project")
    return projects


def entry_args(e):
    return list(e["arguments"]) if "arguments" in e else shlex.split(e["command"])


def entry_file(e):
    return os.path.normpath(os.path.join(e["directory"], e["file"]))


def is_cuda_entry(e):
    args = entry_args(e)
    return entry_file(e).endswith(CUDA_SUFFIXES) or any(
        a in ("-x", "--x") and i + 1 < len(args) and args[i + 1] == "cu" for i, a in enumerate(args))


def select_entries(project):
    """The CUDA entries of the database, one per file, sorted by path; with sample=N, N of them
    evenly spaced over that order (index floor(i * n / N)), so the subset is deterministic."""
    try:
        db = json.load(open(project["db"]))
    except (OSError, ValueError) as e:
        raise BadInput(f"{project['db']}: not a readable compile database: {e}")
    by_file = {}
    for e in db:
        if not isinstance(e, dict) or "directory" not in e or "file" not in e or not ("arguments" in e or "command" in e):
            raise BadInput(f"{project['db']}: an entry lacks 'directory', 'file' or 'arguments'/'command'")
        if not os.path.isdir(e["directory"]):
            raise BadInput(f"{project['db']}: entry '{e['file']}': directory '{e['directory']}' does not exist")
        if is_cuda_entry(e):
            by_file.setdefault(entry_file(e), e)
    files = sorted(by_file)
    n, k = len(files), project["sample"]
    if k and k < n:
        files = [files[i * n // k] for i in range(k)]
    return [by_file[f] for f in files], n


# ---------------------------------------------------------------- timing

def timed(cmd, log, cwd=None):
    """Runs cmd under GNU time -v; returns (wall_s, peak_rss_kb, rc)."""
    tfile = log + ".time"
    t0 = time.monotonic()
    with open(log, "w") as out:
        rc = subprocess.call(["/usr/bin/time", "-v", "-o", tfile] + cmd, stdout=out, stderr=subprocess.STDOUT, cwd=cwd)
    wall = time.monotonic() - t0
    rss = 0
    for line in open(tfile):
        if "Maximum resident set size" in line:
            rss = int(line.rsplit(":", 1)[1])
    return wall, rss, rc


# ---------------------------------------------------------------- nvcc side

def nvcc_cubin_command(e, nvcc, arch, out):
    args, cmd, i = entry_args(e), [nvcc], 1
    while i < len(args):
        a = args[i]
        flag = a.split("=", 1)[0] if a.startswith("-") else a
        if a == "-dc" or a == "--device-c":
            cmd.append("-rdc=true")
        elif flag in NVCC_DROP_WITH_VALUE:
            i += 0 if "=" in a else 1
        elif a not in NVCC_DROP_ALONE:
            cmd.append(a)
        i += 1
    return cmd + ["-cubin", "-arch=" + arch, "-o", out]


def cubin_kernels(readelf, cubin):
    """The kernels of a cubin: FUNC symbols defined in a `.text.<symbol>` section that carry
    STO_CUDA_ENTRY (st_other 0x10, shown by readelf as `[<other>: 10]`). Device functions that nvcc
    keeps (-rdc=true) and its division/sqrt slow paths have sections of their own too, without it."""
    secs = {}
    for line in subprocess.run([readelf, "-SW", cubin], capture_output=True, text=True).stdout.splitlines():
        m = re.match(r"\s*\[\s*(\d+)\]\s+(\S+)", line)
        if m:
            secs[m.group(1)] = m.group(2)
    syms = []
    for line in subprocess.run([readelf, "-sW", cubin], capture_output=True, text=True).stdout.splitlines():
        f, other = line.split(), re.search(r"\[<other>: ([0-9a-fA-F]+)\]", line)
        if (len(f) >= 8 and f[3] == "FUNC" and other and int(other.group(1), 16) & 0x10
                and secs.get(f[-2], "") == ".text." + f[-1]):
            syms.append(f[-1])
    return syms


def nvcc_one(e, opts, outdir, idx):
    """One TU's cubin and its kernels. Its exit status and first error are kept in tuNNNN.nvcc.json;
    with --reuse-nvcc a TU that has one is not compiled again (a rerun of the kloop and clang sides)."""
    cubin = os.path.join(outdir, f"tu{idx:04d}.cubin")
    log = os.path.join(outdir, f"tu{idx:04d}.nvcc.log")
    meta = os.path.join(outdir, f"tu{idx:04d}.nvcc.json")
    if opts.reuse_nvcc and os.path.exists(meta):
        m = json.load(open(meta))
        rc, first = m["rc"], m["first_error"]
    else:
        cmd = nvcc_cubin_command(e, opts.nvcc, opts.arch, cubin)
        try:
            with open(log, "w") as out:
                rc = subprocess.call(cmd, cwd=e["directory"], stdout=out, stderr=subprocess.STDOUT, timeout=opts.nvcc_timeout)
        except subprocess.TimeoutExpired:
            rc = "timeout"
        first = first_error_line(log) if rc != 0 else ""
        json.dump({"file": entry_file(e), "rc": rc, "first_error": first}, open(meta, "w"))
    syms = cubin_kernels(opts.readelf, cubin) if rc == 0 else []
    return {"file": entry_file(e), "rc": rc, "kernels": syms, "first_error": first}


def first_error_line(log):
    for line in open(log, errors="replace"):
        if "error" in line:
            return line.strip()
    return "(no error line; see " + log + ")"


def demangle(demangler, names):
    if not names:
        return {}
    out = subprocess.run([demangler], input="\n".join(names) + "\n", capture_output=True, text=True).stdout
    return dict(zip(names, out.splitlines()))


# ---------------------------------------------------------------- clang floor

def clang_side_commands(e, opts):
    """clang++ -fsyntax-only of both sides with the flags kloop adds to every parse
    (lib/Frontend/Frontend.cpp sideCommandLine) and the TU's own parse-relevant flags."""
    args, own, i = expand_response_files(entry_args(e), e["directory"]), [], 1
    while i < len(args):
        a, nxt = args[i], args[i + 1] if i + 1 < len(args) else None
        if a in CLANG_KEEP_WITH_VALUE and nxt is not None:
            own += [a, nxt]; i += 1
        elif a.startswith("-isystem="):  # nvcc's spelling; clang reads '=' as its sysroot
            own += ["-isystem", a[len("-isystem="):]]
        elif a.startswith(("-I", "-D", "-U", "-isystem", "-std=")) and a not in CLANG_KEEP_WITH_VALUE:
            own.append(a)
        elif a in ("-std", "--std") and nxt is not None:
            own.append("-std=" + nxt); i += 1
        elif a.startswith(("-Xcompiler=", "--compiler-options=")) or (a in ("-Xcompiler", "--compiler-options") and nxt):
            val = a.split("=", 1)[1] if "=" in a else nxt
            i += 0 if "=" in a else 1
            own += [v.strip() for v in val.split(",") if v.strip().startswith(("-D", "-I", "-std=", "-f"))]
        i += 1
    fixed = ["-x", "cuda", "--cuda-path=" + opts.cuda_path, "-isystem", os.path.join(opts.cuda_path, "include", "cccl"),
             "--cuda-gpu-arch=" + opts.arch, "-Wno-unknown-cuda-version", "-Qunused-arguments", "-fno-caret-diagnostics",
             "-fsyntax-only"]
    return [[opts.clang] + fixed + [side] + own + [entry_file(e)] for side in ("--cuda-device-only", "--cuda-host-only")]


def expand_response_files(args, directory):
    """nvcc's response files (`--options-file F`, `-optf F`, `@F`; relative to the entry's directory),
    replaced by their words: CMake passes include directories that way."""
    out, i = [], 0
    while i < len(args):
        a = args[i]
        path = None
        if a in ("--options-file", "-optf") and i + 1 < len(args):
            path, i = args[i + 1], i + 1
        elif a.startswith("--options-file="):
            path = a.split("=", 1)[1]
        elif a.startswith("@") and len(a) > 1:
            path = a[1:]
        if path is None:
            out.append(a)
        else:
            full = os.path.join(directory, path)
            try:
                out += expand_response_files(shlex.split(open(full).read()), directory)
            except OSError as e:
                raise BadInput(f"response file '{full}': {e.strerror}")
        i += 1
    return out


def run_pool(cmds_file, jobs):
    """Runs the commands of a JSON file ([[cwd, argv], ...]) with `jobs` at a time; prints the exit codes."""
    cmds = json.load(open(cmds_file))
    def one(c):
        return subprocess.call(c[1], cwd=c[0], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        rcs = list(ex.map(one, cmds))
    print(json.dumps(rcs))


# ---------------------------------------------------------------- kloop side

def inventory_summary(inv_path, files):
    """TU statuses (ok / partial / error; a TU of the database missing from the inventory is lost),
    the first error of every lost TU, kernels, their mangled names and the launch sites."""
    try:
        inv = json.load(open(inv_path))
    except (OSError, ValueError):
        inv = {}
    tus = inv.get("translation_units", inv.get("tus", []))
    root = inv.get("root", "")
    status = {os.path.normpath(os.path.join(root, t["file"])): t for t in tus}
    counts = collections.Counter()
    lost = []
    for f in files:
        t = status.get(f)
        s = t.get("status", "error") if t else "missing"
        counts[s if s in ("ok", "partial") else "lost"] += 1
        if s not in ("ok", "partial"):
            errs = (t or {}).get("errors") or ["(not in the inventory)"]
            lost.append({"file": f, "first_error": errs[0]})
    mangled = set()
    for k in inv.get("kernels", []):
        m = k.get("mangled", [])
        mangled.update([m] if isinstance(m, str) else m)
        for ins in k.get("instantiations") or []:
            mi = ins.get("mangled", [])
            mangled.update([mi] if isinstance(mi, str) else mi)
    return {"tus": dict(counts), "lost": lost, "kernels": len(inv.get("kernels", [])),
            "mangled": sorted(mangled), "unknown_keys": sorted(unknown_match_keys(inv)),
            "launch_sites": len(inv.get("launch_sites", [])), "valid_json": bool(inv)}


def unknown_match_keys(inv):
    """Match keys of the kernel symbols whose nvcc name kloop says it cannot know (nvcc_known false)."""
    keys = set()
    for k in inv.get("kernels", []):
        for s in (k.get("symbols") or []) + [i.get("symbol") or i for i in k.get("instantiations") or []]:
            if s.get("nvcc_known") is False and s.get("match_key"):
                keys.add(s["match_key"])
    return keys


def time_based_module_id(symbol):
    """True when nvcc's symbol embeds a module id whose tail nvcc made from the time and its process
    id (`_INTERNAL_<crc>_<n>_<file>_<8 hex>_<pid>`): two builds of the same file give two names."""
    m = re.search(r"(\d+)(_INTERNAL_\w+)", symbol)
    if not m:
        return False
    ident = m.group(2)[:int(m.group(1))]
    return re.search(r"_[0-9a-f]{8}_[0-9]+$", ident) is not None and ident.count("_") >= 6


def key_demangler(opts):
    """LLVM's demangler, which kloop's match keys come from (c++filt and cu++filt print a function
    template argument without its parameter types): llvm-cxxfilt beside --clang, else on PATH."""
    clang = shutil.which(opts.clang) or opts.clang
    beside = os.path.join(os.path.dirname(os.path.realpath(clang)), "llvm-cxxfilt")
    return beside if os.access(beside, os.X_OK) else "llvm-cxxfilt"


def match_key(demangled):
    """kloop's match key of a demangled nvcc name: without `_INTERNAL_...::` qualifiers."""
    return re.sub(r"_INTERNAL_\w+::", "", demangled)


# ---------------------------------------------------------------- one project

def run_project(p, opts):
    work = os.path.join(opts.work, p["name"])
    os.makedirs(os.path.join(work, "nvcc"), exist_ok=True)
    entries, in_db = select_entries(p)
    if not entries:
        raise BadInput(f"{p['db']}: no CUDA translation unit (.cu or -x cu) in the database")
    json.dump(entries, open(os.path.join(work, "compile_commands.json"), "w"), indent=1)
    files = [entry_file(e) for e in entries]
    say(f"{p['name']}: {len(entries)} of {in_db} CUDA TUs; nvcc -cubin ...")
    nv = nvcc_all(entries, opts, os.path.join(work, "nvcc"))
    say(f"{p['name']}: clang++ -fsyntax-only, both sides ...")
    clang = clang_floor(entries, opts, work)
    say(f"{p['name']}: kloop extract (first and second run) ...")
    runs = [kloop_run(p, opts, work, n) for n in (1, 2)]
    inv = inventory_summary(os.path.join(work, "inventory.1.json"), files)
    return project_result(p, in_db, entries, nv, clang, runs, inv, opts)


def nvcc_all(entries, opts, outdir):
    with concurrent.futures.ThreadPoolExecutor(opts.jobs) as ex:
        return list(ex.map(lambda a: nvcc_one(a[1], opts, outdir, a[0]), enumerate(entries)))


def clang_floor(entries, opts, work):
    cmds = [[e["directory"], c] for e in entries for c in clang_side_commands(e, opts)]
    cmds_file = os.path.join(work, "clang_commands.json")
    json.dump(cmds, open(cmds_file, "w"), indent=1)
    log = os.path.join(work, "clang.log")
    wall, rss, rc = timed([sys.executable, os.path.abspath(__file__), "--pool", cmds_file, str(opts.jobs)], log)
    rcs = json.loads(open(log).read().strip().splitlines()[-1]) if rc == 0 else []
    return {"wall_s": wall, "peak_rss_kb": rss, "commands": len(cmds), "failed": sum(1 for r in rcs if r != 0)}


def kloop_run(p, opts, work, n):
    """kloop extract of the project, run n: run 1 starts from an empty cache of its own (WORK/NAME/
    kloop-cache), run 2 finds what run 1 stored."""
    log = os.path.join(work, f"kloop.{n}.log")
    cache = os.path.join(work, "kloop-cache")
    if n == 1:
        shutil.rmtree(cache, ignore_errors=True)
    cmd = [opts.kloop, "extract", "-p", work, "--root", p["src"], "-j", str(opts.jobs), "--cache-dir", cache, "--cache-stats",
           "--cuda-path", opts.cuda_path, "--cuda-gpu-arch", opts.arch, "-o", os.path.join(work, f"inventory.{n}.json")]
    wall, rss, rc = timed(cmd, log)
    return {"wall_s": wall, "peak_rss_kb": rss, "rc": rc, "command": cmd}


def project_result(p, in_db, entries, nv, clang, runs, inv, opts):
    r = {
        "name": p["name"], "src": p["src"], "db": p["db"], "cuda_tus_in_db": in_db, "tus": len(entries),
        "sample": p["sample"], "tu_status": {k: inv["tus"].get(k, 0) for k in ("ok", "partial", "lost")},
        "lost": inv["lost"], "kloop_kernels": inv["kernels"], "kloop_symbols": len(inv["mangled"]),
        "launch_sites": inv["launch_sites"], "inventory_valid_json": inv["valid_json"],
        "kloop_first": runs[0], "kloop_second": runs[1], "clang": clang,
    }
    r.update(kernel_match(nv, inv, opts))
    return r


def kernel_match(nv, inv, opts):
    """nvcc's kernel symbols of a project (distinct), how many kloop names exactly, and the rest."""
    nv_syms = sorted({s for r in nv for s in r["kernels"]})
    names = demangle(opts.demangler, nv_syms)
    cccl = [s for s in nv_syms if re.match(r"(void )?(cub|thrust|cuda)::", names.get(s, ""))]
    kl = set(inv["mangled"])
    unknown = set(inv.get("unknown_keys", []))
    timed = [s for s in nv_syms if s not in kl and time_based_module_id(s)]
    keys = demangle(key_demangler(opts), timed) if timed else {}
    by_key = [s for s in timed if match_key(keys.get(s, s)) in unknown]
    return {
        "nvcc_symbols": len(nv_syms), "nvcc_symbol_names": nv_syms, "nvcc_cccl_symbols": len(cccl),
        "matched": sum(1 for s in nv_syms if s in kl),
        "nvcc_time_based": len([s for s in nv_syms if time_based_module_id(s)]),
        "matched_by_key_time_based": len(by_key),
        "unmatched_nvcc": [{"symbol": s, "demangled": names.get(s, s)} for s in nv_syms
                           if s not in kl and s not in by_key],
        "nvcc_failed": [{"file": r["file"], "rc": r["rc"], "first_error": r["first_error"]} for r in nv if r["rc"] != 0],
    }


def recount(opts):
    """Recounts the nvcc side of a finished run (--json, --work) from the cubins and inventories it
    kept, with this script's kernel rule; TU statuses, launch sites and times stay as measured."""
    doc = json.load(open(opts.json))
    opts.jobs, opts.arch = doc["jobs"], doc["arch"]
    for r in doc["projects"]:
        work = os.path.join(opts.work, r["name"])
        entries = json.load(open(os.path.join(work, "compile_commands.json")))
        failed = {x["file"]: x for x in r["nvcc_failed"]}
        nv = []
        for i, e in enumerate(entries):
            f = entry_file(e)
            cubin = os.path.join(work, "nvcc", f"tu{i:04d}.cubin")
            ok = f not in failed and os.path.exists(cubin)
            nv.append({"file": f, "rc": 0 if ok else failed.get(f, {}).get("rc", "no cubin"),
                       "kernels": cubin_kernels(opts.readelf, cubin) if ok else [],
                       "first_error": failed.get(f, {}).get("first_error", "")})
        inv = inventory_summary(os.path.join(work, "inventory.1.json"), [entry_file(e) for e in entries])
        r.update(kernel_match(nv, inv, opts))
    return write_outputs(doc["projects"], opts)


# ---------------------------------------------------------------- report

def pct(a, b):
    return f"{100.0 * a / b:.1f}%" if b else "-"


def ratio(a, b):
    return f"{a / b:.2f}" if b else "-"


def markdown(results, opts):
    L = [f"Kernels: nvcc -cubin -arch={opts.arch}; kloop and clang at -j{opts.jobs}.", "",
         "| project | TUs (in db) | clean | with errors | lost | kloop kernels | kloop symbols | nvcc symbols (CCCL) "
         "| nvcc symbols named by kloop | nvcc names from the time (kloop: unknown, same match key) "
         "| launch sites | nvcc failed TUs |",
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        s = r["tu_status"]
        L.append(f"| {r['name']} | {r['tus']} ({r['cuda_tus_in_db']}) | {s['ok']} | {s['partial']} | {s['lost']} "
                 f"| {r['kloop_kernels']} | {r['kloop_symbols']} | {r['nvcc_symbols']} ({r['nvcc_cccl_symbols']}) "
                 f"| {r['matched']} ({pct(r['matched'], r['nvcc_symbols'])}) "
                 f"| {r.get('nvcc_time_based', 0)} ({r.get('matched_by_key_time_based', 0)}) "
                 f"| {r['launch_sites']} | {len(r['nvcc_failed'])} |")
    L += ["", "| project | kloop s | clang s (both sides) | kloop/clang | kloop 2nd run s | 2nd/1st "
          "| kloop peak RSS MB | clang peak RSS MB (1 process) | kloop exit | clang failed parses |",
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        k1, k2, c = r["kloop_first"], r["kloop_second"], r["clang"]
        L.append(f"| {r['name']} | {k1['wall_s']:.2f} | {c['wall_s']:.2f} | {ratio(k1['wall_s'], c['wall_s'])} "
                 f"| {k2['wall_s']:.2f} | {ratio(k2['wall_s'], k1['wall_s'])} | {k1['peak_rss_kb'] / 1024:.0f} "
                 f"| {c['peak_rss_kb'] / 1024:.0f} | {k1['rc']} | {c['failed']} of {c['commands']} |")
    L += ["", "First error of each lost TU (location removed), counted over all projects:", ""]
    L += [f"- {n} x `{msg}`" for msg, n in lost_causes(results)] or ["- none"]
    return "\n".join(L) + "\n"


def lost_causes(results):
    c = collections.Counter(re.sub(r"^\S*:\d+:\d+: ", "", x["first_error"]) for r in results for x in r["lost"])
    return c.most_common()


def say(msg):
    print("corpus: " + msg, file=sys.stderr, flush=True)


def main(argv):
    if argv[:1] == ["--pool"]:
        return run_pool(argv[1], int(argv[2]))
    opts = parse_args(argv)
    if opts.recount:
        sys.stdout.write(recount(opts))
        return 0
    try:
        projects = read_manifest(opts.manifest)
        wanted = set(filter(None, opts.projects.split(",")))
        projects = [p for p in projects if not wanted or p["name"] in wanted]
        missing = wanted - {p["name"] for p in projects}
        if missing:
            raise BadInput(f"{opts.manifest}: no project named {', '.join(sorted(missing))} (--projects)")
        os.makedirs(opts.work, exist_ok=True)
        prepare_outputs(opts)
        results = []
        for p in projects:
            results.append(run_project(p, opts))
            md = write_outputs(results, opts)
    except BadInput as e:
        print(f"run.sh: error: {e}", file=sys.stderr)
        return 2
    sys.stdout.write(md)
    return 0


def prepare_outputs(opts):
    """Makes the directories of --json and --md before anything is measured, so that a run of hours
    does not end on a path it cannot write."""
    for path in filter(None, [opts.json, opts.md]):
        try:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            open(path, "a").close()
        except OSError as e:
            raise BadInput(f"{path}: cannot write the output: {e.strerror}")


def write_outputs(results, opts):
    """Writes the JSON document and the Markdown tables of the projects done so far (after each
    project, so that a run cut short keeps what it measured); returns the Markdown."""
    doc = {"schema": "kloop-corpus-bench", "version": 1, "arch": opts.arch, "jobs": opts.jobs,
           "kloop": opts.kloop, "clang": opts.clang, "nvcc": opts.nvcc, "projects": results,
           "lost_causes": [{"message": m, "count": n} for m, n in lost_causes(results)]}
    json.dump(doc, open(opts.json, "w"), indent=1)
    md = markdown(results, opts)
    if opts.md:
        open(opts.md, "w").write(md)
    return md


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]) or 0)
