"""lit helper: the GPU tests run one at a time.

kloop discards the timing samples taken while another process uses the GPU (foreign GPU load,
docs/measure.md), so two GPU tests at once would discard each other's samples. lit hands each test,
its configuration included, to a worker process by pickling it; a function defined in lit.cfg.py
cannot be pickled, one in this importable module can.
"""
import os

#: The lit parallelism group of the GPU tests; lit.cfg.py gives it one slot.
GROUP = "kloop-gpu"


def parallelism_group(test):
    """GROUP for a GPU test (by convention named gpu-*, with `REQUIRES: gpu`), else None."""
    return GROUP if os.path.basename(test.getSourcePath()).startswith("gpu-") else None
