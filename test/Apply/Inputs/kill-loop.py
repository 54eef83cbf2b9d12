"""SIGKILLs a 3-file `kloop apply --in-place` at random times and checks, after the next kloop
command in that tree (`kloop extract`, which recovers interrupted writes), that the three files are
all old or all new and that no kloop temporary, backup or manifest is left.

kill-loop.py KLOOP INPUT_DIR PROPOSAL WORK_DIR RUNS -- CLANG_ARGS...
Prints one summary line; exits 1 on the first violation, naming the run.
"""
import os
import random
import shutil
import signal
import subprocess
import sys
import time

NAMES = ["a.cu", "b.cu", "c.cu"]


def contents(d):
    return [open(os.path.join(d, n), "rb").read() for n in NAMES]


def leftovers(d):
    return [n for n in os.listdir(d) if "kloop-" in n]


def main():
    sep = sys.argv.index("--")
    kloop, inputs, proposal, work, runs = sys.argv[1:sep]
    clang_args = sys.argv[sep + 1:]
    old = contents(inputs)
    files = lambda d: [os.path.join(d, n) for n in NAMES]
    apply = lambda d: [kloop, "apply", "--in-place", proposal] + files(d) + ["--root", d, "--"] + clang_args
    # One uninterrupted run gives the new contents and the time an apply takes.
    ref = os.path.join(work, "ref")
    shutil.rmtree(ref, ignore_errors=True)
    shutil.copytree(inputs, ref)
    start = time.time()
    subprocess.run(apply(ref), check=True, stderr=subprocess.DEVNULL)
    duration = time.time() - start
    new = contents(ref)
    rng = random.Random(12)
    counts = {"old": 0, "new": 0}
    recovered = 0  # runs killed after the intent manifest was written
    for run in range(int(runs)):
        d = os.path.join(work, "run%d" % run)
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(inputs, d)
        p = subprocess.Popen(apply(d), stderr=subprocess.DEVNULL)
        if run % 3:
            # Within 2 ms of the first temporary (run % 3 == 1) or of the intent manifest (== 2) appearing.
            mark = "kloop-" if run % 3 == 1 else "kloop-apply-intent.json"
            while p.poll() is None and not any(mark in n for n in leftovers(d)):
                pass
            time.sleep(rng.uniform(0, 0.002))
        else:
            # Anywhere near the end, where the files are written.
            time.sleep(duration * rng.uniform(0.6, 1.05))
        p.send_signal(signal.SIGKILL)
        p.wait()
        after = subprocess.run([kloop, "extract"] + files(d) + ["--"] + clang_args,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        recovered += "recovered an interrupted write" in after.stderr
        now = contents(d)
        state = "old" if now == old else "new" if now == new else None
        if state is None:
            print("run %d: files are neither all old nor all new" % run)
            return 1
        if leftovers(d):
            print("run %d: left %s" % (run, ", ".join(leftovers(d))))
            return 1
        counts[state] += 1
        shutil.rmtree(d)
    print("all-or-nothing in %s of %s runs (%d all old, %d all new; %d recovered from a manifest)" %
          (runs, runs, counts["old"], counts["new"], recovered))
    return 0


sys.exit(main())
