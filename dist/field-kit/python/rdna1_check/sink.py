"""The records of one process: RDNA1_CHECK_DIR/check-PID.jsonl, one JSON object a line, written
as they happen (a process that dies still leaves what it did), and in memory for battery.py."""

import json
import os
import threading
import time

# The records' format (rdna1ctl's controller/src/runner/check.rs reads it). 2: one record per
# distinct op of the dispatcher (family, op), results per output.
FORMAT = 2


def now():
    return round(time.time(), 3)


class Sink:
    def __init__(self, directory):
        self.directory = directory
        self.records = []
        self.lock = threading.Lock()

    def write(self, rec):
        rec.setdefault("pid", os.getpid())
        rec.setdefault("t", now())
        with self.lock:
            self.records.append(rec)
            if not self.directory:
                return
            try:
                # The pid at each write: a forked child writes a file of its own.
                path = os.path.join(self.directory, f"check-{os.getpid()}.jsonl")
                with open(path, "a", encoding="utf-8") as f:
                    f.write(json.dumps(rec, allow_nan=False, default=str) + "\n")
            except (OSError, ValueError):
                pass


def number(x):
    """x for JSON: a float with 3 significant digits, or "inf"/"nan"."""
    x = float(x)
    if x != x or x in (float("inf"), float("-inf")):
        return str(x)
    return float(f"{x:.3g}")


def text(e):
    return f"{type(e).__name__}: {e}"[:2000]
