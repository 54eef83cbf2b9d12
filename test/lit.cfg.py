# lit configuration for kloop's FileCheck tests.
#
# Features (REQUIRES: lines):
#   nvcc   the CUDA SDK (headers and nvcc) is installed at config.cuda_path
#   cupti  CUPTI headers and library are present (the injection library was built)
#   gpu    an NVIDIA GPU answers `nvidia-smi -L` (never on CI; set on the GPU machine)
#   tmpfs-mount  `mount -t tmpfs` works here (root, no container restriction): full-disk tests
#                mount a 64 KiB tmpfs, fill it and check that kloop's writer keeps the old file
#   slow   KLOOP_SLOW_TESTS is set (randomized crash loops)
#   precommit  the pre-commit tool is on PATH (scripts/bootstrap.sh installs it): test/Check/precommit.test
#   chartjs    the build installed Chart.js for kloop report --html (npm ci, cmake/NpmCi.cmake): test/Report/
#   chromium   Debian's chromium is on PATH (scripts/bootstrap.sh installs it): test/Report/html.test opens the page
import os
import shutil
import subprocess
import sys

import lit.formats

config.name = "kloop"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".cu", ".cpp", ".test", ".json", ".yaml"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kloop_obj_root, "test")

# GPU tests (gpu-*.test, REQUIRES: gpu) one at a time: each would be foreign GPU load for another
# (kloop_lit_gpu.py says why the grouping function lives in a module).
sys.path.insert(0, config.test_source_root)
import kloop_lit_gpu  # noqa: E402

lit_config.parallelism_groups[kloop_lit_gpu.GROUP] = 1
config.parallelism_group = kloop_lit_gpu.parallelism_group

config.environment["PATH"] = os.pathsep.join(
    [config.kloop_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])
for var in ("HOME", "TMPDIR", "LD_LIBRARY_PATH", "CUDA_HOME"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
# kloop extract's cache (kloop/Inventory/ExtractCache.h) stays inside the build tree during tests.
config.environment["XDG_CACHE_HOME"] = os.path.join(config.kloop_obj_root, "test", "xdg-cache")

config.substitutions.append(("%kloop_src", config.kloop_src_root))
# The build tree, for tests that install it (test/Install/).
config.substitutions.append(("%kloop_obj", config.kloop_obj_root))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
config.substitutions.append(("%cuda_path", config.cuda_path))
config.substitutions.append(("%kloop_lib", config.kloop_lib_dir))
# The fake NVML of Inputs/fake-nvml/ (built with the tests), for KLOOP_NVML_LIBRARY.
config.substitutions.append(("%fake_nvml", os.path.join(config.kloop_lib_dir, "libkloop-fake-nvml.so")))
# Flags that let a test parse CUDA with only the mock header in test/Inputs/cuda.h.
config.substitutions.append(
    ("%mockcuda", "-nocudainc -nocudalib --cuda-gpu-arch=sm_90 -isystem " + os.path.join(config.test_source_root, "Inputs")))

nvcc = os.path.join(config.cuda_path, "bin", "nvcc")
if os.path.exists(nvcc) and os.path.exists(os.path.join(config.cuda_path, "include", "cuda_runtime.h")):
    config.available_features.add("nvcc")
if os.path.exists(os.path.join(config.cuda_path, "include", "cupti.h")) and os.path.exists(
        os.path.join(config.kloop_lib_dir, "libkloop-cupti.so")):
    config.available_features.add("cupti")
if shutil.which("nvidia-smi"):
    try:
        if subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=20).returncode == 0:
            config.available_features.add("gpu")
    except Exception:
        pass
def _can_mount_tmpfs():
    import tempfile
    if not (shutil.which("mount") and shutil.which("umount")) or os.geteuid() != 0:
        return False
    d = tempfile.mkdtemp(prefix="kloop-lit-tmpfs.")
    try:
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", d],
                          capture_output=True, timeout=20).returncode != 0:
            return False
        subprocess.run(["umount", d], capture_output=True, timeout=20)
        return True
    except Exception:
        return False
    finally:
        try:
            os.rmdir(d)
        except OSError:
            pass


if _can_mount_tmpfs():
    config.available_features.add("tmpfs-mount")
# strace on PATH and allowed to trace (a container may forbid ptrace): test/Optimize/no-self-exec.test.
if shutil.which("strace"):
    try:
        if subprocess.run(["strace", "-f", "-qq", "-e", "trace=execve", "-o", os.devnull, "true"],
                          capture_output=True, timeout=20).returncode == 0:
            config.available_features.add("strace")
    except Exception:
        pass
if shutil.which("pre-commit") and shutil.which("git"):
    config.available_features.add("precommit")
if os.path.exists(os.path.join(config.kloop_obj_root, "share", "kloop", "report", "chart.umd.min.js")):
    config.available_features.add("chartjs")
if shutil.which("chromium"):
    config.available_features.add("chromium")
if os.environ.get("KLOOP_SLOW_TESTS"):
    config.available_features.add("slow")
