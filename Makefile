# rdna1-mtype: one entry point.
#   make demo   build everything, boot the test VM, show rdna1ctl status and the MTYPE table
#   make test   every test: Rust checks, cargo tests, checkpatch, VM tests
#   make bench  hook-mechanism benchmark (ns per call, side by side, in the VM)
#   make soak   issue 14's churn proof at full counts (VM case 64, two CPUs; tens of minutes)
#   make install / make uninstall   (DESTDIR=, PREFIX=, PURGE=1, RDNA1CTL=, ZSHCOMPDIR=: see
#                                    install.sh; make install may be run again, e.g. after a
#                                    failed DKMS build: it rebuilds)
# Both install what they need on a fresh machine (Debian 12, root) and cache the test kernel
# in ~/.cache/rdna1-mtype (override with RDNA1_CACHE).

.PHONY: demo test bench soak kernel clean install uninstall

demo:
	bash tests/demo.sh

test:
	bash tests/run.sh

# ns per call of the hooked function per hook mechanism and rdna1_mtype mode, side by side in one
# VM boot: once in guest instructions (QEMU -icount), once in wall-clock time.
bench:
	bash tests/bench.sh

# Random ioctls, policy flips under a million calls, load/unload and amdgpu reload cycles, on
# the KASAN/lockdep/kmemleak kernel (docs/TESTING.md, "Soak").
soak:
	bash tests/soak.sh

install:
	sh install.sh install

uninstall:
	sh install.sh uninstall

kernel:
	bash tests/kernel/build.sh base

clean:
	cargo clean
	rm -rf build
	$(MAKE) -C kmod clean KDIR=$$(bash -c '. tests/kernel/env.sh; kbuild_dir base') || true
