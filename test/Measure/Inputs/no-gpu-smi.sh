#!/bin/sh
# Stands in for `nvidia-smi -L` on a machine whose driver finds no GPU.
echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver." >&2
exit 9
