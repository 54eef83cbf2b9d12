#!/usr/bin/env python3
"""Checks the hardware counters of a `kloop profile --metrics -o` JSON (kloop-profile/1) against values
known in advance (test/Profile/gpu-metrics.test). Prints every counter it reads, then PASS/FAIL lines;
exits 1 on any failure.

  check_metrics.py saxpy FILE N   the saxpy example over N floats: DRAM read within 10% of 8N bytes
                                  (x and y), write within 10% of 4N (out), 4 sectors per request
                                  both ways, no bank conflicts
  check_metrics.py banks FILE     Inputs/bank_conflicts.cu: the 32x32 tile has load bank conflicts,
                                  the padded tile (nearly) none; big_smem is limited by shared memory
                                  and the driver agrees with kloop's occupancy calculation
"""
import json
import sys

failures = 0


def expect(ok, what):
    global failures
    print(("PASS: " if ok else "FAIL: ") + what)
    if not ok:
        failures += 1


def counters(doc, name):
    for k in doc["kernels"]:
        if k["name"].startswith(name + "("):
            expect(len(k["counters"]) >= 1, f"{name}: has hardware counters")
            return k["counters"][0] if k["counters"] else None
    expect(False, f"{name}: kernel in the profile (kernels: {[k['name'] for k in doc['kernels']]})")
    return None


def within(value, want, tol, what):
    ok = value is not None and abs(value - want) <= tol * want
    expect(ok, f"{what}: {value} within {tol:.0%} of {want}")


def main():
    mode, path = sys.argv[1], sys.argv[2]
    doc = json.load(open(path))
    print("counters_run:", json.dumps(doc.get("counters_run")))
    print("notes:", json.dumps(doc.get("notes"), indent=1))
    for k in doc["kernels"]:
        for c in k["counters"]:
            print(k["name"], json.dumps(c, indent=1, sort_keys=True))
    run = doc.get("counters_run")
    expect(run is not None and run["profiled"] >= 1, "the metrics run profiled launches")
    if run:
        expect(run["metrics_wall_s"] > 0 and run["timing_wall_s"] > 0, "both runs' wall times are recorded")
    if mode == "saxpy":
        n = int(sys.argv[3])
        c = counters(doc, "saxpy")
        if c:
            within(c["dram_read_bytes"], 8 * n, 0.10, "saxpy DRAM bytes read")
            within(c["dram_write_bytes"], 4 * n, 0.10, "saxpy DRAM bytes written")
            within(c["global_ld_sectors_per_request"], 4.0, 0.05, "saxpy sectors per load request")
            within(c["global_st_sectors_per_request"], 4.0, 0.05, "saxpy sectors per store request")
            expect(c["smem_bank_conflicts_ld"] == 0, "saxpy: no shared-memory bank conflicts")
            occ = c["achieved_occupancy_pct"]
            expect(occ is not None and 0 < occ <= 100, f"saxpy achieved occupancy {occ} in (0, 100]")
            th = c["theoretical"]
            expect(th is not None and th["limiter"] in ("warps", "blocks", "registers"),
                   f"saxpy has a theoretical occupancy with a limiter: {th and th['limiter']}")
            expect(len(c["top_stalls"]) >= 1 and c["top_stalls"][0]["pct"] > 0, "saxpy has stall reasons")
            hit = c["l2_hit_pct"]
            expect(hit is not None and 0 <= hit <= 100, f"saxpy L2 hit rate {hit} in [0, 100]")
    elif mode == "banks":
        bad = counters(doc, "transpose_conflicts")
        good = counters(doc, "transpose_padded")
        big = counters(doc, "big_smem")
        if bad and good:
            b, g = bad["smem_bank_conflicts_ld"], good["smem_bank_conflicts_ld"]
            expect(b is not None and b > 0, f"the 32x32 tile has load bank conflicts: {b}")
            # A conflict-free kernel should count 0; allow 1% of the conflicting one for counter noise.
            expect(g is not None and g <= 0.01 * b, f"the padded tile has (nearly) none: {g}")
            expect(bad["profiled_duration_ns"] is not None and bad["profiled_duration_ns"] > 0,
                   "a profiled duration is recorded")
        if big:
            th = big["theoretical"]
            expect(th is not None and th["limiter"] == "shared_memory",
                   f"big_smem is limited by shared memory: {th and th['limiter']}")
            expect(th is not None and big["driver_blocks_per_sm"] == th["active_blocks"],
                   f"the driver's blocks per SM ({big['driver_blocks_per_sm']}) equal kloop's "
                   f"({th and th['active_blocks']})")
    else:
        expect(False, f"unknown mode {mode}")
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
