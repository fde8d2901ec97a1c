"""rdna1ctl's check, inside a PyTorch program's own process.

Loaded by rdna1ctl's sitecustomize.py (beside this package, put first on PYTHONPATH by
`rdna1ctl search`, `report` and `run`), or imported by battery.py. Nothing happens until the
program imports torch (an import hook, never an import here): then, as the environment asks
(config.py),

- MIOpen is bypassed, for everything or for some layer kinds (routing.py); attention kernels
  are turned off, bfloat16 answered with float16 or float32 (switches.py);
- every distinct GPU op the program runs, whatever called it, is recorded once with its
  family, kind, shapes and backend (mode.py, checker.py) and, with RDNA1_CHECK=numerics,
  checked against float64 on the CPU from the same inputs (references.py, slicing.py,
  compare.py); an op with no CPU reference is listed as unchecked by name;
- graphs compiled by torch.compile's Inductor are checked when they first run (compiled.py).

Each process appends one JSON object a line to RDNA1_CHECK_DIR/check-PID.jsonl as it goes
(sink.py). Nothing here may break or change the program: every failure of the check itself is
recorded and the program goes on."""

import sys

from . import config, importhook
from .config import parse_inject  # noqa: F401 - battery.py's
from .compare import FLOORS as TOLERANCES  # noqa: F401 - battery.py's
from .sink import FORMAT, Sink, text

_active = None


class Check:
    """The check installed in this process: its settings, records and (once torch is
    imported) its checker and mode."""

    def __init__(self, settings):
        self.settings = settings
        self.sink = Sink(settings.directory)
        self.torch = None
        self.checker = None
        self.life = None

    def on_torch(self, torch):
        """Called once the program's import of torch has run."""
        if self.torch is not None:
            return
        self.torch = torch
        from . import checker, mode, routing, switches

        s = self.settings
        routing.install(torch, s.bypass, s.bypass_kinds, self.sink)
        switches.install(torch, s.sdpa_off, s.bf16_as, self.sink)
        self.checker = checker.Checker(torch, self.sink, s)
        self.sink.write({
            "event": "torch", "format": FORMAT, "torch": getattr(torch, "__version__", None),
            "hip": getattr(torch.version, "hip", None),
            "cuda": getattr(torch.version, "cuda", None),
            "bypass": s.bypass, "bypass_kinds": list(s.bypass_kinds), "numerics": s.numerics,
            "self_test": s.self_test_cpu,
            "cudnn_enabled": bool(torch.backends.cudnn.enabled)})
        self.life = mode.Life(torch, self.checker, self.sink)
        gpu_build = bool(getattr(torch.version, "hip", None) or getattr(torch.version, "cuda", None))
        # A PyTorch without a GPU: looked at from the start, to say where the network ran.
        self.life.start(at_once=s.self_test_cpu or not gpu_build)
        _exit_record(torch, self)

    def ask(self, **changes):
        """Changes what the check does (battery.py: numerics on, the CPU self-test, wrong
        results on purpose, looking at every call)."""
        import dataclasses

        self.settings = dataclasses.replace(self.settings, **changes)
        if self.checker is not None:
            self.checker.settings = self.settings
        if self.life is not None:
            self.life.mode.looking = True
            if self.settings.self_test_cpu:
                self.life._push()

    def forget(self):
        """Every op is new again (battery.py: each case checks its own calls)."""
        if self.checker is not None:
            with self.checker.lock:
                self.checker.seen.clear()

    def on_inductor(self, module):
        """Called once torch._inductor.compile_fx has been imported (by torch.compile)."""
        if self.settings.numerics and self.settings.compiled:
            from . import compiled

            compiled.install(self.torch or sys.modules["torch"], module, self)


def _exit_record(torch, check):
    """At exit: whether the program used the GPU at all (a network that never did ran on the
    CPU)."""
    import atexit

    def record():
        try:
            used = bool(torch.cuda.is_initialized())
        except Exception:
            used = None
        check.sink.write({"event": "exit", "gpu_used": used})

    atexit.register(record)


def active():
    """The check installed in this process, if any."""
    return _active


def install(settings):
    """Installs the check (once per process): now if torch is imported, else when it is."""
    global _active
    if _active is not None:
        return _active
    check = _active = Check(settings)
    check.sink.write({"event": "start", "format": FORMAT, "python": sys.executable,
                      "version": sys.version.split()[0],
                      "argv": [str(a) for a in sys.argv[:8]]})

    def failed(e):
        check.sink.write({"event": "check_error", "id": None, "error": text(e)})

    watch = importhook.Watch({"torch": check.on_torch,
                              "torch._inductor.compile_fx": check.on_inductor}, failed)
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "nn"):
        check.on_torch(torch)
    watch.arm()
    importhook.record_missing_torch(check.sink)
    return check


def install_from_environment():
    """What rdna1ctl asked for (config.from_environment), or None where it asked nothing."""
    settings = config.from_environment()
    if not settings.wanted:
        return None
    return install(settings)
