// Host-only code built by the host compiler: not a CUDA translation unit, not counted.
int host_only() { return 1; }
