"""What an op of the dispatcher is, in the owner's words: its family (named in the verdict), its
kind (the layer words the search's selective bypass matches: "Conv2d 1x1 stride 2",
"BatchNorm2d training"; else the op and its shapes) and the name of each result."""

# Families named in the verdict, for ops PyTorch's own kernels (or MIOpen, rocBLAS, cuDNN,
# cuBLAS) compute. Ops not listed are classified by their tags (pointwise: elementwise;
# reduction) or as "other".
_FAMILY = {}
for _family, _names in {
    "convolution": "convolution convolution_backward _convolution cudnn_convolution "
                   "cudnn_convolution_transpose miopen_convolution miopen_convolution_transpose "
                   "miopen_depthwise_convolution _conv_depthwise2d conv_depthwise3d "
                   "slow_conv2d_forward slow_conv_dilated2d slow_conv_transpose2d "
                   "_slow_conv2d_forward _slow_conv2d_backward",
    "batch/instance norm": "cudnn_batch_norm cudnn_batch_norm_backward miopen_batch_norm "
                           "miopen_batch_norm_backward native_batch_norm "
                           "native_batch_norm_backward _native_batch_norm_legit "
                           "_native_batch_norm_legit_no_training "
                           "_native_batch_norm_legit_functional batch_norm_backward "
                           "batch_norm_stats batch_norm_elemt batch_norm_gather_stats "
                           "batch_norm_gather_stats_with_counts batch_norm_backward_reduce "
                           "batch_norm_backward_elemt",
    "layer norm": "native_layer_norm native_layer_norm_backward _fused_rms_norm "
                  "_fused_rms_norm_backward",
    "group norm": "native_group_norm native_group_norm_backward",
    "GEMM": "mm addmm bmm baddbmm addbmm mv addmv dot vdot _addmm_activation _int_mm "
            "_scaled_mm _grouped_mm",
    "attention": "_scaled_dot_product_flash_attention "
                 "_scaled_dot_product_flash_attention_backward "
                 "_scaled_dot_product_efficient_attention "
                 "_scaled_dot_product_efficient_attention_backward "
                 "_scaled_dot_product_cudnn_attention _scaled_dot_product_cudnn_attention_backward "
                 "_scaled_dot_product_fused_attention_overrideable "
                 "_scaled_dot_product_fused_attention_overrideable_backward "
                 "_flash_attention_forward _flash_attention_backward "
                 "_efficient_attention_forward _efficient_attention_backward "
                 "_scaled_dot_product_attention_math _scaled_dot_product_flash_attention_for_cpu "
                 "_scaled_dot_product_flash_attention_for_cpu_backward",
    "softmax": "_softmax _softmax_backward_data _log_softmax _log_softmax_backward_data",
    "embedding": "embedding embedding_dense_backward embedding_backward _embedding_bag "
                 "_embedding_bag_backward _embedding_bag_dense_backward embedding_renorm_",
    "loss": "nll_loss_forward nll_loss_backward nll_loss2d_forward nll_loss2d_backward "
            "mse_loss mse_loss_backward binary_cross_entropy binary_cross_entropy_backward "
            "binary_cross_entropy_with_logits smooth_l1_loss smooth_l1_loss_backward "
            "huber_loss huber_loss_backward l1_loss soft_margin_loss multilabel_margin_loss "
            "_ctc_loss _ctc_loss_backward cross_entropy_loss kl_div",
    "random": "native_dropout bernoulli bernoulli_ uniform_ normal_ normal rand rand_like "
              "randn randn_like randint randint_like randperm multinomial exponential_ "
              "geometric_ cauchy_ log_normal_ random_ poisson _fused_dropout "
              "_standard_gamma _sample_dirichlet rrelu_with_noise",
    "allocation": "empty empty_like empty_strided new_empty new_empty_strided resize_ "
                  "set_ _local_scalar_dense record_stream",
    "data movement": "_to_copy copy_ clone cat stack index index_select index_put_ "
                     "_index_put_impl_ index_add_ index_copy_ gather scatter scatter_ "
                     "scatter_add scatter_add_ scatter_reduce masked_fill masked_fill_ "
                     "masked_scatter masked_select where take nonzero _unsafe_index "
                     "constant_pad_nd reflection_pad2d replication_pad2d flip roll repeat "
                     "tril triu fill_ zero_ zeros zeros_like ones ones_like full full_like "
                     "arange linspace scalar_tensor lift_fresh_copy _pin_memory "
                     "embedding_dense_backward_cpu slice_backward select_backward "
                     "index_select_backward",
}.items():
    for _n in _names.split():
        _FAMILY[_n] = _family

# Families whose ops compute nothing to check: their calls are recorded, never counted.
# Collectives (c10d) move numbers between processes: running them again for a reference would
# talk to the other ranks.
NOT_COMPUTED = ("view", "allocation", "communication")
# Random numbers: nothing to compare them with; listed, never counted as checked or unchecked.
NOT_COMPARABLE = ("random",)

# Ops whose integer results are positions (ties may resolve to another position on another
# device): those results are not compared, the values beside them are.
POSITIONS = frozenset(
    "max min sort topk kthvalue mode median nanmedian argmax argmin argsort cummax cummin "
    "_unique _unique2 unique_consecutive unique_dim max_pool2d_with_indices "
    "max_pool3d_with_indices adaptive_max_pool2d adaptive_max_pool3d".split())

# The name of each result, where it is not "forward" (one result) or "forward N".
_RESULTS = {
    "convolution_backward": ("input gradient", "weight gradient", "bias gradient"),
    "cudnn_batch_norm": ("forward", "saved mean", "saved inverse std", "reserve"),
    "miopen_batch_norm": ("forward", "saved mean", "saved inverse std"),
    "native_batch_norm": ("forward", "saved mean", "saved inverse std"),
    "_native_batch_norm_legit": ("forward", "saved mean", "saved inverse std"),
    "_native_batch_norm_legit_no_training": ("forward", "saved mean", "saved inverse std"),
    "native_layer_norm": ("forward", "mean", "inverse std"),
    "native_group_norm": ("forward", "mean", "inverse std"),
    "_fused_rms_norm": ("forward", "inverse rms"),
    "embedding_dense_backward": ("weight gradient",),
    "native_dropout": ("forward", "mask"),
    "_scaled_dot_product_flash_attention": ("forward", "logsumexp"),
    "_scaled_dot_product_efficient_attention": ("forward", "logsumexp"),
    "_scaled_dot_product_cudnn_attention": ("forward", "logsumexp"),
    "_scaled_dot_product_flash_attention_backward": (
        "query gradient", "key gradient", "value gradient"),
    "_scaled_dot_product_efficient_attention_backward": (
        "query gradient", "key gradient", "value gradient", "bias gradient"),
    "_scaled_dot_product_cudnn_attention_backward": (
        "query gradient", "key gradient", "value gradient"),
    "nll_loss_forward": ("forward", "total weight"),
    "_log_softmax_backward_data": ("input gradient",),
    "_softmax_backward_data": ("input gradient",),
}
for _n in ("cudnn_batch_norm_backward", "miopen_batch_norm_backward",
           "native_batch_norm_backward", "batch_norm_backward", "native_layer_norm_backward",
           "native_group_norm_backward", "_fused_rms_norm_backward"):
    _RESULTS[_n] = ("input gradient", "weight gradient", "bias gradient")

# Results that are workspace or bookkeeping, not numbers of the program's: never compared.
SCRATCH = frozenset(("reserve", "logsumexp", "mask"))


def name_of(func):
    """The op's name without namespace or overload: "convolution", "_fused_adam_"."""
    return func._schema.name.split("::")[-1]


def family_of(torch, func):
    """The op's family (see _FAMILY)."""
    name = name_of(func)
    namespace = getattr(func, "namespace", "aten")
    if namespace.startswith(("c10d", "_c10d")) or namespace == "_dtensor":
        return "communication"
    if namespace not in ("aten", "prims"):
        return "custom op"
    fam = _FAMILY.get(name)
    if fam is not None:
        return fam
    tag = getattr(torch, "Tag", None)
    seeded = getattr(tag, "nondeterministic_seeded", None) if tag is not None else None
    if seeded is not None and seeded in (getattr(func, "tags", ()) or ()):
        return "random"
    if name.startswith(("_foreach_", "_fused_")):
        return "optimizer update"
    if getattr(func, "is_view", False) or name in ("detach", "alias", "lift_fresh", "_unsafe_view",
                                                   "view", "as_strided"):
        return "view"
    tags = getattr(func, "tags", ()) or ()
    if tag is not None:
        if getattr(tag, "pointwise", None) in tags:
            return "elementwise"
        if getattr(tag, "reduction", None) in tags:
            return "reduction"
    if name in ("sum", "mean", "amax", "amin", "max", "min", "prod", "var", "std", "var_mean",
                "std_mean", "norm", "linalg_vector_norm", "logsumexp", "cumsum", "cumprod",
                "any", "all", "argmax", "argmin", "topk", "sort", "count_nonzero", "_cdist_forward"):
        return "reduction"
    return "other"


def results_of(func, count):
    """The names of the op's `count` results."""
    name = name_of(func)
    names = _RESULTS.get(name)
    if names is not None:
        return list(names[:count]) + [f"result {i}" for i in range(len(names), count)]
    if count == 1:
        return ["gradient" if "backward" in name else "forward"]
    returns = [getattr(r, "name", "") or "" for r in func._schema.returns]
    if all(returns) and len(returns) == count:
        return [r.replace("_", " ") for r in returns]
    return [f"result {i}" for i in range(count)]


def _dims(x):
    return "x".join(str(s) for s in x)


def conv_kind(input_shape, weight_shape, stride, dilation, groups, transposed):
    """"Conv2d 3x3 stride 2", "Conv2d 3x3 depthwise", "ConvTranspose2d 4x4 stride 2": the
    words the search names a layer by and RDNA1_MIOPEN_BYPASS_KINDS routes."""
    d = max(1, len(weight_shape) - 2)
    kernel = _dims(weight_shape[2:]) or "?"
    words = [f"ConvTranspose{d}d" if transposed else f"Conv{d}d", kernel]
    s = list(stride) if isinstance(stride, (list, tuple)) else [stride]
    if any(v != 1 for v in s):
        words.append("stride " + _dims(s) if len(set(s)) > 1 else f"stride {s[0]}")
    dl = list(dilation) if isinstance(dilation, (list, tuple)) else [dilation]
    if any(v != 1 for v in dl):
        words.append("dilated")
    cin = input_shape[1] if len(input_shape) > 1 else None
    if groups and groups > 1:
        words.append("depthwise" if groups == cin else f"grouped ({groups} groups)")
    return " ".join(words)


def bn_kind(input_shape, training):
    d = max(1, len(input_shape) - 2)
    return f"BatchNorm{d}d {'training' if training else 'eval'}"


_BN_TRAINING = {"cudnn_batch_norm": 5, "miopen_batch_norm": 5, "native_batch_norm": 5,
                "_native_batch_norm_legit": 5, "batch_norm_backward": 6,
                "native_batch_norm_backward": 7}


def kind_of(torch, func, named):
    """The op in words, from its arguments by name (calls.bind)."""
    name = name_of(func)
    shape = lambda n: list(named[n].shape) if isinstance(named.get(n), torch.Tensor) else []  # noqa: E731
    if name == "convolution":
        return conv_kind(shape("input"), shape("weight"), named.get("stride", 1),
                         named.get("dilation", 1), named.get("groups", 1),
                         bool(named.get("transposed", False)))
    if name == "convolution_backward":
        return conv_kind(shape("input"), shape("weight"), named.get("stride", 1),
                         named.get("dilation", 1), named.get("groups", 1),
                         bool(named.get("transposed", False)))
    if name in ("cudnn_batch_norm_backward", "miopen_batch_norm_backward"):
        return bn_kind(shape("input"), True)
    if name == "_native_batch_norm_legit_no_training":
        return bn_kind(shape("input"), False)
    if name in _BN_TRAINING:
        training = named.get("training", named.get("train", True))
        return bn_kind(shape("input"), bool(training))
    tensors = []
    for v in named.values():
        if isinstance(v, torch.Tensor):
            tensors.append(_dims(v.shape) or "scalar")
        elif isinstance(v, (list, tuple)) and v and isinstance(v[0], torch.Tensor):
            tensors.append(f"{len(v)} tensors")
        if len(tensors) == 3:
            break
    return f"{name} {', '.join(tensors)}".strip()
