"""Sums up the in-process check's records (RDNA1_CHECK_DIR directories) for the measurements:
per directory, the processes, the distinct ops by family, op, device and backend, every failed
result, every op not checked, and the largest errors per family, direction and arithmetic. Test tooling: rdna1ctl's own
reading is controller/src/runner/check.rs."""
import json
import os
import sys
from collections import Counter, defaultdict


def one(d):
    recs = []
    for f in sorted(os.listdir(d)):
        if f.endswith(".jsonl"):
            with open(os.path.join(d, f)) as fh:
                recs += [json.loads(line) for line in fh if line.strip()]
    layers = {(r["pid"], r["id"]): r for r in recs if r["event"] == "op"}
    backends = {k: r.get("backend_family") for k, r in layers.items()}
    details = {k: r.get("backend") for k, r in layers.items()}
    worst = defaultdict(lambda: [0.0, 0.0])
    failed = []
    for r in recs:
        if r["event"] != "result":
            continue
        lay = layers.get((r["pid"], r["id"]), {})
        key = f"{lay.get('family')} {r['direction']} {r['math']}"
        for i, m in enumerate(("rms_rel", "max_rel")):
            v = r[m] if isinstance(r[m], (int, float)) else float("inf")
            worst[key][i] = max(worst[key][i], v)
        if not r["ok"]:
            failed.append(f"{lay.get('kind')} [{lay.get('op')}] ({lay.get('dtype')}): "
                          f"{r['direction']} max {r['max_rel']} rms {r['rms_rel']}")
    return {
        "processes": sum(r["event"] == "start" for r in recs),
        "torch": [r.get("torch") for r in recs if r["event"] == "torch"][:1],
        "ops": len(layers),
        "by_family_op_device_backend": Counter(
            f"{l['family']} {l['op']} {l['device'].split(':')[0]} {backends.get(k)}"
            for k, l in layers.items()),
        "unchecked": sorted({f"{layers.get((r['pid'], r['id']), {}).get('op')}: {r['why']}"
                             for r in recs if r["event"] == "unchecked"})[:40],
        "graphs": [r for r in recs if r["event"] in ("graph", "graph_unchecked")][:20],
        "graphs_wrong": [r for r in recs if r["event"] == "graph_result" and not r["ok"]][:20],
        "stepped_aside": [r for r in recs if r["event"] == "stepped_aside"],
        "backend_names": Counter(v for v in details.values()),
        "results": sum(r["event"] == "result" for r in recs),
        "failed": failed,
        "check_errors": [r["error"] for r in recs if r["event"] == "check_error"][:5],
        "worst": {k: {"rms_rel": v[0], "max_rel": v[1]} for k, v in sorted(worst.items())},
        "first_to_last_s": round(max((r["t"] for r in recs), default=0)
                                 - min((r["t"] for r in recs), default=0), 2),
    }


print(json.dumps({d: one(d) for d in sys.argv[1:] if os.path.isdir(d)}, indent=1))
