"""Acting when the program imports a module, never importing it here: a meta-path finder lets
the real import run, then calls back with the module. torch itself is never imported by the
check: a program that does not import torch is not touched, and one that does pays for the
check only from then on."""

import importlib.util
import sys


class Watch:
    """Calls `callbacks[name](module)` once the module `name` has been executed by the
    program's own import. It stays on sys.meta_path until every watched module has been
    seen: a library asking `importlib.util.find_spec("torch")` (is torch there?) gets the same
    answer and leaves it armed."""

    def __init__(self, callbacks, on_error):
        self.callbacks = dict(callbacks)
        self.on_error = on_error
        self.busy = False

    def arm(self):
        for name in list(self.callbacks):
            module = sys.modules.get(name)
            if module is not None and getattr(module, "__spec__", None) is not None \
                    and not _initialising(module):
                self._fire(name, module)
        if self.callbacks and self not in sys.meta_path:
            sys.meta_path.insert(0, self)

    def find_spec(self, name, path=None, target=None):
        if self.busy or name not in self.callbacks:
            return None
        self.busy = True
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        finally:
            self.busy = False
        if spec is None or spec.loader is None:
            return None
        spec.loader = _Loader(spec.loader, self, name)
        return spec

    def _fire(self, name, module):
        callback = self.callbacks.pop(name, None)
        if not self.callbacks and self in sys.meta_path:
            sys.meta_path.remove(self)
        if callback is None:
            return
        try:
            callback(module)
        except Exception as e:  # the check's own failure: the program's import goes on
            self.on_error(e)


def _initialising(module):
    spec = getattr(module, "__spec__", None)
    return bool(getattr(spec, "_initializing", False))


class _Loader:
    def __init__(self, real, watch, name):
        self.real = real
        self.watch = watch
        self.name = name

    def create_module(self, spec):
        return self.real.create_module(spec)

    def exec_module(self, module):
        self.real.exec_module(module)
        self.watch._fire(self.name, module)

    def __getattr__(self, name):
        return getattr(self.real, name)


def record_missing_torch(sink):
    """Records, when the program ends on `ModuleNotFoundError: No module named 'torch'`, that
    this interpreter has no torch (then chains to the hook in place)."""
    previous = sys.excepthook

    def hook(kind, value, tb):
        try:
            if isinstance(value, ModuleNotFoundError) and getattr(value, "name", "") == "torch":
                sink.write({"event": "torch_missing", "python": sys.executable,
                            "path": [str(p) for p in sys.path[:12]]})
        except Exception:
            pass
        previous(kind, value, tb)

    sys.excepthook = hook
