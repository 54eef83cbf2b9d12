#!/usr/bin/env python3
"""Loads an injection library the way the CUDA driver does (dlopen, then InitializeInjection()) and exits.

Used on machines without a GPU: with the toolkit's stub libcuda.so.1 first on LD_LIBRARY_PATH every
CUDA/CUPTI call fails, which exercises libkloop-cupti's error path and its JSON writer (at exit).
usage: load_injection.py LIB.so
"""
import ctypes
import sys

lib = ctypes.CDLL(sys.argv[1])
print("InitializeInjection returned %d" % lib.InitializeInjection())
