#!/usr/bin/env bash
# Builds the VM's initramfs: busybox, the test kernel's modules (with ours added as a real
# install would, so `modprobe rdna1_mtype` works), rdna1ctl, the in-VM runner and the cases.
# usage: mkinitramfs.sh KBUILD_DIR OUT.cpio
# For another kernel (Debian's, tests/debian/run.sh) KBUILD_DIR is "-" and these say what to use:
#   RDNA1_MODULES_TREE  its lib/modules/RELEASE tree, rdna1_mtype.ko already installed in it
#   RDNA1_TEST_MODULES  a directory with the test modules built for it (harness, decoy)
#   RDNA1_SYSROOT       a root with rdna1ctl installed (by its package): that one is used,
#                       with its libraries
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/kernel/env.sh"
kb=$1 out=$2
if [ -n "${RDNA1_MODULES_TREE:-}" ]; then
	modules=$RDNA1_MODULES_TREE
	rel=$(basename "$modules")
	tests=("$RDNA1_TEST_MODULES"/*.ko)
else
	rel=$(cat "$kb/include/config/kernel.release")
	modules=$kb/staging/lib/modules/$rel
	m=$top/tests/modules
	tests=("$m/harness/rdna1_mtype_harness.ko" "$m/harness/rdna1_mtype_decoy.ko" "$m/harness/amdgpu.ko"
		"$m/harness/rdna1_going_delay.ko"
		"$m/harness/rdna1_no_fastpath.ko" "$m/bench/rdna1_mtype_bench.ko")
fi
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run,etc,lib/modules,opt/rdna1}
cp /bin/busybox "$root/bin/busybox"
cp -a "$modules" "$root/lib/modules/"
if [ -z "${RDNA1_MODULES_TREE:-}" ]; then
	# clang's KASAN gives every string literal of amdgpu a local symbol (.str.N, 12,976 of
	# its 29,328). Loading a module, ftrace looks each of its fentry sites up by a linear
	# scan of its symbols (ftrace_module_enable, test_for_valid_rec: 8,845 x 29,328 steps),
	# most of a load's 86 s under TCG (28 s without them), in every amdgpu load (one to
	# three per boot).
	# Nothing reads these names (KASAN names globals from its own descriptors), and a
	# distribution's amdgpu (no KASAN) has none.
	amd=$root/lib/modules/$rel/kernel/drivers/gpu/drm/amd/amdgpu/amdgpu.ko
	"llvm-objcopy-$LLVM_VERSION" --wildcard --strip-symbol='.str*' "$amd"
	mkdir -p "$root/lib/modules/$rel/updates"
	cp "$top/kmod/rdna1_mtype.ko" "$root/lib/modules/$rel/updates/"
fi
cp "${tests[@]}" "$root/opt/rdna1/"
# The out-of-tree amdgpu (case 10) and the one whose load can be held (case 71), test kernel
# only: each an amdgpu.ko of its own directory.
if [ -z "${RDNA1_MODULES_TREE:-}" ]; then
	mkdir -p "$root/opt/rdna1/oot"
	cp "$m/oot-amdgpu/amdgpu.ko" "$root/opt/rdna1/oot/"
	mkdir -p "$root/opt/rdna1/slow"
	cp "$m/slow-amdgpu/amdgpu.ko" "$root/opt/rdna1/slow/"
fi
# RDNA1_INSTALLED: a `make install DESTDIR=` tree (tests/install/run.sh); case 12 boots with it.
if [ -n "${RDNA1_INSTALLED:-}" ]; then
	cp -a "$RDNA1_INSTALLED" "$root/opt/rdna1/installed"
fi
# RDNA1_DKMS_KO: the module as the real dkms built and installed it (tests/install/run.sh).
if [ -n "${RDNA1_DKMS_KO:-}" ]; then
	mkdir -p "$root/opt/rdna1/dkms"
	cp "$RDNA1_DKMS_KO" "$root/opt/rdna1/dkms/"
fi
depmod -b "$root" "$rel"
for b in rdna1ctl rdna1-abi-probe; do
	cp "$top/target/vm/x86_64-unknown-linux-gnu/release/$b" "$root/usr/bin/$b"
done
# kmod's own modprobe (busybox's ignores softdep) with its libraries, under /opt/kmod so the
# other cases keep busybox's; the shipped files (dist/) beside it (cases 12, 82, 98).
mkdir -p "$root/opt/kmod" "$root/opt/rdna1/dist"
cp /usr/bin/kmod "$root/opt/kmod/kmod"
for t in modprobe depmod lsmod; do ln -s kmod "$root/opt/kmod/$t"; done
for lib in $(ldd /usr/bin/kmod | grep -o '/[^ ]*'); do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done
# After kmod's: a newer root's libc serves both.
if [ -n "${RDNA1_SYSROOT:-}" ]; then
	cp "$RDNA1_SYSROOT/usr/bin/rdna1ctl" "$root/usr/bin/rdna1ctl"
	# Where the loader looks first (no ld.so.cache here), over kmod's older ones.
	for lib in $(chroot "$RDNA1_SYSROOT" ldd /usr/bin/rdna1ctl | grep -o '/[^ ]*'); do
		case $lib in
		*/ld-linux*) to=$lib ;;
		*) to=/lib/x86_64-linux-gnu/${lib##*/} ;;
		esac
		mkdir -p "$root$(dirname "$to")"
		cp -L "$RDNA1_SYSROOT$lib" "$root$to"
	done
fi
cp -r "$top/dist/." "$root/opt/rdna1/dist/"
sed -n 's/^version = "\(.*\)"/\1/p' "$top/Cargo.toml" | head -n1 >"$root/opt/rdna1/version"
cp "$here/init" "$root/init"
cp -r "$here/guest" "$root/opt/rdna1/guest"
cp -r "$here/cases" "$root/opt/rdna1/cases"
chmod +x "$root/init"
(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) >"$out"
echo "initramfs: $(du -h "$out" | cut -f1) ($rel)" >&2
