// Included by both files: one kernel at one place, so its plain ID names it.
__global__ void shared_k(float *o, int n) { for (int i = 0; i < n; ++i) o[i] = 0.f; }
