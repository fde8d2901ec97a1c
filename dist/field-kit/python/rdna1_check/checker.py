"""The first call of each distinct op: recorded (op, family, kind, shapes, device, backend)
before it runs, so a process that dies in it names it; then, with the numerics asked for,
checked against its CPU reference (references.py, slicing.py, compare.py). Nothing here may
change what the program computes or break it: the program's own call runs exactly as it would,
its results are returned untouched (unless a test asks for them wrong), and every failure of
the check itself is recorded and the program goes on."""

import contextlib
import os
import threading
import time

from . import backends, calls, compare, families, references, slicing
from .sink import number, text

# Distinct ops recorded per process: a program that makes more is recorded up to here.
MAX_OPS = 3000
# Calls of one op not judged for an input that is not finite before the next is judged as it
# is (a mask of -inf is routine, not only a loss scaler's overflow step).
RETRIES = 3
# Big families recorded also when they run on the CPU (to say where a network ran).
CPU_RECORDED = ("convolution", "batch/instance norm", "layer norm", "group norm", "GEMM",
                "attention")


def no_modes(torch):
    """The check's own tensor work (copies, CPU references) with no dispatch mode below the
    check's in force: a mode there stands for the GPU's kernels (a test's faults) and must
    not touch the reference."""
    try:
        from torch.utils._python_dispatch import _disable_current_modes
    except ImportError:
        return contextlib.nullcontext()
    return _disable_current_modes()


class Checker:
    def __init__(self, torch, sink, settings):
        self.torch = torch
        self.sink = sink
        self.settings = settings
        self.keys = calls.Keys(torch)
        self.seen = {}
        self.pending = {}
        self.next_id = 1
        self.lock = threading.Lock()
        self.spent = 0.0
        self.device_names = {}
        self.overflow = False
        # Calls since the last new op (the mode steps aside after enough of them).
        self.calls_since_new = 0
        self.new_since_step = 0
        self.retries = {}

    # -- one call --------------------------------------------------------------------------------

    def first_call(self, func, key, args, kwargs):
        """Runs the program's call (`func(*args, **kwargs)`) and returns its result; records and
        checks it on the way."""
        torch = self.torch
        try:
            claim = self._announce(func, key, args, kwargs)
        except Exception as e:
            self.sink.write({"event": "check_error", "id": None, "error": text(e)})
            claim = None
        if claim is None:
            return func(*args, **kwargs)
        ident, rec, named, checking = claim
        before = None
        if checking:
            try:
                before = self._before(func, rec, named)
            except Exception as e:
                self.sink.write({"event": "check_error", "id": ident, "error": text(e)})
                checking = False
        try:
            out = func(*args, **kwargs)
        except BaseException as e:
            # The program's own exception (MIOpen's error for a kernel that does not compile,
            # an out-of-memory its code catches): said, then raised as it was.
            try:
                self.sink.write({"event": "raised", "id": ident, "error": text(e)})
            except Exception:
                pass
            raise
        try:
            self.sink.write({"event": "returned", "id": ident})
            if checking and before is not None:
                t0 = time.monotonic()
                try:
                    out = self._check(func, key, ident, rec, named, out, before)
                finally:
                    self.spent += time.monotonic() - t0
        except Exception as e:  # the check's own failure, never the program's
            self.sink.write({"event": "check_error", "id": ident, "error": text(e)})
        return out

    def _announce(self, func, key, args, kwargs):
        """Claims `key` and writes its op record before the call: (id, record, arguments by
        name, checking), or None for a call to leave alone."""
        torch = self.torch
        named = calls.bind(func, args, kwargs)
        device = calls.device_of(torch, named)
        if device is None or device.type == "meta":
            return None
        family = families.family_of(torch, func)
        on_gpu = device.type != "cpu" or self.settings.self_test_cpu
        if not on_gpu and family not in CPU_RECORDED:
            return None
        with self.lock:
            if key in self.seen:
                return None
            again = self.pending.pop(key, None)
            ident = self.next_id if self.next_id <= MAX_OPS else 0
            self.seen[key] = ident
            self.next_id += 1
            self.calls_since_new = 0
            self.new_since_step += 1
        if not ident:
            if not self.overflow:
                self.overflow = True
                self.sink.write({"event": "overflow", "max_ops": MAX_OPS})
            return None
        name = families.name_of(func)
        tensors = [t for v in named.values() for t in calls.tensors_in(torch, v)]
        floating = [t for t in tensors if t.is_floating_point()]
        first = floating[0] if floating else (tensors[0] if tensors else None)
        rec = {"event": "op", "id": ident, "op": name, "family": family,
               "kind": families.kind_of(torch, func, named),
               "inputs": [list(t.shape) for t in tensors[:4]],
               "dtype": str(first.dtype).replace("torch.", "") if first is not None else None,
               "layout": calls.layout_word(torch, first) if first is not None else None,
               "device": str(device), "device_name": self._device_name(device)}
        if family in ("convolution", "batch/instance norm"):
            # Whether MIOpen (cuDNN) was allowed for it: the bypass's proof.
            rec["cudnn_enabled"] = bool(self.keys.settings()[0])
        backend = backends.of(torch, name, named)
        if backend is not None:
            rec["backend"] = backend
            rec["backend_family"] = backends.family(backend, device.type)
        if again is not None:
            rec["again_for"] = again
        why = None
        if family in families.NOT_COMPUTED:
            rec["computes"] = False
        elif family in families.NOT_COMPARABLE and name not in references.MAPPED:
            why = "random numbers: nothing to compare them with"
            rec["random"] = True
        elif not self.settings.numerics:
            why = "numbers not checked (RDNA1_CHECK is not numerics)"
        elif not on_gpu:
            why = "ran on the CPU"
        elif family == "custom op":
            why = ("no CPU reference run: not one of PyTorch's own ops (a library's own kernel: "
                   "what it computes is its own)")
        elif self.spent > self.settings.budget_s:
            why = (f"the check's {self.settings.budget_s:g} s of CPU references were spent "
                   "before this op was first seen")
        checking = why is None and rec.get("computes", True)
        rec["checked"] = checking
        if why is not None and rec.get("computes", True):
            rec["why"] = why
        self.sink.write(rec)
        return ident, rec, named, checking

    def _device_name(self, device):
        if device.type != "cuda":
            return device.type
        if device not in self.device_names:
            try:
                i = device.index if device.index is not None else \
                    self.torch.cuda.current_device()
                props = self.torch.cuda.get_device_properties(i)
                arch = getattr(props, "gcnArchName", "") or ""
                self.device_names[device] = f"{props.name}{' (' + arch + ')' if arch else ''}"
            except Exception:
                self.device_names[device] = "cuda"
        return self.device_names[device]

    # -- the check ---------------------------------------------------------------------------

    def _before(self, func, rec, named):
        """What the check needs from before the call: the inputs on the CPU (the op may write
        them), the slice plan, and for re-runs the GPU inputs of the slice."""
        torch = self.torch
        name = rec["op"]
        try:
            plan = slicing.plan(torch, name, rec["family"], named)
        except ValueError as e:
            self._unchecked(rec["id"], str(e))
            return None
        with no_modes(torch):
            if plan is not None:
                view = {k: plan.slice_arg(torch, k, v) for k, v in named.items()}
            else:
                view = named
            cpu = {k: references.to_cpu(torch, v, False) for k, v in view.items()}
            rerun = None
            if plan is not None and "rerun" in plan.results.values():
                rerun = {k: (v.detach().clone() if isinstance(v, torch.Tensor) else v)
                         for k, v in view.items()}
        return plan, cpu, rerun

    def _unchecked(self, ident, why):
        self.sink.write({"event": "unchecked", "id": ident, "why": why})

    def _math(self, rec, dtype):
        torch = self.torch
        name = str(dtype).replace("torch.", "")
        tf32 = False
        if name == "float32" and getattr(torch.version, "cuda", None) \
                and rec["device"].startswith("cuda") \
                and os.environ.get("NVIDIA_TF32_OVERRIDE") != "0":
            fam = rec["family"]
            if fam == "convolution":
                tf32 = torch.backends.cudnn.allow_tf32 and torch.backends.cudnn.enabled
            elif fam in ("GEMM", "attention", "layer norm"):
                tf32 = torch.backends.cuda.matmul.allow_tf32
        return compare.math_of(name, tf32)

    def _check(self, func, key, ident, rec, named, out, before):
        torch = self.torch
        plan, cpu, rerun_in = before
        name = rec["op"]
        outs = references.results(torch, out)
        names = families.results_of(func, len(outs))
        written = references.writes(func, name, named)
        # The program's results (and the arguments it wrote), on the CPU, sliced as the
        # reference is.
        got = []
        aliased = {id(t) for n in written for t in calls.tensors_in(torch, named.get(n))}
        for i, (o, label) in enumerate(zip(outs, names)):
            if not isinstance(o, torch.Tensor) or id(o) in aliased or label in families.SCRATCH:
                got.append(None)
                continue
            if plan is not None and plan.results.get(i) == "rerun":
                got.append("rerun")
                continue
            if plan is not None and i not in plan.results:  # not known to split: not judged
                got.append(None)
                continue
            got.append(plan.slice_result(torch, i, o) if plan is not None else o)
        with no_modes(torch):
            inputs_finite = self._finite_inputs(cpu)
            # Results made wrong on purpose (tests): the program gets them too.
            self._inject(rec, names, outs)
            gpu_cpu = [references.to_cpu(torch, g, False) if isinstance(g, torch.Tensor)
                       else None for g in got]
            gpu_written = {n: references.to_cpu(torch, plan.slice_arg(torch, n, named[n])
                                                if plan is not None else named[n], False)
                           for n in written if named.get(n) is not None}
            if not inputs_finite:
                tries = self.retries.get(key, 0)
                if tries < RETRIES:
                    self.retries[key] = tries + 1
                    self._again(ident, key, "an input is not finite (a loss scaler's overflow "
                                            "step)")
                    return out
            try:
                # The program's random streams are not touched by the references.
                with torch.random.fork_rng(devices=[]):
                    ref_named = {k: references.to_cpu(torch, v, True) for k, v in cpu.items()}
                    ref = references.run(torch, func, name, ref_named, gpu_cpu)
                    low_named = {k: references.to_cpu(torch, v, False) for k, v in cpu.items()}
                    try:
                        low = references.run(torch, func, name, low_named, gpu_cpu)
                    except Exception:  # no CPU kernel for these types: the floors alone judge
                        low, low_named = None, None
            except references.NoReference as e:
                self._unchecked(ident, str(e))
                return out
            except Exception as e:
                self._unchecked(ident, f"its CPU reference failed: {text(e)}")
                return out
        if "rerun" in got:
            got = self._rerun(func, named, plan, rerun_in, got)
        with no_modes(torch):
            return self._judge_all(ident, rec, name, names, got, ref, low, gpu_written,
                                   ref_named, low_named, plan, out)

    def _judge_all(self, ident, rec, name, names, got, ref, low, gpu_written, ref_named,
                   low_named, plan, out):
        torch = self.torch
        note = plan.note(False) if plan is not None else None
        judged = 0
        for i, (g, label) in enumerate(zip(got, names)):
            r = ref[i] if i < len(ref) else None
            if g is None or not isinstance(r, torch.Tensor):
                continue
            is_rerun = isinstance(g, tuple)
            if is_rerun:
                g = g[0]
            lp = low[i] if low is not None and i < len(low) else None
            judged += self._result(ident, rec, label, g, r, lp, name, i,
                                   plan.note(True) if is_rerun else note)
        for n, g in gpu_written.items():
            r = ref_named.get(n)
            lp = low_named.get(n) if low_named is not None else None
            for j, (gt, rt) in enumerate(zip(calls.tensors_in(torch, g),
                                             calls.tensors_in(torch, r))):
                lt = calls.tensors_in(torch, lp)[j] if lp is not None else None
                label = f"updated {n.replace('_', ' ')}" + (f" {j}" if isinstance(g, list) else "")
                judged += self._result(ident, rec, label, gt, rt, lt, name, None, note)
                if j >= 63:
                    break
        if judged == 0:
            self._unchecked(ident, "no result of it could be compared")
        return out

    def _finite_inputs(self, cpu):
        torch = self.torch
        for v in cpu.values():
            for t in calls.tensors_in(torch, v):
                if t.is_floating_point() and t.numel() and not bool(torch.isfinite(t).all()):
                    return False
        return True

    def _again(self, ident, key, why):
        """This call could not be judged (`why`): its next call is checked as a new one (its
        record says `again_for`)."""
        self.sink.write({"event": "skipped", "id": ident, "why": why})
        with self.lock:
            if self.seen.get(key) == ident:
                del self.seen[key]
                self.pending[key] = ident

    def _rerun(self, func, named, plan, rerun_in, got):
        """Results that sum over the sliced dimension: the op run again on the GPU on the
        slice."""
        torch = self.torch
        again = references.results(torch, references.call(func, rerun_in))
        return [((references.to_cpu(torch, again[i], False),) if g == "rerun" and i < len(again)
                 and isinstance(again[i], torch.Tensor) else g)
                for i, g in enumerate(got)]

    def _result(self, ident, rec, direction, got, ref, low, name, index, note):
        torch = self.torch
        if got.is_floating_point() or got.is_complex():
            verdict = compare.judge(torch, got, ref, low, self._math(rec, got.dtype))
        elif index is not None and name in families.POSITIONS:
            return False
        else:
            verdict = compare.judge_exact(torch, got, ref)
        out = {"event": "result", "id": ident, "direction": direction}
        for k, v in verdict.items():
            out[k] = number(v) if isinstance(v, float) else v
        if note:
            out["note"] = note
        self.sink.write(out)
        return True

    def _inject(self, rec, names, outs):
        spec = self.settings.inject
        if not spec:
            return
        kind, where, factor = spec
        if kind.lower() not in rec["kind"].lower() and kind.lower() != rec["op"].lower():
            return
        # As a faulty MIOpen would: an op routed around it (the cudnn flag off) is right.
        if rec.get("backend_family") == "PyTorch" and rec["family"] in (
                "convolution", "batch/instance norm"):
            return
        want = "forward" if where == "output" else "weight gradient"
        torch = self.torch
        for label, o in zip(names, outs):
            if label == want and isinstance(o, torch.Tensor) and o.is_floating_point():
                with torch.no_grad():
                    o.mul_(factor)
                self.sink.write({"event": "test_wrong", "id": rec["id"], "direction": label,
                                 "factor": factor})
