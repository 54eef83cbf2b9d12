#!/usr/bin/env python3
"""Stands in for a CUDA workload run under libkloop-cupti.so, with output capture (no GPU needed).

    fake_capture_workload.py SOURCE_DIR ITERS SEED

The variant is read from SOURCE_DIR/variant:
  base   saxpy launches of 2000..2040 ns, output arg 3 = 4 floats from the seed
  fast   same outputs, launches of 1000..1040 ns
  wrong  fast, but the output is off by 0.5
  crash  dies with SIGSEGV
  stream fast, but every saxpy launch after the first runs on another stream (work moved to a side stream)
  leak   fast, but leaves 20 more MiB of device memory allocated at exit
  hang   makes the fake NVML list it with 1032 MiB (until 400 ms after it is gone) and never ends
  stuck  makes the fake NVML list a pid 4242 with 1032 MiB for ever, then exits 3
Read-write output (arg 3 is C of C = 1.5 * AB + 0.5 * C: read, then written, like a gemm with beta != 0):
  rwbase   launches of 2000..2040 ns; reads C, so when arg 3 is poisoned it computes NaN everywhere
  rwfast   the same result, written the other way round (0.5 * C + 1.5 * AB), launches of 1000..1040 ns
  rwnobeta fast, but ignores beta: C = 1.5 * AB (right only where C was 0)
The fake NVML (test/Inputs/fake-nvml/) reads its script from $KLOOP_FAKE_NVML_SCRIPT; hang and stuck
write it (to a temporary file, renamed) when that variable is set.
Writes a kloop-cupti/1 profile to $KLOOP_CUPTI_OUT; when KLOOP_CUPTI_TARGETS names saxpy,
captures arg 3 of every saxpy launch (kloop's capture hash, test/Inputs/buffer_hash.py; a dump file when KLOOP_CUPTI_DUMP=1).
Like libkloop-cupti.so, arg 3 is poisoned (its capture says "poisoned") only when KLOOP_CUPTI_POISON is
nan or sentinel and KLOOP_CUPTI_POISON_ARGS names it ("3" or "KERNEL:3" with KERNEL in the name).
With FAKE_CAPTURE_INPUT=1 it also captures arg 2 (the input x, the same bytes on both sides). Like the
library, KLOOP_CUPTI_DUMP_ARGS (same syntax) limits which captures are dumped; each dump written is
logged to $FAKE_DUMP_LOG when set.
NVML samples, by $FAKE_FOREIGN (when $FAKE_FOREIGN_VARIANT is set, only in that variant's runs; the
other variants' runs then get the "old" samples):
  unset  none ("nvml": false)
  old    unthrottled samples that do not list the GPU's compute processes (an older library)
  some   samples listing a process of another process group (pid 4242) from the start of the
         6th timed launch to that of the 9th: 3 foreign launches per run
  all    that process in every sample: every launch foreign
Side by side (kloop compare --verify-jobs): with FAKE_RUN_LOG set, each run appends "start LABEL KIND T" and
"end LABEL KIND T" (LABEL from $KLOOP_CUPTI_OUT, KIND verify when it captures, else timing; T in seconds)
and stays FAKE_RUN_SLEEP seconds in between. With FAKE_EXCLUSIVE=DIR as well, a run that finds another run
in DIR when it ends fails like a workload out of GPU memory (exit 2).
Placement: with FAKE_PAD_LOG set, each run appends "LABEL PAD" (PAD: KLOOP_CUPTI_PLACEMENT_PAD, or "-").
"""
import json, os, signal, struct, sys, time

src, iters, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
variant = open(os.path.join(src, "variant")).read().strip()

def log_run(event):
    if os.environ.get("FAKE_RUN_LOG"):
        label = os.path.basename(os.environ.get("KLOOP_CUPTI_OUT", "?")).rsplit(".json", 1)[0]
        kind = "verify" if os.environ.get("KLOOP_CUPTI_TARGETS") else "timing"
        with open(os.environ["FAKE_RUN_LOG"], "a") as f:
            f.write("%s %s %s %.6f\n" % (event, label, kind, time.time()))

def run_exclusively():
    """Stays FAKE_RUN_SLEEP seconds; with FAKE_EXCLUSIVE, fails when another run was there meanwhile."""
    busy = os.environ.get("FAKE_EXCLUSIVE")
    mine = os.path.join(busy, str(os.getpid())) if busy else None
    if mine:
        open(mine, "w").close()
    time.sleep(float(os.environ.get("FAKE_RUN_SLEEP", "0")))
    if mine:
        crowded = len(os.listdir(busy)) > 1
        os.remove(mine)
        if crowded:
            log_run("end")
            sys.stderr.write("fake: out of memory: another process holds the GPU\n")
            sys.exit(2)

log_run("start")
if os.environ.get("FAKE_PAD_LOG"):
    with open(os.environ["FAKE_PAD_LOG"], "a") as f:
        label = os.path.basename(os.environ.get("KLOOP_CUPTI_OUT", "?")).rsplit(".json", 1)[0]
        f.write("%s %s\n" % (label, os.environ.get("KLOOP_CUPTI_PLACEMENT_PAD", "-")))
run_exclusively()

def hold_gpu(entry):
    script = os.environ.get("KLOOP_FAKE_NVML_SCRIPT")
    if script:
        with open(script + ".tmp", "w") as f:
            f.write("0 100 %s\n" % entry)
        os.rename(script + ".tmp", script)

if variant == "hang":
    hold_gpu("%d:1032:+400" % os.getpid())
    while True:
        time.sleep(3600)
if variant == "stuck":
    hold_gpu("4242:1032")
    sys.stderr.write("fake: the kernel is still running\n")
    sys.exit(3)
if variant == "crash":
    sys.stderr.write("fake: illegal memory access\n")
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGSEGV)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "Inputs"))
from buffer_hash import buffer_hash_hex as capture_hash  # noqa: E402  (kloop/Support/BufferHash.h)

out = os.environ["KLOOP_CUPTI_OUT"]
targets = [t for t in os.environ.get("KLOOP_CUPTI_TARGETS", "").split(",") if t]
dump = os.environ.get("KLOOP_CUPTI_DUMP") == "1"
name = "saxpy(int, float, float const*, float*)"
poison_byte = {"nan": 0xFF, "sentinel": 0xA5}.get(os.environ.get("KLOOP_CUPTI_POISON", ""))

def names_arg(entry, arg):
    kernel, _, index = entry.strip().rpartition(":")
    return index.strip() == str(arg) and kernel.strip() in name

def listed(var, arg):
    return any(names_arg(e, arg) for e in os.environ.get(var, "").split(",") if e.strip())

def dumps(arg):
    return dump and (not os.environ.get("KLOOP_CUPTI_DUMP_ARGS", "").strip() or listed("KLOOP_CUPTI_DUMP_ARGS", arg))

def write_dump(i, arg, data):
    dump_name = "%s.k%d.a%d.bin" % (os.path.basename(out), i, arg)
    with open(os.path.join(os.path.dirname(out), dump_name), "wb") as f:
        f.write(data)
    if os.environ.get("FAKE_DUMP_LOG"):
        with open(os.environ["FAKE_DUMP_LOG"], "a") as log:
            log.write("dumped arg %d\n" % arg)
    return dump_name

poison = poison_byte is not None and listed("KLOOP_CUPTI_POISON_ARGS", 3)
base_ns = 2000 if variant in ("base", "rwbase") else 1000
live = (3, 48) if variant != "leak" else (23, 48 + 20 * 1048576)
if variant.startswith("rw"):
    # The harness resets C from the seed before every launch; the poison overwrites it after that.
    ab = [float(2 * seed + k + 1) for k in range(4)]
    c = [float(k) for k in range(4)]  # c[0] = 0: there ignoring beta happens to be right
    if poison:
        c = list(struct.unpack("<4f", bytes([poison_byte]) * 16))
    if variant == "rwbase":
        values = [1.5 * ab[k] + 0.5 * c[k] for k in range(4)]
    elif variant == "rwfast":
        values = [0.5 * c[k] + 1.5 * ab[k] for k in range(4)]
    else:
        values = [1.5 * ab[k] for k in range(4)]
else:
    values = [float(seed + k + 1) + (0.5 if variant == "wrong" else 0.0) for k in range(4)]
# NaN results are stored as CUDA's canonical NaN (0x7fffffff), not the poison bytes they came from.
data = b"".join(b"\xff\xff\xff\x7f" if v != v else struct.pack("<f", v) for v in values)
launches, captures = [], []
for i in range(iters + 1):
    d = 50000 if i == 0 else base_ns + 10 * (i % 5)
    start = i * 100000
    launches.append({"seq": i, "kernel": "_Z5saxpyifPKfPf", "name": name, "grid": [1, 1, 1], "block": [4, 1, 1],
                     "registers": 8, "static_smem": 0, "dynamic_smem": 0, "stream": 9 if variant == "stream" and i > 0 else 7, "context": 1,
                     "start_ns": start, "end_ns": start + d, "duration_ns": d})
    if any(t in name for t in targets):
        if os.environ.get("FAKE_CAPTURE_INPUT") == "1":
            x = struct.pack("<4f", *[float(seed + k) for k in range(4)])
            captures.append({"seq": i, "kernel": "_Z5saxpyifPKfPf", "name": name, "kernel_ordinal": i, "arg": 2,
                             "ptr": "0x7f0000001000", "bytes": len(x), "hash": capture_hash(x),
                             "dump": write_dump(i, 2, x) if dumps(2) else None, "poisoned": False})
        dump_name = write_dump(i, 3, data) if dumps(3) else None
        captures.append({"seq": i, "kernel": "_Z5saxpyifPKfPf", "name": name, "kernel_ordinal": i, "arg": 3,
                         "ptr": "0x7f0000000000", "bytes": len(data), "hash": capture_hash(data), "dump": dump_name,
                         "poisoned": poison})
foreign = os.environ.get("FAKE_FOREIGN", "")
if os.environ.get("FAKE_FOREIGN_VARIANT", variant) != variant:
    foreign = "old"
env_samples = []
if foreign:
    # (time, foreign processes): launch i starts at i * 100000 ns; launch 0 is the warm-up.
    steps = {"old": [(0, None)], "some": [(0, 0), (600000, 1), (900000, 0)], "all": [(0, 1)]}[foreign]
    for t, n in steps:
        s = {"t_ns": t, "sm_clock_mhz": 1980, "mem_clock_mhz": 3201, "temp_c": 40, "power_mw": 300000,
             "throttle_reasons": 0}
        if n is not None:
            s.update({"gpu_util_pct": 100, "mem_util_pct": 20, "compute_processes": 1 + n,
                      "foreign_processes": n, "foreign_pids": [4242] * n})
        env_samples.append(s)
profile = {"schema": "kloop-cupti/1", "device": {"name": "Fake GPU", "cc": "9.0", "l2_bytes": 1048576},
           "launches": launches, "env_samples": env_samples, "nvml": bool(foreign), "captures": captures,
           "overhead": {"wall_ns_in_callbacks": 1000},
           "memory": {"live_allocations": live[0], "live_bytes": live[1], "peak_bytes": live[1]}}
# Like libkloop-cupti.so, say which CUPTI activity kind timed the kernels, when kloop asked for one.
if os.environ.get("KLOOP_CUPTI_KERNEL_TRACE"):
    profile["kernel_trace"] = os.environ["KLOOP_CUPTI_KERNEL_TRACE"]
with open(out, "w") as f:
    json.dump(profile, f)
print("fake: %s seed %d" % (variant, seed))
log_run("end")
