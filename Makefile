# rdna1-mtype: one entry point.
#   make demo   build everything, boot the test VM, show rdna1ctl status and the MTYPE table
#   make test   every test: Rust checks, cargo tests, checkpatch, VM tests
# Both install what they need on a fresh machine (Debian 12, root) and cache the test kernel
# in ~/.cache/rdna1-mtype (override with RDNA1_CACHE).

.PHONY: demo test kernel clean

demo:
	bash tests/demo.sh

test:
	bash tests/run.sh

kernel:
	bash tests/kernel/build.sh base

clean:
	cargo clean
	rm -rf build
	$(MAKE) -C kmod clean KDIR=$$(bash -c '. tests/kernel/env.sh; kbuild_dir base') || true
