"""Written by rdna1ctl (rdna1-mtype), put first on PYTHONPATH by `rdna1ctl search`, `report` and
`run`: loads rdna1_check (the package beside this file), which acts only once the program
imports torch, then runs the sitecustomize this one shadows (a virtual environment's or the
distribution's), as Python would have."""
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))

try:
    import rdna1_check

    rdna1_check.install_from_environment()
except Exception as e:  # noqa: BLE001 - the program runs whatever happens here
    sys.stderr.write(f"rdna1ctl: the in-process check did not load: {type(e).__name__}: {e}\n")


def _shadowed():
    """The next sitecustomize on sys.path, run under its own name: this directory left out, and
    any other copy of it (a second rdna1ctl python/ directory, a link to this one), which would
    shadow this one back."""
    import importlib.machinery
    import importlib.util

    def ours(p):
        d = os.path.realpath(p or os.curdir)
        return d == os.path.realpath(_here) or os.path.exists(
            os.path.join(d, "rdna1_check", "__init__.py"))

    rest = [p for p in sys.path if not ours(p)]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


try:
    _shadowed()
except Exception as e:  # noqa: BLE001 - as site.py reports a failing sitecustomize
    sys.stderr.write(
        "Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
        f"{type(e).__name__}: {e}\n")
