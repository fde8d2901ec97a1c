"""Whole programs in processes of their own, the check loaded as rdna1ctl loads it (the CPU
standing for the GPU), faults made below torch by tests/faults as a faulty kernel would make
them: each is named by op and result, never counted as right."""
import os
import unittest

from . import helpers


class Wrong(unittest.TestCase):
    def test_a_wrong_direct_torch_conv2d_is_named(self):
        # The check once saw torch.nn.functional only: torch.conv2d went unseen and the
        # network was said to be right.
        r = helpers.program("direct_conv.py", "--device", "cpu",
                            faults="op=convolution,action=wrong,factor=1.01")
        self.assertEqual(r.rc, 0, r)
        wrong = r.wrong()
        self.assertTrue(wrong, r)
        op, res = wrong[0]
        self.assertEqual((op["op"], op["kind"], res["direction"]),
                         ("convolution", "Conv2d 3x3", "forward"), wrong)
        self.assertEqual(r.errors(), [])

    def test_a_wrong_gemm_in_a_transformer_step_is_named(self):
        r = helpers.program("transformer_step.py", "--device", "cpu",
                            faults="op=mm,action=wrong,factor=1.01")
        self.assertEqual(r.rc, 0, r)
        ops = {o["op"] for o, _ in r.wrong()}
        self.assertEqual(ops, {"mm"}, r.wrong()[:3])
        families = {o["family"] for o in r.events("op") if o.get("checked")}
        for f in ("GEMM", "attention", "layer norm", "embedding", "softmax", "loss",
                  "elementwise"):
            self.assertIn(f, families)

    def test_a_right_transformer_step_has_nothing_wrong_or_unchecked(self):
        r = helpers.program("transformer_step.py", "--device", "cpu")
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(r.wrong(), [])
        self.assertEqual(r.unchecked(), [])
        self.assertEqual(r.errors(), [])
        # It looked at the first steps, then stepped aside: later steps ran without it.
        aside = r.events("stepped_aside")
        self.assertEqual(len(aside), 1, r.records[-5:])
        self.assertEqual(aside[0]["steps"], 3)

    def test_an_op_without_a_cpu_reference_is_unchecked_by_name(self):
        r = helpers.program("no_reference.py", "--device", "cpu")
        self.assertEqual(r.rc, 0, r)
        unchecked = [(o["op"], why) for o, why in r.unchecked()]
        self.assertEqual(len(unchecked), 1, unchecked)
        self.assertEqual(unchecked[0][0], "scale2")
        self.assertIn("no CPU reference", unchecked[0][1])
        self.assertFalse(any(res for res in r.events("result")
                             if r.ops()[(res["pid"], res["id"])]["op"] == "scale2"))

    def test_a_compiled_graph_writing_zeros_is_named_with_its_kernels(self):
        # torch.compile's graphs run after the check's first steps (it runs them eagerly
        # while it looks): the first call of each is checked against the same graph on the
        # CPU. A faulty kernel writing zeros (unsloth #11614's symptom) is named.
        r = helpers.program("transformer_step.py", "--device", "cpu", "--compile",
                            "--steps", "5", "--dim", "32",
                            faults="compiled=forward,action=zeros")
        self.assertEqual(r.rc, 0, r)
        graphs = {g["id"]: g for g in r.events("graph")}
        self.assertTrue(graphs, r)
        bad = [res for res in r.events("graph_result") if not res["ok"]]
        self.assertTrue(bad, r.events("graph_result"))
        g = graphs[bad[0]["id"]]
        self.assertTrue(g["graph"].startswith("forward"), g)
        self.assertTrue(g["kernels"], g)
        # The backward graph, not faulted, is right.
        back = [res for res in r.events("graph_result")
                if graphs[res["id"]]["graph"].startswith("backward")]
        self.assertTrue(back and all(res["ok"] for res in back), r.events("graph_result"))


class Steps(unittest.TestCase):
    def test_the_check_leaves_the_stack_and_the_program_runs_as_without_it(self):
        code = (
            "import torch, json\n"
            "from torch import nn\n"
            "net = nn.Linear(8, 8); opt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
            "x = torch.randn(4, 8)\n"
            "for _ in range(4):\n"
            "    opt.zero_grad(); net(x).sum().backward(); opt.step()\n"
            "print(json.dumps([torch._C._len_torch_dispatch_stack(),\n"
            "                  torch.jit.trace is torch.jit._trace.trace]))\n")
        r = helpers.run(["-c", code])
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(r.out.strip(), "[0, true]", r)
        self.assertEqual(len(r.events("stepped_aside")), 1)


if __name__ == "__main__":
    unittest.main()
