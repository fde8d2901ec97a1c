"""switches.py: attention kernels off, bfloat16 answered with float16 or float32, each recorded;
a value it cannot take is said, not guessed."""
import json
import unittest

from . import helpers

PROGRAM = r"""
import json, torch
b = torch.backends.cuda
out = {"flash": b.flash_sdp_enabled(), "efficient": b.mem_efficient_sdp_enabled(),
       "math": b.math_sdp_enabled(), "bf16": torch.cuda.is_bf16_supported()}
a = torch.autocast("cuda", dtype=torch.bfloat16)
out["autocast"] = [str(a.fast_dtype), bool(a._enabled)]
c = torch.autocast("cpu", dtype=torch.bfloat16)
out["cpu_autocast"] = [str(c.fast_dtype), bool(c._enabled)]
print(json.dumps(out))
"""


def last_json(r):
    return json.loads(r.out.strip().splitlines()[-1])


class Switches(unittest.TestCase):
    def test_without_switches_nothing_changes(self):
        plain = last_json(helpers.run(["-c", PROGRAM], check=False))
        checked = helpers.run(["-c", PROGRAM])
        self.assertEqual(last_json(checked), plain)
        self.assertEqual(checked.events("switches"), [])

    def test_attention_kernels_off_one_by_one_and_all(self):
        r = helpers.run(["-c", PROGRAM], env={"RDNA1_SDPA_OFF": "flash"})
        got = last_json(r)
        self.assertEqual((got["flash"], got["efficient"], got["math"]), (False, True, True))
        self.assertEqual(r.events("switches")[0]["sdpa_off"], ["flash"])
        r = helpers.run(["-c", PROGRAM], env={"RDNA1_SDPA_OFF": "flash|efficient|cudnn"})
        got = last_json(r)
        self.assertEqual((got["flash"], got["efficient"], got["math"]), (False, False, True))

    def test_bf16_answered_with_float16_on_the_gpu_only(self):
        r = helpers.run(["-c", PROGRAM], env={"RDNA1_BF16_AS": "float16"})
        got = last_json(r)
        self.assertFalse(got["bf16"])
        self.assertEqual(got["autocast"][0], "torch.float16")
        # The CPU's autocast is not the GPU's: left as the program asked.
        self.assertEqual(got["cpu_autocast"], ["torch.bfloat16", True])
        self.assertEqual(r.events("switches")[0]["bf16_as"], "float16")

    def test_bf16_answered_with_float32_turns_that_autocast_off(self):
        got = last_json(helpers.run(["-c", PROGRAM], env={"RDNA1_BF16_AS": "float32"}))
        self.assertFalse(got["autocast"][1])

    def test_a_value_it_cannot_take_is_said(self):
        r = helpers.run(["-c", PROGRAM], env={"RDNA1_SDPA_OFF": "flash|fast"})
        self.assertEqual(r.rc, 0, r)  # the program runs whatever the check makes of it
        self.assertIn("RDNA1_SDPA_OFF='flash|fast': give some of flash|efficient|cudnn", r.err)
        r = helpers.run(["-c", PROGRAM], env={"RDNA1_BF16_AS": "bfloat16"})
        self.assertIn("RDNA1_BF16_AS='bfloat16': give float16 or float32", r.err)


if __name__ == "__main__":
    unittest.main()
