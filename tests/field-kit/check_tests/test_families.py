"""families.py: real ops of the dispatcher named by family, kind and result."""
import unittest

import torch

from . import helpers  # noqa: F401
from rdna1_check import families

aten = torch.ops.aten


class Families(unittest.TestCase):
    def test_families_the_verdict_names(self):
        want = {
            aten.convolution.default: "convolution",
            aten.convolution_backward.default: "convolution",
            aten.cudnn_batch_norm.default: "batch/instance norm",
            aten.miopen_batch_norm.default: "batch/instance norm",
            aten.native_layer_norm.default: "layer norm",
            aten.native_group_norm.default: "group norm",
            aten.mm.default: "GEMM",
            aten.addmm.default: "GEMM",
            aten.bmm.default: "GEMM",
            aten._scaled_dot_product_flash_attention.default: "attention",
            aten._scaled_dot_product_efficient_attention_backward.default: "attention",
            aten._softmax.default: "softmax",
            aten.embedding_dense_backward.default: "embedding",
            aten.nll_loss_forward.default: "loss",
            aten.sum.dim_IntList: "reduction",
            aten.add.Tensor: "elementwise",
            aten.gelu.default: "elementwise",
            aten._fused_adam_.default: "optimizer update",
            aten._foreach_add_.List: "optimizer update",
            aten.native_dropout.default: "random",
            aten.view.default: "view",
            aten.empty.memory_format: "allocation",
            aten._to_copy.default: "data movement",
        }
        for op, fam in want.items():
            self.assertEqual(families.family_of(torch, op), fam, op)

    def test_layer_words_the_bypass_routes_by(self):
        self.assertEqual(families.conv_kind([8, 64, 56, 56], [256, 64, 1, 1], [2, 2], [1, 1],
                                            1, False), "Conv2d 1x1 stride 2")
        self.assertEqual(families.conv_kind([8, 128, 28, 28], [128, 1, 3, 3], [1, 1], [1, 1],
                                            128, False), "Conv2d 3x3 depthwise")
        self.assertEqual(families.conv_kind([8, 64, 14, 14], [64, 32, 4, 4], [2, 2], [1, 1],
                                            1, True), "ConvTranspose2d 4x4 stride 2")
        x, w = torch.zeros(2, 3, 8, 8), torch.zeros(4, 3, 3, 3)
        named = {"input": x, "weight": w, "stride": [1, 1], "dilation": [1, 1], "groups": 1,
                 "transposed": False}
        self.assertEqual(families.kind_of(torch, aten.convolution.default, named), "Conv2d 3x3")
        bn = {"input": x, "training": True}
        self.assertEqual(families.kind_of(torch, aten.cudnn_batch_norm.default, bn),
                         "BatchNorm2d training")
        self.assertEqual(families.kind_of(torch, aten.mm.default,
                                          {"self": torch.zeros(4, 5), "mat2": torch.zeros(5, 6)}),
                         "mm 4x5, 5x6")

    def test_results_are_named(self):
        self.assertEqual(families.results_of(aten.convolution_backward.default, 3),
                         ["input gradient", "weight gradient", "bias gradient"])
        self.assertEqual(families.results_of(aten.mm.default, 1), ["forward"])
        self.assertEqual(families.results_of(aten.cudnn_batch_norm_backward.default, 3),
                         ["input gradient", "weight gradient", "bias gradient"])


if __name__ == "__main__":
    unittest.main()
