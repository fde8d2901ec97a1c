"""How much of a call the CPU reference covers. A call whose reference costs at most BUDGET
multiply-adds is checked whole, from the program's own results. A larger one of a family whose
results split along a dimension (a batch, a GEMM's rows, a batch norm's channels) is checked
on the first rows of that dimension: the program's own results where they split with it, a
re-run of the op on the GPU on that slice where they sum over it (a weight gradient); a foreach
or fused optimizer update over every parameter on its first tensors. Any other call that large
is listed as unchecked, by name and size."""

import math

# Float64 multiply-adds one reference may cost (about a second of one CPU core).
BUDGET = 2e9
# Elements of inputs and results a reference of an op without a slice plan may hold.
ELEMENTS = 64e6


# A plan's "dimension" for lists of tensors that are sliced to their first tensors (foreach
# and fused optimizer ops: each tensor of the list is updated on its own).
LIST = "list"


class Plan:
    """`inputs`: argument name -> dimension to slice (lists of tensors: every one of them), or
    LIST (a list of tensors, or a tensor of one scalar per tensor: its first `count`);
    `results`: result index -> dimension, LIST, or "rerun"; `count`: rows (or tensors) kept of
    `total`."""

    def __init__(self, inputs, results, count, total, dim_name):
        self.inputs = inputs
        self.results = results
        self.count = count
        self.total = total
        self.dim_name = dim_name

    def note(self, rerun):
        if rerun:
            return f"from a re-run on the GPU on {self.count} of {self.total} {self.dim_name}"
        return f"{self.dim_name} 0..{self.count - 1} of {self.total}"

    def slice_arg(self, torch, name, value):
        d = self.inputs.get(name)
        if d is None:
            return value
        if d == LIST:
            if isinstance(value, (list, tuple)):
                return type(value)(value[:self.count])
            if isinstance(value, torch.Tensor) and value.dim() == 1:
                return value.narrow(0, 0, min(self.count, value.shape[0]))
            return value
        if isinstance(value, torch.Tensor):
            return value.narrow(d, 0, min(self.count, value.shape[d])) if value.dim() > d else value
        if isinstance(value, (list, tuple)):
            return type(value)(self.slice_arg(torch, name, v) for v in value)
        return value

    def slice_result(self, torch, i, value):
        d = self.results.get(i)
        if d == LIST:
            return type(value)(value[:self.count]) if isinstance(value, (list, tuple)) \
                else value
        if d is None or d == "rerun" or not isinstance(value, torch.Tensor) or value.dim() <= d:
            return value
        return value.narrow(d, 0, min(self.count, value.shape[d]))


def _numel(shape):
    return math.prod(shape) if shape else 1


def _shape(torch, v):
    return list(v.shape) if isinstance(v, torch.Tensor) else None


def macs(torch, name, n):
    """Multiply-adds of the op's reference (elements touched, for ops that are not products)."""
    s = lambda k: _shape(torch, n.get(k))  # noqa: E731
    try:
        if name == "convolution":
            x, w = s("input"), s("weight")
            stride = n.get("stride") or [1]
            shrink = _numel(stride) if not n.get("transposed") else 1.0 / _numel(stride)
            per_out = _numel(w[1:]) if not n.get("transposed") else _numel(w[2:]) * w[0]
            out_ch = w[0] if not n.get("transposed") else w[1] * (n.get("groups") or 1)
            return _numel(x) / x[1] * out_ch / shrink * per_out
        if name == "convolution_backward":
            x, w = s("input"), s("weight")
            go = s("grad_output")
            return 2.0 * _numel(go) * _numel(w[1:]) * (1 if not n.get("transposed") else 1)
        if name in ("mm", "addmm", "_addmm_activation"):
            a, b = (s("mat1"), s("mat2")) if name != "mm" else (s("self"), s("mat2"))
            return a[0] * a[1] * b[1]
        if name in ("bmm", "baddbmm"):
            a, b = (s("self"), s("mat2")) if name == "bmm" else (s("batch1"), s("batch2"))
            return a[0] * a[1] * a[2] * b[2]
        if "attention" in name:
            q, k = s("query"), s("key")
            f = 2.5 if "backward" in name else 1.0
            return f * _numel(q[:-1]) * k[-2] * q[-1] * 2
    except (TypeError, IndexError, ZeroDivisionError):
        pass
    total = 0
    for v in n.values():
        if isinstance(v, torch.Tensor):
            total += v.numel()
        elif isinstance(v, (list, tuple)):
            total += sum(t.numel() for t in v if isinstance(t, torch.Tensor))
    return float(total)


def _first_tensors(torch, n):
    """A foreach or fused optimizer op over lists of tensors, of one length: its first tensors
    (each is updated on its own), as many as ELEMENTS allows, at least one."""
    lists = {k: v for k, v in n.items() if isinstance(v, (list, tuple)) and v
             and all(isinstance(t, torch.Tensor) for t in v)}
    lengths = {len(v) for v in lists.values()}
    if len(lengths) != 1:
        return None
    total = lengths.pop()
    per = [sum(v[i].numel() for v in lists.values()) for i in range(total)]
    count, used = 0, 0
    while count < total and (count == 0 or used + per[count] <= ELEMENTS):
        used += per[count]
        count += 1
    ins = {k: LIST for k in lists}
    # One scalar per tensor (Adam's step sizes, a learning rate per parameter): a list of
    # numbers, or a tensor of them.
    for k, v in n.items():
        if k in lists:
            continue
        if (isinstance(v, torch.Tensor) and v.dim() == 1 and v.shape[0] == total) or (
                isinstance(v, (list, tuple)) and len(v) == total
                and all(isinstance(x, (int, float, complex)) for x in v)):
            ins[k] = LIST
    return Plan(ins, {i: LIST for i in range(8)}, count, total, "tensors")


def _rows(total, cost, at_least=1):
    return max(at_least, min(total, int(total * BUDGET / max(cost, 1.0))))


def plan(torch, name, family, n):
    """The Plan for a call, None to check it whole, or raises ValueError (too large, no plan)."""
    cost = macs(torch, name, n)
    elementwise = family in ("elementwise", "data movement", "reduction", "optimizer update",
                             "loss", "softmax", "embedding", "layer norm", "group norm",
                             "batch/instance norm", "other", "custom op", "random")
    if (not elementwise and cost <= BUDGET) or (elementwise and cost <= ELEMENTS):
        return None
    t = lambda k: n.get(k) if isinstance(n.get(k), torch.Tensor) else None  # noqa: E731
    if name == "convolution" and t("input") is not None and t("input").dim() > 2:
        total = t("input").shape[0]
        return Plan({"input": 0}, {0: 0}, _rows(total, cost, 2), total, "samples")
    if name == "convolution_backward" and t("input") is not None and t("input").dim() > 2:
        total = t("input").shape[0]
        return Plan({"input": 0, "grad_output": 0}, {0: 0, 1: "rerun", 2: "rerun"},
                    _rows(total, cost, 2), total, "samples")
    if name == "mm":
        total = t("self").shape[0]
        return Plan({"self": 0}, {0: 0}, _rows(total, cost), total, "rows")
    if name in ("addmm", "_addmm_activation"):
        total = t("mat1").shape[0]
        ins = {"mat1": 0}
        bias = t("self")
        if bias is not None and bias.dim() == 2 and bias.shape[0] == total:
            ins["self"] = 0
        return Plan(ins, {0: 0}, _rows(total, cost), total, "rows")
    if name in ("bmm", "baddbmm"):
        first = t("self") if name == "bmm" else t("batch1")
        total = first.shape[0]
        ins = {"self": 0, "mat2": 0, "batch1": 0, "batch2": 0}
        bias = t("self") if name == "baddbmm" else None
        if bias is not None and (bias.dim() != 3 or bias.shape[0] != total):
            ins.pop("self")
        return Plan(ins, {0: 0}, _rows(total, cost), total, "batches")
    if "attention" in name and t("query") is not None:
        total = t("query").shape[0]
        ins = {k: 0 for k in ("query", "key", "value", "grad_out", "grad_out_", "out",
                              "logsumexp")}
        bias = t("attn_bias")
        if bias is not None and bias.dim() == t("query").dim() and bias.shape[0] == total:
            ins["attn_bias"] = 0
        return Plan(ins, {i: 0 for i in range(4)}, _rows(total, cost), total, "batches")
    if name in ("native_layer_norm", "native_layer_norm_backward", "_softmax", "_log_softmax",
                "_softmax_backward_data", "_log_softmax_backward_data"):
        x = t("input") if t("input") is not None else t("self")
        if x is None:
            x = t("grad_output")
        dim = n.get("dim")
        if x is not None and x.dim() > 1 and (dim is None or dim % x.dim() != 0):
            total = x.shape[0]
            ins = {k: 0 for k in ("input", "self", "grad_output", "output", "grad_out",
                                  "mean", "rstd")}
            res = {0: 0, 1: 0, 2: 0} if name == "native_layer_norm" else {0: 0, 1: "rerun",
                                                                             2: "rerun"}
            return Plan(ins, res, _rows(total, cost / ELEMENTS * BUDGET), total, "rows")
    if family == "batch/instance norm" and t("input") is not None and t("input").dim() > 1:
        # Channels are independent: the whole batch of the first channels.
        total = t("input").shape[1]
        per_channel = ["weight", "bias", "running_mean", "running_var", "save_mean",
                       "save_var", "save_invstd"]
        ins = {"input": 1, "grad_output": 1, "grad_out": 1}
        ins.update({k: 0 for k in per_channel})
        res = {0: 1, 1: 0, 2: 0} if "backward" not in name else {0: 1, 1: 0, 2: 0}
        return Plan(ins, res, _rows(total, cost / ELEMENTS * BUDGET), total, "channels")
    if name in ("embedding",):
        total = t("indices").shape[0] if t("indices").dim() else 1
        return Plan({"indices": 0}, {0: 0}, _rows(total, cost / ELEMENTS * BUDGET), total,
                    "rows")
    if name.startswith(("_foreach_", "_fused_")):
        tensors = _first_tensors(torch, n)
        if tensors is not None:
            return tensors
    if family == "elementwise":
        shapes = [v.shape for v in n.values() if isinstance(v, torch.Tensor)]
        if shapes:
            nd = max(len(s) for s in shapes)
            lead = max(s[0] for s in shapes if len(s) == nd) if nd else 1
            if nd and lead > 1:
                ins = {k: 0 for k, v in n.items() if isinstance(v, torch.Tensor)
                       and v.dim() == nd and v.shape[0] == lead}
                return Plan(ins, {0: 0}, _rows(lead, cost / ELEMENTS * BUDGET), lead, "rows")
    raise ValueError(f"too large to check on the CPU ({cost:.3g} "
                     f"{'multiply-adds' if not elementwise else 'elements'}) and no slice "
                     f"of it is known to be checkable alone")
