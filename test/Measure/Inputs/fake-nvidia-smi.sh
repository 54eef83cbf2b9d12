#!/bin/sh
# Stands in for `nvidia-smi -L` on a machine with one GPU.
echo "GPU 0: Fake GPU (UUID: GPU-00000000-0000-0000-0000-000000000000)"
