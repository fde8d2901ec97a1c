"""Tests of rdna1ctl's in-process check (dist/field-kit/python/rdna1_check/) under a real PyTorch
without a GPU (Debian's CPU build in the sid tools root; tests/field-kit/check-python.sh runs
them): each part on its own (compare, families, references, slicing), then whole programs in
processes of their own, with faults injected below torch (tests/faults), with and without the
check. With RDNA1_CHECK_SELF_TEST_CPU=1 the CPU stands for the GPU."""
