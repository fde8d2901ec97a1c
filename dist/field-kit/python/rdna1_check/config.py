"""What rdna1ctl asked of the check, read once from the environment (sitecustomize.py loads the
package; rdna1ctl's search, report and run set these for the command)."""

import os
from dataclasses import dataclass

from . import switches

# The check looks at the first optimizer steps: it steps aside once this many steps in a row
# brought no new GPU op (each distinct op is checked the first time it is seen).
STEPS_WITHOUT_NEW = 2
# ... and after this many steps whatever they brought (a program whose every step is new,
# e.g. variable sequence lengths, is then running with the check out of its way).
MAX_STEPS = 20
# Seconds of CPU references at most per process: ops first seen after that are listed as
# unchecked ("the check's time was spent"), never counted as right.
BUDGET_S = 60.0
# Without an optimizer (inference, a hand-written update): the check steps aside after this
# many calls in a row with no new op.
CALLS_WITHOUT_NEW = 20_000


@dataclass(frozen=True)
class Settings:
    """RDNA1_CHECK_DIR (where records go), RDNA1_CHECK=numerics (check numbers, not only record
    ops), RDNA1_MIOPEN_BYPASS=1, RDNA1_MIOPEN_BYPASS_KINDS="A|B", RDNA1_CHECK_SELF_TEST_CPU=1
    (the CPU stands for the GPU: tests only), RDNA1_CHECK_TEST_WRONG (results made wrong on
    purpose: tests only), RDNA1_CHECK_STEPS / RDNA1_CHECK_BUDGET_S (how long it looks)."""

    directory: str = None
    numerics: bool = False
    bypass: bool = False
    bypass_kinds: tuple = ()
    sdpa_off: tuple = ()
    bf16_as: str = None
    self_test_cpu: bool = False
    inject: tuple = None
    steps_without_new: int = STEPS_WITHOUT_NEW
    max_steps: int = MAX_STEPS
    budget_s: float = BUDGET_S
    calls_without_new: int = CALLS_WITHOUT_NEW
    compiled: bool = True

    @property
    def wanted(self):
        """Whether rdna1ctl asked for anything at all."""
        return bool(self.directory or self.bypass or self.bypass_kinds or self.sdpa_off
                    or self.bf16_as)


def parse_inject(text):
    """RDNA1_CHECK_TEST_WRONG: KIND:DIRECTION:FACTOR, e.g. "1x1:weight:1.01" (weight gradients
    of ops whose kind contains "1x1" made 1% off) or "BatchNorm:output:0.99" or "mm:output:0"
    (a GEMM writing zeros)."""
    if not text:
        return None
    try:
        kind, where, factor = text.rsplit(":", 2)
        if where not in ("output", "weight"):
            raise ValueError(where)
        return kind, where, float(factor)
    except ValueError:
        raise ValueError(f"RDNA1_CHECK_TEST_WRONG={text!r}: give KIND:output|weight:FACTOR")


def _number(env, name, default, kind):
    text = env.get(name)
    if not text:
        return default
    try:
        value = kind(text)
    except ValueError:
        raise ValueError(f"{name}={text!r}: give a number")
    if value <= 0:
        raise ValueError(f"{name}={text!r}: give a number above 0")
    return value


def from_environment(env=None):
    """The Settings the environment asks for."""
    env = os.environ if env is None else env
    kinds = tuple(k.strip() for k in env.get("RDNA1_MIOPEN_BYPASS_KINDS", "").split("|")
                  if k.strip())
    return Settings(
        directory=env.get("RDNA1_CHECK_DIR") or None,
        numerics=env.get("RDNA1_CHECK") == "numerics",
        bypass=env.get("RDNA1_MIOPEN_BYPASS") == "1",
        bypass_kinds=kinds,
        sdpa_off=switches.parse_sdpa(env.get("RDNA1_SDPA_OFF")),
        bf16_as=switches.parse_bf16(env.get("RDNA1_BF16_AS")),
        self_test_cpu=env.get("RDNA1_CHECK_SELF_TEST_CPU") == "1",
        inject=parse_inject(env.get("RDNA1_CHECK_TEST_WRONG")),
        steps_without_new=_number(env, "RDNA1_CHECK_STEPS", STEPS_WITHOUT_NEW, int),
        budget_s=_number(env, "RDNA1_CHECK_BUDGET_S", BUDGET_S, float),
        compiled=env.get("RDNA1_CHECK_COMPILED", "1") != "0",
    )
