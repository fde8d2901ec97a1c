"""What the tests share: the tree's paths, and programs run in processes of their own with or
without the check, their records read back."""

import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TREE = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
PYTHON_DIR = os.path.join(TREE, "dist", "field-kit", "python")
FAULTS_DIR = os.path.join(TREE, "tests", "faults")
PROGRAMS = os.path.join(TREE, "tests", "field-kit", "programs")
if PYTHON_DIR not in sys.path:
    sys.path.insert(0, PYTHON_DIR)


class Run:
    def __init__(self, rc, out, err, records):
        self.rc, self.out, self.err, self.records = rc, out, err, records

    def events(self, name):
        return [r for r in self.records if r.get("event") == name]

    def ops(self):
        return {(r["pid"], r["id"]): r for r in self.events("op")}

    def wrong(self):
        ops = self.ops()
        return [(ops[(r["pid"], r["id"])], r) for r in self.events("result") if not r["ok"]]

    def unchecked(self):
        """Ops whose numbers were not checked, with why: said when first seen (the op record's
        `why`) or after (an unchecked event); random numbers and ops that compute nothing
        aside."""
        ops = self.ops()
        first = [(o, o["why"]) for o in ops.values()
                 if o.get("why") and not o.get("random") and o.get("computes", True)]
        return first + [(ops[(r["pid"], r["id"])], r["why"]) for r in self.events("unchecked")]

    def errors(self):
        return [r["error"] for r in self.events("check_error")]

    def __repr__(self):
        return f"exit {self.rc}\nstdout: {self.out[-2000:]}\nstderr: {self.err[-3000:]}"


def run(args, check=True, faults=None, env=None, timeout=900):
    """`python3 ARGS` in a process of its own: with the check (numerics, the CPU standing for
    the GPU, its sitecustomize first on the path, as rdna1ctl runs a command) or without it,
    and with RDNA1_FAULTS `faults` (tests/faults on the path)."""
    with tempfile.TemporaryDirectory() as records:
        e = {k: v for k, v in os.environ.items()
             if not k.startswith(("RDNA1_", "PYTHON"))}
        path = [FAULTS_DIR]
        if check:
            path.insert(0, PYTHON_DIR)
            e.update(RDNA1_CHECK_DIR=records, RDNA1_CHECK="numerics",
                     RDNA1_CHECK_SELF_TEST_CPU="1")
        e["PYTHONPATH"] = os.pathsep.join(path)
        if faults:
            e["RDNA1_FAULTS"] = faults
        e.update(env or {})
        p = subprocess.run([sys.executable] + list(args), capture_output=True, text=True,
                           env=e, timeout=timeout, cwd=records)
        recs = []
        for f in sorted(glob.glob(os.path.join(records, "check-*.jsonl"))):
            with open(f, encoding="utf-8") as fh:
                recs.extend(json.loads(line) for line in fh if line.strip())
        return Run(p.returncode, p.stdout, p.stderr, recs)


def program(name, *args, **kw):
    return run([os.path.join(PROGRAMS, name)] + list(args), **kw)
