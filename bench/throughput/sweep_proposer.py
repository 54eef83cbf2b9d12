#!/usr/bin/env python3
"""A command proposer for bench/throughput (kloop optimize --proposer command): it sweeps the workload's
tunable launch constants, one set_constant per proposal, and answers a batch request ("batch": N in
the context; docs/proposers.md, "Batches") with the next N values not yet in the history. It is not a
search strategy: it is a source of many valid candidates, so that the bench can time a search of
dozens of candidates (issue 14, item 6) instead of the builtin search's short walk.

Constants: the inventory's editable ones without a hardware_fact, with a use in a `block_size` or
`launch_bounds` context (values: multiples of 32, or powers of 2 when the current value is under 32 or
the constant is also a template argument, as block-size templates often assume for their reduction
trees; up to what keeps the product of all such constants at most 1024 threads), else in `grid_size` (the
current value times 2^k, k = -4..3, at least 1), else in `unroll` (1, 2, 4, 8, 16). The current value is the
inventory's, or the last accepted proposal's. Values nearest the current one come first, constants
taking turns. With nothing left it answers a proposal with no edits, which apply refuses.
"""
import json
import sys


BLOCK = {"block_size", "launch_bounds"}


def values_for(contexts, current, threads):
    if contexts & BLOCK:
        most = 1024 * current // max(1, threads)
        if current % 32 == 0 and "template_arg" not in contexts:
            return list(range(32, most + 1, 32))
        return [1 << k for k in range(11) if 1 << k <= most]
    if "grid_size" in contexts:
        return sorted({max(1, int(current * 2.0 ** k)) for k in range(-4, 4)})
    if "unroll" in contexts:
        return [1, 2, 4, 8, 16]
    return []


def main():
    ctx = json.load(sys.stdin)
    current, tried, sweeps = {}, set(), []
    for c in ctx.get("inventory", {}).get("constants", []):
        if not c.get("editable", True) or c.get("hardware_fact") or not isinstance(c.get("value"), int):
            continue
        current[c["id"]] = c["value"]
        sweeps.append((c["id"], {u.get("context") for u in c.get("uses", [])}))
    for h in ctx.get("history", []):
        for e in (h.get("proposal") or {}).get("edits", []):
            if e.get("kind") == "set_constant":
                tried.add((e["id"], e["value"]))
                if h.get("accepted"):
                    current[e["id"]] = e["value"]
    threads = 1
    for cid, contexts in sweeps:
        if contexts & BLOCK:
            threads *= max(1, current[cid])
    queues = []
    for cid, contexts in sweeps:
        vals = [v for v in values_for(contexts, current[cid], threads) if v != current[cid] and (cid, v) not in tried]
        queues.append([(cid, v) for v in sorted(vals, key=lambda v: (abs(v - current[cid]), v))])
    order = []
    while any(queues):
        for q in queues:
            if q:
                order.append(q.pop(0))
    n = ctx.get("batch", 1)
    props = [{"version": 1, "edits": [{"kind": "set_constant", "id": cid, "value": v}],
              "rationale": "sweep %s %d -> %d" % (cid, current[cid], v)} for cid, v in order[:n]]
    if not props:
        props = [{"version": 1, "edits": [], "rationale": "sweep exhausted"}]
    reply = {"proposals": props} if "batch" in ctx else props[0]
    reply["provenance"] = {"model": "sweep"}
    print(json.dumps(reply))


main()
