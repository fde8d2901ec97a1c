"""Where the check sees the program's ops: a TorchDispatchMode, below autograd, autocast and
torch.func's transforms and above the GPU's kernels. Every op reaches it whatever called it
(nn modules, torch.nn.functional, torch.*, torch.ops.aten, TorchScript, checkpoint's
recomputation, autograd's worker threads, which run backward with the state of the thread that
called it), with the inputs the kernel gets.

Its life: pushed when the program first uses the GPU (torch.cuda's lazy initialisation, also
HIP's), or at once for a PyTorch without a GPU (to say where the network ran) and for the CPU
self-test; it looks at every call until the program has made STEPS_WITHOUT_NEW optimizer steps
in a row without a new op (or MAX_STEPS, or CALLS_WITHOUT_NEW calls without a new one), then
steps aside: it leaves the stack at the next point where that is safe (an optimizer step's end,
an nn.Module call), so the program runs as without it. A forked child (a DataLoader worker)
leaves it at once. torch.compile compiles as it would without it (the mode ignores compilation;
compiled.py checks the compiled graphs when they first run).

It never changes a call: the op runs as the program made it; ops on tracing tensors (FakeTensor,
functional tensors, subclasses), on the meta device, or made by the check itself pass through."""

import os
import threading


def make_mode_class(torch):
    from torch.utils._python_dispatch import TorchDispatchMode

    op_overload = torch._ops.OpOverload
    is_capturing = getattr(torch.cuda, "is_current_stream_capturing", None)
    cuda_ready = getattr(torch.cuda, "is_initialized", lambda: False)

    def capturing():
        """Whether the current CUDA stream is capturing a graph (never without CUDA)."""
        if is_capturing is None or not cuda_ready():
            return False
        try:
            return bool(is_capturing())
        except Exception:
            return False

    class CheckMode(TorchDispatchMode):
        # Higher-order operators (flex_attention, cond, user Triton ops) come here too; they
        # pass through (a mode that does not say so makes them raise).
        supports_higher_order_operators = True

        @classmethod
        def ignore_compile_internals(cls):
            """torch.compile compiles as without the check: the mode is off while it compiles
            and on again while the compiled code runs (its graphs are checked by compiled.py).
            Otherwise Dynamo skips each frame first called under the mode, and PyTorch before
            2.12 never compiles that code again: the program would run eager."""
            return True

        def __init__(self, checker):
            super().__init__()
            self.checker = checker
            self.looking = True
            self.local = threading.local()
            self.on_stop = None

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            c = self.checker
            if (not self.looking or getattr(self.local, "busy", False)
                    or not isinstance(func, op_overload)):
                return func(*args, **kwargs)
            try:
                # Tracing tensors, and a torch.jit.trace in progress (which would record the
                # check's own ops): the traced program is checked when it runs.
                if not _plain(types) or get_tracing() is not None:
                    return func(*args, **kwargs)
                key = c.keys.key(func, args, kwargs)
                seen = key in c.seen
            except Exception:  # an argument that cannot be a key: never break the program
                return func(*args, **kwargs)
            if not seen and capturing():
                # A CUDA graph being captured: a copy to the CPU would break the capture. The
                # op is checked at a later call outside it.
                return func(*args, **kwargs)
            if seen:
                c.calls_since_new += 1
                if c.calls_since_new > c.settings.calls_without_new:
                    self.looking = False
                    if self.on_stop is not None:
                        self.on_stop()
                return func(*args, **kwargs)
            self.local.busy = True
            try:
                return c.first_call(func, key, args, kwargs)
            finally:
                self.local.busy = False

    base = torch.Tensor.__torch_dispatch__
    get_tracing = getattr(torch._C, "_get_tracing_state", lambda: None)

    def _plain(types):
        for t in types:
            if getattr(t, "__torch_dispatch__", base) is not base:
                return False
        return True

    return CheckMode


class Life:
    """When the mode is on the stack: pushed once, left at a safe point after the first
    steps."""

    def __init__(self, torch, checker, sink):
        self.torch = torch
        self.checker = checker
        self.sink = sink
        self.mode = make_mode_class(torch)(checker)
        self.thread = None
        self.pushed = False
        self.left = False
        self.steps = 0
        self.quiet_steps = 0
        self.handles = []
        self.module_hooked = False
        self.push_hooked = False
        self.restore = []
        self.lock = threading.Lock()

    def start(self, at_once):
        """Pushes the mode now (`at_once`) or when the program first uses the GPU."""
        os.register_at_fork(after_in_child=self._in_child)
        if at_once:
            self._push()
        else:
            self.torch.cuda._lazy_call(self._push)

    def _push(self, *args):
        """Never raises (it runs inside CUDA's lazy initialisation and as a module hook)."""
        try:
            self._push_now()
        except Exception as e:
            self.sink.write({"event": "check_error", "id": None,
                             "error": f"the check could not start: {type(e).__name__}: {e}"})
        return None

    def _push_now(self):
        """Onto an empty stack only (a program's own mode below ours would be popped by its
        own exit instead of itself), from the main thread only (where a training loop runs;
        CUDA may first be used from another, a DataLoader's pin-memory thread): else at the
        next nn.Module call where both hold."""
        torch = self.torch
        with self.lock:
            if self.pushed or self.left:
                return
            if (torch._C._len_torch_dispatch_stack() != 0
                    or threading.current_thread() is not threading.main_thread()):
                if not self.push_hooked:
                    self.push_hooked = True
                    self._module_hook(self._push)
                return
            self.pushed = True
        self.thread = threading.get_ident()
        self.mode.__enter__()
        self._drop_hooks()
        try:
            from torch.optim.optimizer import register_optimizer_step_post_hook

            self.handles.append(register_optimizer_step_post_hook(self._after_step))
        except Exception as e:
            self.sink.write({"event": "check_error", "id": None,
                             "error": f"no optimizer step hook: {type(e).__name__}: {e}"})
        self.mode.on_stop = self._stopped
        self._guard_trace()
        self.sink.write({"event": "looking", "thread": threading.current_thread().name})

    def _guard_trace(self):
        """torch.jit.trace records every op called from Python while it traces, a mode's
        re-dispatch too (as constants: the trace fails): while one runs, the mode is off the
        stack. Its wrappers are taken off again when the mode leaves."""
        jit = self.torch.jit
        life = self
        for name in ("trace", "trace_module"):
            orig = getattr(jit, name, None)
            if orig is None or getattr(orig, "_rdna1_check", False):
                continue

            def guarded(*args, _orig=orig, **kwargs):
                from torch.utils._python_dispatch import _get_current_dispatch_mode
                if life.left or _get_current_dispatch_mode() is not life.mode:
                    return _orig(*args, **kwargs)
                life.mode.__exit__(None, None, None)
                try:
                    return _orig(*args, **kwargs)
                finally:
                    life.mode.__enter__()

            guarded._rdna1_check = True
            guarded.__wrapped__ = orig
            for a in ("__name__", "__qualname__", "__doc__", "__module__"):
                setattr(guarded, a, getattr(orig, a, None))
            setattr(jit, name, guarded)
            self.restore.append((jit, name, orig))

    def _module_hook(self, at_safe_point):
        """A global nn.Module forward pre-hook, only while it is needed: global module hooks
        make torch.compile(module) warn, so there is none while the mode looks."""
        try:
            from torch.nn.modules import module as nn_module

            self.handles.append(nn_module.register_module_forward_pre_hook(at_safe_point))
        except Exception:
            pass

    def _drop_hooks(self):
        for h in self.handles:
            try:
                h.remove()
            except Exception:
                pass
        self.handles = []

    def _stopped(self):
        """The mode stopped looking outside an optimizer step (no optimizer, or calls without
        a new op): it leaves at the next nn.Module call."""
        if not self.module_hooked:
            self.module_hooked = True
            self._module_hook(self._safe_point)

    def _after_step(self, *args):
        c = self.checker
        self.steps += 1
        self.quiet_steps = 0 if c.new_since_step else self.quiet_steps + 1
        c.new_since_step = 0
        s = c.settings
        if self.quiet_steps >= s.steps_without_new or self.steps >= s.max_steps:
            self.mode.looking = False
        if not self.mode.looking:
            self._safe_point()
            if not self.left and not self.module_hooked:
                # Another thread's step, or a mode above ours: at the next nn.Module call.
                self.module_hooked = True
                self._module_hook(self._safe_point)

    def _safe_point(self, *args):
        """Leaves the stack once the mode stopped looking, where that is safe: in the thread
        that pushed it, with the mode on top (a mode the program pushed after it stays above
        it: then it passes every call through until a later safe point)."""
        if self.mode.looking or self.left or not self.pushed:
            return None
        if threading.get_ident() != self.thread:
            return None
        try:
            from torch.utils._python_dispatch import _get_current_dispatch_mode
            if _get_current_dispatch_mode() is not self.mode:
                return None
            self.mode.__exit__(None, None, None)
        except Exception as e:
            self.sink.write({"event": "check_error", "id": None,
                             "error": f"leaving the stack: {type(e).__name__}: {e}"})
            return None
        self.left = True
        self._drop_hooks()
        for holder, name, orig in self.restore:
            setattr(holder, name, orig)
        self.restore = []
        self.sink.write({"event": "stepped_aside", "steps": self.steps,
                         "ops": self.checker.next_id - 1,
                         "reference_seconds": round(self.checker.spent, 2)})
        return None

    def _in_child(self):
        """A forked child (a DataLoader worker: no GPU work) leaves the mode at once. Locks
        another thread held at the fork stay held in the child: they are made anew."""
        try:
            self.lock = threading.Lock()
            self.sink.lock = threading.Lock()
            self.checker.lock = threading.Lock()
            self.mode.looking = False
            if not self.pushed:
                self.left = True
            self._safe_point()
        except Exception:
            pass
