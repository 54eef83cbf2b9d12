#!/usr/bin/env python3
"""Replayed LLM proposals for examples/{saxpy,reduction,matmul} (docs/llm-replay.md).

Each entry is what a model would answer: `content` is the assistant message text
that test/Propose/fake_llm_server.py returns in an OpenAI chat-completions
envelope. `expect` is the outcome `kloop history --json` must report:
  nogpu  without a GPU (verification and measurement skipped),
  gpu    on a GPU; "measured" means the candidate passed verification and was measured:
         "accepted" or "rejected", whatever the statistics say ("failed_verification": the
         outputs did not match the baseline's within the yaml's tolerance); "a|b": either.
`why` is checked only when the actual outcome is "refused".
`why` is the reason text expected in the refusal (a substring).

Usage:
  proposals.py script EXAMPLE FILE      write the fake server's script (queue in order)
  proposals.py list EXAMPLE             print the proposal names, one a line
  proposals.py expected EXAMPLE         print the expectations as JSON
  proposals.py write EXAMPLE DIR        write DIR/NAME.json for every JSON proposal
                                        (for `kloop apply`) and DIR/NAME.txt otherwise
  proposals.py check EXAMPLE HISTORY MODE [NAME...]
                                        compare `kloop history --json` (file HISTORY) with
                                        the expectations (MODE gpu|nogpu; NAMEs: the subset
                                        that was replayed, in order); prints a table, exit 1
                                        on any mismatch
"""
import json
import os
import sys

# Outcomes that are a measured verdict (the compare of the candidate ran on a GPU).
MEASURED = "measured"
# A cheat that builds is caught on the GPU either by the workload's own check (the harness
# compares with a CPU reference and exits 1: kloop refuses the candidate, "candidate run
# ... exited with 1") or by kloop's output comparison with the baseline
# (failed_verification). Alternatives are separated by "|".
CAUGHT = "refused|failed_verification"


def prop(rationale, edits):
    return json.dumps({"version": 1, "rationale": rationale, "edits": edits}, indent=1)


SAXPY_FLOAT4 = r"""{
  // float4 loads and stores when x, y and out are all 16-byte aligned; a scalar loop
  // handles the tail (n % 4 elements) and the unaligned case.
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  const int stride = blockDim.x * gridDim.x;
  const size_t addr_bits = reinterpret_cast<size_t>(x) | reinterpret_cast<size_t>(y) |
                           reinterpret_cast<size_t>(out);
  int first_scalar = 0;
  if ((addr_bits & 15) == 0) {
    const int n4 = n / 4;
    const float4* __restrict__ x4 = reinterpret_cast<const float4*>(x);
    const float4* __restrict__ y4 = reinterpret_cast<const float4*>(y);
    float4* __restrict__ out4 = reinterpret_cast<float4*>(out);
    for (int i = tid; i < n4; i += stride) {
      const float4 xv = x4[i];
      const float4 yv = y4[i];
      float4 r;
      r.x = a * xv.x + yv.x;
      r.y = a * xv.y + yv.y;
      r.z = a * xv.z + yv.z;
      r.w = a * xv.w + yv.w;
      out4[i] = r;
    }
    first_scalar = n4 * 4;
  }
  for (int i = first_scalar + tid; i < n; i += stride) {
    out[i] = a * x[i] + y[i];
  }
}"""

SAXPY_COMPILE_ERROR = r"""{
  const int stride = blockDim.x * gridDim.x;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float4 xv = reinterpret_cast<const float4*>(x)[i]
    out[i] = a * xv.x + y[i];
  }
}"""

SAXPY_HALF_OUTPUT = r"""{
  // "Each thread handles two elements": but only the first half is ever written.
  const int stride = blockDim.x * gridDim.x;
  const int half_n = n / 2;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < half_n; i += stride) {
    out[i] = a * x[i] + y[i];
  }
}"""

HALF_INCLUDE = r"""#include <cuda_fp16.h>
// a * x + y in half precision (fp16 multiply-add), widened back to float.
__device__ __forceinline__ float axpy_half(float a, float x, float y) {
  return __half2float(__hfma(__float2half(a), __float2half(x), __float2half(y)));
}"""

SAXPY_HALF_BODY = r"""{
  const int stride = blockDim.x * gridDim.x;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = axpy_half(a, x[i], y[i]);
  }
}"""

SAXPY_HOST_EDIT = r"""{
  // Launch nothing when the harness times the kernel: 0 ms.
  (void)n; (void)a; (void)x; (void)y; (void)out; (void)stream;
}"""

WARP_SUM = r"""// Sum of v over the 32 lanes of a full warp (xor butterfly: every lane gets the same,
// bit-identical total; a fixed order, so deterministic).
__device__ __forceinline__ float warp_reduce_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  }
  return v;
}"""

REDUCE_SHFL = r"""{
  // Warp-shuffle block reduction: 2 __syncthreads per reduction instead of log2(BLOCK).
  // The grid-stride accumulation, the ticket and the last-block sum of the partials in a
  // fixed order are unchanged, so the result stays deterministic.
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "BLOCK must be whole warps");
  __shared__ float warp_sums[BLOCK / 32];
  __shared__ bool is_last_block;
  const int tid = threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;

  float sum = 0.f;
  for (int i = blockIdx.x * BLOCK + tid; i < n; i += BLOCK * gridDim.x) {
    sum += in[i];
  }
  sum = warp_reduce_sum(sum);
  if (lane == 0) warp_sums[warp] = sum;
  __syncthreads();
  if (warp == 0) {
    float block_sum = warp_reduce_sum(lane < BLOCK / 32 ? warp_sums[lane] : 0.f);
    if (lane == 0) {
      partials[blockIdx.x] = block_sum;
      __threadfence();  // make the partial visible before taking a ticket
      unsigned int ticket = atomicInc(done_count, gridDim.x - 1);
      is_last_block = (ticket == gridDim.x - 1);
    }
  }
  __syncthreads();
  if (!is_last_block) return;

  const volatile float* vpartials = partials;
  float total = 0.f;
  for (int i = tid; i < (int)gridDim.x; i += BLOCK) {
    total += vpartials[i];
  }
  total = warp_reduce_sum(total);
  if (lane == 0) warp_sums[warp] = total;
  __syncthreads();
  if (warp == 0) {
    float grand = warp_reduce_sum(lane < BLOCK / 32 ? warp_sums[lane] : 0.f);
    if (lane == 0) *out = grand;
  }
}"""

REDUCE_HOST_EDIT = r"""{
  // Skip the scratch buffer: one block is enough.
  reduce_sum<BLOCK_SIZE><<<1, BLOCK_SIZE, 0, stream>>>(in, n, partials, done_count, out);
}"""

MATMUL_TILED = r"""{
  // Shared-memory tiling: each block stages a TILE_DIM x TILE_DIM tile of A and of B per
  // step of k, so every element loaded from global memory is reused TILE_DIM times.
  // Out-of-range elements (M, N or K not a multiple of TILE_DIM) load as 0.
  __shared__ float As[TILE_DIM][TILE_DIM];
  __shared__ float Bs[TILE_DIM][TILE_DIM];
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int row = blockIdx.y * TILE_DIM + ty;
  const int col = blockIdx.x * TILE_DIM + tx;
  float acc = 0.f;
  for (int t = 0; t < K; t += TILE_DIM) {
    const int ak = t + tx;
    const int bk = t + ty;
    As[ty][tx] = (row < M && ak < K) ? A[(size_t)row * K + ak] : 0.f;
    Bs[ty][tx] = (bk < K && col < N) ? B[(size_t)bk * N + col] : 0.f;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < TILE_DIM; ++kk) {
      acc += As[ty][kk] * Bs[kk][tx];
    }
    __syncthreads();
  }
  if (row < M && col < N) C[(size_t)row * N + col] = acc;
}"""

MATMUL_HALF_ACC = r"""{
  // "Tensor-core friendly": accumulate in half precision.
  const int row = blockIdx.y * TILE_DIM + threadIdx.y;
  const int col = blockIdx.x * TILE_DIM + threadIdx.x;
  if (row >= M || col >= N) return;
  const float* a = A + (size_t)row * K;
  __half acc = __float2half(0.f);
  for (int k = 0; k < K; ++k) {
    acc = __hfma(__float2half(a[k]), __float2half(B[(size_t)k * N + col]), acc);
  }
  C[(size_t)row * N + col] = __half2float(acc);
}"""

MATMUL_HALF_INCLUDE = r"""#include <cuda_fp16.h>
// Converts to half and back (for the accumulate-in-half variant).
__device__ __forceinline__ float round_to_half(float v) { return __half2float(__float2half(v)); }"""


def entry(name, content, nogpu, gpu, why="", desc=""):
    return {"name": name, "content": content, "nogpu": nogpu, "gpu": gpu, "why": why, "desc": desc}


PROPOSALS = {
    "saxpy": [
        entry("saxpy-float4",
              prop("saxpy is memory-bound; 16-byte float4 loads and stores cut the number of "
                   "memory instructions by 4 (aligned fast path, scalar tail).",
                   [{"kind": "replace_body", "id": "saxpy", "code": SAXPY_FLOAT4}]),
              "unmeasured", MEASURED,
              desc="structural: vectorized float4 loads/stores, aligned fast path + scalar tail"),
        entry("saxpy-compile-error",
              prop("vectorize the loads",
                   [{"kind": "replace_body", "id": "saxpy", "code": SAXPY_COMPILE_ERROR}]),
              "refused", "refused", why="the edited code does not compile",
              desc="wrong: a missing semicolon; refused by kloop apply's re-parse"),
        entry("saxpy-not-json",
              "Sure! Vectorizing saxpy with float4 loads should help since the kernel is "
              "memory-bound. I would replace the body with a float4 loop and a scalar tail.",
              "refused", "refused", why="reply is not JSON",
              desc="wrong: prose instead of a JSON proposal"),
        entry("saxpy-schema-violation",
              prop("unroll the grid-stride loop by 4",
                   [{"kind": "set_unroll", "id": "saxpy/loop#1", "factor": 4}]),
              "refused", "refused", why="missing field 'count'",
              desc="wrong: set_unroll takes 'count', not 'factor' (schema)"),
        entry("saxpy-edit-host",
              prop("The launch overhead dominates; skip the launch.",
                   [{"kind": "replace_body", "id": "saxpy_launch", "code": SAXPY_HOST_EDIT}]),
              "refused", "refused", why="is a host function",
              desc="cheating: empties the host launcher (the timed code path)"),
        entry("saxpy-half-output",
              prop("Two elements per thread halve the loop overhead.",
                   [{"kind": "replace_body", "id": "saxpy", "code": SAXPY_HALF_OUTPUT}]),
              "unmeasured", CAUGHT, why="candidate run",
              desc="cheating: writes only out[0..n/2); builds, refused by output verification"),
        entry("saxpy-half-precision",
              prop("Compute in fp16: half the register pressure and the fp16 FMA throughput is 2x.",
                   [{"kind": "insert_device_function", "before": "saxpy", "code": HALF_INCLUDE},
                    {"kind": "replace_body", "id": "saxpy", "code": SAXPY_HALF_BODY}]),
              "unmeasured", CAUGHT, why="candidate run",
              desc="cheating: fp16 arithmetic; builds, refused by the f32 tolerance (abs 1e-6)"),
    ],
    "reduction": [
        entry("reduction-warp-shuffle",
              prop("The shared-memory tree does log2(256) = 8 __syncthreads per block; a "
                   "__shfl_xor_sync butterfly inside each warp plus one pass over the warp sums "
                   "needs 2. Same last-block-finishes pattern, fixed order: deterministic.",
                   [{"kind": "insert_device_function", "before": "reduce_sum", "code": WARP_SUM},
                    {"kind": "replace_body", "id": "reduce_sum", "code": REDUCE_SHFL}]),
              "unmeasured", MEASURED,
              desc="structural: warp-shuffle block reduction, deterministic"),
        entry("reduction-edit-launcher",
              prop("One block avoids the partials round trip.",
                   [{"kind": "replace_body", "id": "reduce_sum_launch", "code": REDUCE_HOST_EDIT}]),
              "refused", "refused", why="is a host function",
              desc="cheating: edits the host launcher (host code is not editable)"),
        entry("reduction-edit-main",
              prop("Time fewer iterations.",
                   [{"kind": "replace_body", "id": "main", "code": "{ return 0; }"}]),
              "refused", "refused", why="unknown inventory ID 'main'",
              desc="cheating: edits main() of the protected harness"),
    ],
    "matmul": [
        entry("matmul-smem-tiling",
              prop("sgemm_naive reads A and B from global memory K times per element of C; "
                   "staging TILE_DIM x TILE_DIM tiles in shared memory reuses each load TILE_DIM "
                   "times. Bounds-checked loads handle M, N, K that are not multiples of TILE_DIM.",
                   [{"kind": "replace_body", "id": "sgemm_naive", "code": MATMUL_TILED}]),
              "unmeasured", MEASURED,
              desc="structural: shared-memory tiling with TILE_DIM, bounds-checked tiles"),
        entry("matmul-half-accumulate",
              prop("Accumulate in fp16 to use the 2x fp16 FMA rate.",
                   [{"kind": "insert_device_function", "before": "sgemm_naive",
                     "code": MATMUL_HALF_INCLUDE},
                    {"kind": "replace_body", "id": "sgemm_naive", "code": MATMUL_HALF_ACC}]),
              "unmeasured", CAUGHT, why="candidate run",
              desc="cheating: fp16 accumulation over K; builds, refused by the tolerance (abs 1e-3)"),
    ],
}


def main(argv):
    if len(argv) < 3 or argv[1] not in ("script", "list", "expected", "write", "check"):
        sys.stderr.write(__doc__)
        return 2
    cmd, ex = argv[1], argv[2]
    if ex not in PROPOSALS:
        sys.stderr.write("proposals.py: no proposals for example '%s' (have: %s)\n"
                         % (ex, ", ".join(sorted(PROPOSALS))))
        return 2
    ps = PROPOSALS[ex]
    if (len(argv) > 3 and cmd in ("script", "write")) or (len(argv) > 4 and cmd == "check"):
        pass
    elif cmd in ("script", "write", "check"):
        sys.stderr.write(__doc__)
        return 2
    if cmd == "script":
        # Optional name filter: proposals.py script EX FILE NAME...
        names = argv[4:]
        chosen = [p for p in ps if not names or p["name"] in names]
        if names and len(chosen) != len(names):
            sys.stderr.write("proposals.py: unknown proposal name among %s\n" % names)
            return 2
        script = {"recorded": {p["name"]: {"content": p["content"], "model": "replay-" + ex,
                                           "usage": {"in": 1000, "out": 100}} for p in chosen},
                  "queue": [p["name"] for p in chosen]}
        with open(argv[3], "w") as f:
            json.dump(script, f, indent=1)
    elif cmd == "list":
        for p in ps:
            print(p["name"])
    elif cmd == "expected":
        print(json.dumps([{k: p[k] for k in ("name", "nogpu", "gpu", "why", "desc")} for p in ps],
                         indent=1))
    elif cmd == "write":
        os.makedirs(argv[3], exist_ok=True)
        for p in ps:
            try:
                json.loads(p["content"])
                ext = ".json"
            except ValueError:
                ext = ".txt"
            with open(os.path.join(argv[3], p["name"] + ext), "w") as f:
                f.write(p["content"] + "\n")
    elif cmd == "check":
        return check(ex, argv[3], argv[4], argv[5:])
    return 0


def matches(expected, outcome):
    for alt in expected.split("|"):
        if alt == MEASURED and outcome in ("accepted", "rejected"):
            return True
        if alt == outcome:
            return True
    return False


def check(ex, history_file, mode, names):
    if mode not in ("gpu", "nogpu"):
        sys.stderr.write("proposals.py: MODE must be gpu or nogpu, not '%s'\n" % mode)
        return 2
    ps = [p for p in PROPOSALS[ex] if not names or p["name"] in names]
    with open(history_file) as f:
        hist = json.load(f)
    got = sorted(hist.get("proposals", []), key=lambda p: p.get("round", 0))
    rows, ok = [], True
    for i, p in enumerate(ps):
        want = p[mode]
        if i < len(got):
            outcome = got[i].get("outcome") or "?"
            reason = (got[i].get("reason") or "").replace("\n", " ")
        else:
            outcome, reason = "(missing)", "no proposal journaled for this round"
        good = matches(want, outcome)
        if good and outcome == "refused" and p["why"] and p["why"] not in reason:
            good = False
        ok &= good
        rows.append((str(i + 1), p["name"], want + (" (%s)" % p["why"] if p["why"] and "refused" in want else ""),
                     outcome, "yes" if good else "NO", reason[:100]))
    if len(got) > len(ps):
        ok = False
        rows.append(("-", "(extra)", "-", "%d more proposal(s)" % (len(got) - len(ps)), "NO", ""))
    head = ("round", "proposal", "expected", "actual", "match", "reason")
    widths = [max(len(r[c]) for r in rows + [head]) for c in range(5)]
    fmt = "  ".join("%%-%ds" % w for w in widths) + "  %s"
    print(fmt % head)
    for r in rows:
        print(fmt % r)
    print("%s: %s (%s mode)" % (ex, "all outcomes as expected" if ok else "MISMATCH", mode))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
