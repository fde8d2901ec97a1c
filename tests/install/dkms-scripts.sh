#!/usr/bin/env bash
# The DKMS scripts' checks on the host, with the real tools (make test's stage dkms-scripts):
#  1. kmod/dkms-make.sh runs no build tool another user could replace (dkms-toolchain-trust.sh)
#     and hands make those it vetted by their paths, one argument each
#     (dkms-make-vetted-paths.sh); it and kmod/dkms-rust-metadata.sh check kernelver and the
#     .config before using them and refuse a built-in amdgpu (dkms-make-input-validation.sh);
#     kmod/Kbuild takes its RDNA1_* settings only from make's command line
#     (kbuild-command-line-only.sh); kmod/dkms-rust-metadata.sh shares one kernel's metadata
#     between two builds at once and waits for a module build reading it
#     (dkms-metadata-race.sh);
#  2. dkms-make.sh names what is missing: the kernel's rustc, its Rust metadata, CONFIG_RUST, a
#     release before 6.18, a release whose amdgpu BTF was not checked;
#  3. make install as the administrator runs it, twice, after a failed DKMS build, into a private
#     root and DKMS tree; the unit without the module; the cache on uninstall; cargo under sudo
#     (reinstall.sh).
# Each check makes the directories it needs with the owners and modes it needs
# (tests/install/work-dir.sh), wherever the clone is.
# usage: tests/install/dkms-scripts.sh OUT_DIR KBUILD_DIR RDNA1CTL_BINARY   (as root)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/kernel/env.sh"
out=$1 kb=$2 bin=$3
mkdir -p "$out"

log "install: dkms-make.sh runs no build tool another user could replace"
"$top/tests/install/dkms-toolchain-trust.sh" "$out/toolchain-trust" || die "dkms-make.sh trusted a user's toolchain (above)"

log "install: dkms-make.sh passes make the tools it vetted, by their paths, one argument each"
"$top/tests/install/dkms-make-vetted-paths.sh" "$out/vetted-paths" || die "dkms-make.sh passed make a tool to look up, or split its arguments (above)"

log "install: dkms-make.sh checks kernelver and the kernel's config before using them"
"$top/tests/install/dkms-make-input-validation.sh" "$out/input-validation" || die "dkms-make.sh or dkms-rust-metadata.sh used an unchecked input (above)"

log "install: kmod/Kbuild takes its RDNA1_* settings only from make's command line"
"$top/tests/install/kbuild-command-line-only.sh" "$out/kbuild-command-line" || die "kmod/Kbuild took RDNA1_* from the environment (above)"

log "install: two DKMS builds for one kernel share its rebuilt Rust metadata"
"$top/tests/install/dkms-metadata-race.sh" "$out/metadata-race" || die "dkms-rust-metadata.sh: builds for one kernel clobbered each other (above)"

log "install: dkms-make.sh names what is missing"
# Its metadata cache in the test's own directory, not the machine's /var/cache/rdna1-mtype.
export RDNA1_KBUILD_CACHE=$out/kbuild-cache
fk=$out/fake-kernel
rm -rf "$fk" && mkdir -p "$fk/rust"
sed 's/^CONFIG_RUSTC_VERSION_TEXT=.*/CONFIG_RUSTC_VERSION_TEXT="rustc 1.93.0 (abc 2026-01-01)"/' "$kb/.config" >"$fk/.config"
touch "$fk/rust/libkernel.rmeta"
msg=$(sh "$top/kmod/dkms-make.sh" "$fk" 7.2.99 2>&1) && die "dkms-make.sh built with the wrong rustc"
# One line says it all: the rustc to install, how, and what was tried (DKMS's make.log ends in it).
refusal=$(printf '%s\n' "$msg" | tail -n 1)
[[ $refusal == *'"rustc 1.93.0 (abc 2026-01-01)"; no such rustc found'*'apt install rustc-1.93'*'rustup toolchain install 1.93.0'*'RDNA1_RUSTC'* ]] ||
	die "wrong-rustc message, not one line naming the rustc: $msg"
# A distribution's rustc prints more after the date: rustup's build of that version is not it.
sed -i 's/^CONFIG_RUSTC_VERSION_TEXT=.*/CONFIG_RUSTC_VERSION_TEXT="rustc 1.93.0 (abc 2026-01-01) (built from a source tarball)"/' "$fk/.config"
msg=$(sh "$top/kmod/dkms-make.sh" "$fk" 7.2.99 2>&1) && die "dkms-make.sh built with the wrong rustc"
refusal=$(printf '%s\n' "$msg" | tail -n 1)
[[ $refusal == *'(built from a source tarball)"; no such rustc found'*"the distribution's rustc 1.93.0 package"*'Debian apt install rustc;'* &&
	$refusal != *'rustup toolchain install'* ]] || die "distribution-rustc message: $msg"
# The kernel's own rustc (found), no Rust metadata and not a Debian headers tree.
rm "$fk/rust/libkernel.rmeta" && cp "$kb/.config" "$fk/.config"
msg=$(sh "$top/kmod/dkms-make.sh" "$fk" 7.2.99 2>&1) && die "dkms-make.sh built without the kernel's Rust metadata"
[[ $msg == *'apt install linux-lib-rust-7.2.99'* ]] || die "missing-rmeta message: $msg"
sed -i 's/^CONFIG_RUST=y/# CONFIG_RUST is not set/' "$fk/.config"
msg=$(sh "$top/kmod/dkms-make.sh" "$fk" 7.2.99 2>&1) && die "dkms-make.sh built for a kernel without Rust"
[[ $msg == *'without CONFIG_RUST'* ]] || die "no-Rust message: $msg"
msg=$(sh "$top/kmod/dkms-make.sh" "$kb" 6.12.48+deb13-amd64 2>&1) && die "dkms-make.sh built for 6.12"
[[ $msg == *'predates 6.18: its gmc_v10_0_get_vm_pte is (adev, mapping, flags)'* ]] || die "6.12 message: $msg"
# 7.0 (Ubuntu's): buildable only with the contract read from its BTF, and it is not installed here.
msg=$(sh "$top/kmod/dkms-make.sh" "$kb" 7.0.0-14-generic 2>&1) && die "dkms-make.sh built for 7.0 unchecked"
[[ $msg == *'outside 7.2 to 7.3, whose source was verified, and its amdgpu BTF was not checked'* ]] ||
	die "7.0 message: $msg"

log "install: make install twice (after a failed DKMS build), the unit without the module, uninstall's cache, cargo under sudo"
"$top/tests/install/reinstall.sh" "$out/reinstall" "$kb" "$bin" || die "make install run again, or its unit, cache or cargo (above)"

log "dkms scripts: toolchain trust, vetted paths, inputs, Kbuild, metadata, messages, reinstall passed"
