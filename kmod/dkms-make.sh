#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# DKMS's build step (dkms.conf MAKE[0]): builds rdna1_mtype.ko with the toolchain the target
# kernel was built with, or fails naming exactly what is missing. A Rust module must be built
# by the very rustc that built the kernel (its .rmeta files are rustc-version specific) and, on
# a clang kernel, with LLVM.
# usage: dkms-make.sh KERNEL_BUILD_DIR KERNELRELEASE
# RDNA1_RUSTC=/path/to/rustc overrides the search.
set -eu
kdir=$1
rel=$2
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "rdna1-mtype: $*" >&2; exit 1; }
# This runs as root (DKMS; dpkg runs DKMS at every kernel upgrade), so it runs no tool that
# anyone else could have put there. trusted CMD: prints CMD's real path (symlinks resolved)
# if that file and every directory above it are owned by root and writable by no group or
# other user; a rustup proxy (a link to rustup: the environment picks what it runs) is not
# a tool of its own. The tools are then run by that real path, so a link swapped later
# changes nothing.
trusted() {
	t=$(command -v "$1" 2>/dev/null) || return 1
	t=$(readlink -f "$t" 2>/dev/null) || return 1
	[ -f "$t" ] && [ -x "$t" ] || return 1
	[ "${t##*/}" != rustup ] || return 1
	d=$t
	while :; do
		o=$(stat -c '%u %a' "$d") || return 1
		[ "${o%% *}" = 0 ] && [ $((0${o#* } & 022)) -eq 0 ] || return 1
		[ "$d" != / ] || break
		d=$(dirname "$d")
	done
	echo "$t"
}

# Releases: 6.18 and later (gmc_v10_0_get_vm_pte's signature in the contract); outside 7.2
# and 7.3, whose source was verified, only with the contract checked on the kernel's BTF
# (below), which the module is then built with (docs/KERNELS.md).
kmaj=$(echo "$rel" | sed -n 's/^\([0-9]*\)\..*/\1/p')
kmin=$(echo "$rel" | sed -n 's/^[0-9]*\.\([0-9]*\).*/\1/p')
[ -n "$kmaj" ] && [ -n "$kmin" ] || die "cannot read a Linux version in \"$rel\""
if [ "$kmaj" -lt 6 ] || { [ "$kmaj" -eq 6 ] && [ "$kmin" -lt 18 ]; }; then
	die "Linux $rel predates 6.18: its gmc_v10_0_get_vm_pte is (adev, mapping, flags), which the hook cannot read (docs/KERNELS.md)"
fi
case $rel in
7.2 | 7.2.* | 7.2-* | 7.3 | 7.3.* | 7.3-*) verified=yes ;;
*) verified=no ;;
esac
# The hook's contract, read from this kernel's own amdgpu BTF (docs/KERNELS.md); rdna1ctl
# is installed with the module (make install, the Debian package).
# A kernel tree that is not installed (a build for later, a test) has no files to read.
ctl=${RDNA1CTL:-$(trusted rdna1ctl || true)}
btf_args=""
if [ -z "$ctl" ]; then
	echo "rdna1-mtype: rdna1ctl not installed: the hook's contract is not checked before the build" >&2
elif [ -d "/lib/modules/$rel/kernel" ] || [ -d "/usr/lib/modules/$rel/kernel" ]; then
	# Refuse on a difference in the contract; files check-kernel cannot read (an lz4 image,
	# say) are not a verdict: the module's own release check still applies at load.
	rc=0
	json=$("$ctl" --json check-kernel "$rel" 2>&1) || rc=$?
	case "$rc:$json" in
	0:*'"basis":"btf"'*)
		echo "rdna1-mtype: Linux $rel: the hook's contract holds (rdna1ctl check-kernel)" >&2
		# What the module is built with (kmod/Kbuild): the checked amdgpu's BTF id, its
		# amdgpu_bo/TTM layout, where amdgpu_vm keeps is_compute_context (a one-byte bool) and
		# task_info, and where amdgpu_task_info keeps tgid (a pid_t) and process_name
		# (char[16]), types checked by check-kernel, from its JSON (docs/CLI.md; one line, these
		# keys occur once).
		# Only values of the expected shape: they become make variables and -D flags.
		val() { printf '%s\n' "$json" | sed -n "s/.*\"$1\":\"\{0,1\}\([^\",}]*\).*/\1/p"; }
		off() { val "$1" | sed -n 's/^\([0-9][0-9]*\)$/\1/p'; }
		btf_id=$(val amdgpu_btf_id | sed -n 's/^\(0x[0-9a-f]\{16\}\)$/\1/p')
		layout=$(val bo_layout | sed -n 's/^size=\([0-9]*\) preferred_domains=\([0-9]*\) tbo=\([0-9]*\) flags=\([0-9]*\)$/\1,\2,\3,\4/p')
		ttm_size=$(off 'sizeof(struct ttm_buffer_object)')
		ttm_type=$(off 'ttm_buffer_object\.type')
		vm_compute=$(off 'amdgpu_vm\.is_compute_context')
		vm_task_info=$(off 'amdgpu_vm\.task_info')
		task_tgid=$(off 'amdgpu_task_info\.tgid')
		task_name=$(off 'amdgpu_task_info\.process_name')
		[ -n "$btf_id" ] && [ -n "$layout" ] && [ -n "$ttm_size" ] && [ -n "$ttm_type" ] ||
			die "rdna1ctl check-kernel $rel gave no BTF id or layout: $json"
		[ -n "$vm_compute" ] ||
			die "rdna1ctl check-kernel $rel gave no offset of amdgpu_vm.is_compute_context (an rdna1ctl older than this module?): $json"
		[ -n "$vm_task_info" ] && [ -n "$task_tgid" ] && [ -n "$task_name" ] ||
			die "rdna1ctl check-kernel $rel gave no offset of amdgpu_vm.task_info, amdgpu_task_info.tgid or amdgpu_task_info.process_name (an rdna1ctl older than this module? install the rdna1ctl of this release): $json"
		btf_args="RDNA1_AMDGPU_BTF_ID=$btf_id RDNA1_BTF_BO_LAYOUT=$layout RDNA1_BTF_TTM_BO_SIZE=$ttm_size RDNA1_BTF_TTM_BO_TYPE=$ttm_type RDNA1_BTF_VM_COMPUTE=$vm_compute RDNA1_BTF_VM_TASK_INFO=$vm_task_info RDNA1_BTF_TASK_INFO_TGID=$task_tgid RDNA1_BTF_TASK_INFO_NAME=$task_name"
		;;
	0:*) echo "rdna1-mtype: Linux $rel: the hook's contract holds (rdna1ctl check-kernel, no BTF: by its verified source)" >&2 ;;
	*'"basis":"unreadable"'*)
		echo "rdna1-mtype: could not read Linux $rel's amdgpu BTF, the contract is not checked: $json" >&2 ;;
	*)
		"$ctl" check-kernel "$rel" >&2 || true
		die "Linux $rel cannot be hooked (rdna1ctl check-kernel $rel, above)" ;;
	esac
else
	echo "rdna1-mtype: Linux $rel is not installed here: the hook's contract is not checked before the build" >&2
fi
[ $verified = yes ] || [ -n "$btf_args" ] ||
	die "Linux $rel is outside 7.2 to 7.3, whose source was verified, and its amdgpu BTF was not checked (above: rdna1ctl missing, the kernel not installed, or its amdgpu without BTF): the module is built for it only with the contract read from that BTF (docs/KERNELS.md)."
cfg=$kdir/.config
[ -r "$cfg" ] || cfg=$kdir/include/config/auto.conf
[ -r "$cfg" ] || die "no kernel config in $kdir (.config or include/config/auto.conf): install the headers of $rel"
conf() { sed -n "s/^$1=\"\{0,1\}\([^\"]*\)\"\{0,1\}\$/\1/p" "$cfg" | head -n1; }

[ "$(conf CONFIG_RUST)" = y ] || die "Linux $rel is built without CONFIG_RUST: it cannot load Rust modules"
want=$(conf CONFIG_RUSTC_VERSION_TEXT)
[ -n "$want" ] || die "Linux $rel's config has no CONFIG_RUSTC_VERSION_TEXT: cannot tell which rustc built it"
num=$(echo "$want" | sed -n 's/^rustc \([0-9]*\.[0-9]*\)\.[0-9]*.*/\1/p')

# rustc: the override (used as given: the administrator named it), then, if trusted, PATH's
# rustc, Ubuntu's versioned rustc-1.NN, and root's own rustup toolchains; never a user's
# (SUDO_HOME, CARGO_HOME: see trusted above).
found=""
tried=""
for c in ${RDNA1_RUSTC:-} rustc "rustc-$num" "/usr/lib/rust-$num/bin/rustc" /root/.rustup/toolchains/"$num"*/bin/rustc; do
	if [ "$c" = "${RDNA1_RUSTC:-}" ]; then
		t=$c
	elif ! t=$(trusted "$c"); then
		p=$(command -v "$c" 2>/dev/null) && tried="$tried${tried:+; }$p: not used (a rustup proxy, or not root's: a file or directory above it is another user's or writable by others)"
		continue
	fi
	v=$("$t" --version 2>/dev/null) || continue
	tried="$tried${tried:+; }$c: $v"
	if [ "$v" = "$want" ]; then
		found=$t
		break
	fi
done
# One line in DKMS's make.log: the exact rustc, how to get it, what was tried. rustup has only
# the Rust project's builds ("rustc X.Y.Z (hash date)"); a distribution's build says more after
# the date and only that distribution's package prints the same text.
if [ -z "$found" ]; then
	full=$(echo "$want" | cut -d' ' -f2)
	case $want in
	"rustc $full ("*") ("*) how="the distribution's rustc $full package that built the kernel (Ubuntu apt install rustc-$num; Debian apt install rustc; Arch rust $full, from the Arch Linux Archive once rust has moved on); rustup's $full prints another text" ;;
	"rustc $full ("*")") how="Ubuntu apt install rustc-$num; elsewhere, as root, rustup toolchain install $full" ;;
	*) how="the rustc that prints exactly that" ;;
	esac
	die "Linux $rel was built by \"$want\"; no such rustc found. Install it: $how; or set RDNA1_RUSTC=/path/to/rustc. Tried: ${tried:-no rustc on PATH}."
fi

args="KDIR=$kdir RUSTC=$found $btf_args"
bindgen_want=$(conf CONFIG_BINDGEN_VERSION_TEXT)
bindgen=""
for b in bindgen /root/.cargo/bin/bindgen; do
	b=$(trusted "$b") || continue
	if [ -n "$bindgen_want" ] && [ "$("$b" --version 2>/dev/null)" = "$bindgen_want" ]; then
		bindgen=$b
		args="$args BINDGEN=$b"
		break
	fi
done

# The kernel's own Rust crates, built with it: Debian's linux-headers leave them out, so they
# are rebuilt from the matching linux-source (dkms-rust-metadata.sh); elsewhere the message
# names the package that has them.
if [ -e "$kdir/rust/libkernel.rmeta" ] || [ -e "$kdir/rust/kernel.rmeta" ]; then
	echo "rdna1-mtype: Linux $rel: using the Rust metadata its headers ship ($kdir/rust)" >&2
else
	kdir=$(sh "$here/dkms-rust-metadata.sh" "$kdir" "$rel" "$found" "${bindgen:-bindgen}")
	args="KDIR=$kdir RUSTC=$found $btf_args${bindgen:+ BINDGEN=$bindgen}"
fi

# A clang-built kernel builds its modules with the same LLVM major version.
if [ "$(conf CONFIG_CC_IS_CLANG)" = y ]; then
	major=$(($(conf CONFIG_CLANG_VERSION) / 10000))
	if trusted "clang-$major" >/dev/null && trusted "ld.lld-$major" >/dev/null; then
		args="$args LLVM=-$major"
	elif cl=$(trusted clang) && trusted ld.lld >/dev/null && "$cl" --version 2>/dev/null | grep -q "version $major\."; then
		args="$args LLVM=1"
	else
		die "Linux $rel was built with clang $major: install clang-$major, lld-$major and llvm-$major (root-owned, as from the distribution's packages)"
	fi
fi
echo "rdna1-mtype: building for $rel with $found ($want)${args#*RUSTC=$found}" >&2
# shellcheck disable=SC2086 # args is a list of make variables without spaces in values
exec make -C "$here" $args
