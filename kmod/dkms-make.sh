#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# DKMS's build step (dkms.conf MAKE[0]): builds rdna1_mtype.ko with the toolchain the target
# kernel was built with, or fails naming exactly what is missing. A Rust module must be built
# by the very rustc that built the kernel (its .rmeta files are rustc-version specific) and, on
# a clang kernel, with LLVM.
# usage: dkms-make.sh KERNEL_BUILD_DIR KERNELRELEASE
# RDNA1_RUSTC=/path/to/rustc overrides the search.
set -eu
die() { printf 'rdna1-mtype: %s\n' "$*" >&2; exit 1; }
# DKMS appends make variables of its own for a clang-built kernel ("CC=clang LD=ld.lld ...",
# resolved through PATH): ignored, the LLVM tools are chosen and vetted below.
[ $# -ge 2 ] || die "usage: dkms-make.sh KERNEL_BUILD_DIR KERNELRELEASE"
kdir=$1
rel=$2
# The release names paths and goes into messages and make's arguments: only a release's own
# characters (uname -r's: digits, letters, . _ + ~ -; at most 64, the kernel's limit), before
# anything uses it. The letters are spelled out: a range like a-z follows the locale.
alnum=0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz
case $rel in
"" | *[!"$alnum"._+~-]*) die "\"$rel\" is not a kernel release (KERNELRELEASE, DKMS's kernelver: digits, letters, . _ + ~ -): refusing it" ;;
esac
kmaj=${rel%%.*}
kmin=${rel#*.}
kmin=${kmin%%[!0123456789]*}
case $kmaj in "" | *[!0123456789]* | "$rel") kmaj="" ;; esac
[ ${#rel} -le 64 ] && [ -n "$kmaj" ] && [ -n "$kmin" ] && [ ${#kmaj} -le 4 ] && [ ${#kmin} -le 4 ] ||
	die "\"$rel\" is not a kernel release (KERNELRELEASE, DKMS's kernelver: MAJOR.MINOR then digits, letters, . _ + ~ -, at most 64): refusing it"
here=$(cd "$(dirname "$0")" && pwd)
# What dkms-rust-metadata.sh keeps the rebuilt Rust metadata in, and the lock of each kernel's.
cache=${RDNA1_KBUILD_CACHE:-/var/cache/rdna1-mtype/kbuild}
case $cache in
/*) ;;
*) die "RDNA1_KBUILD_CACHE=$cache is not an absolute path" ;;
esac
case $cache in *[!"$alnum"/._+~-]*) die "RDNA1_KBUILD_CACHE=$cache: a path of digits, letters and / . _ + ~ - only (it goes into make's arguments)" ;; esac

# This runs as root (DKMS; dpkg runs DKMS at every kernel upgrade), so it runs no tool that
# anyone else could have put there (the helpers' variables start with _: sh has no locals).
# root_only PATH: PATH and every directory above it, as written (whoever can write the
# directory of a link on the way can repoint it) and resolved, are owned by root and writable
# by no group or other user.
root_only() {
	for _d in "$1" "$(readlink -f "$1" 2>/dev/null)"; do
		[ -n "$_d" ] || return 1
		while :; do
			_o=$(stat -L -c '%u %a' "$_d" 2>/dev/null) || return 1
			[ "${_o%% *}" = 0 ] && [ $((0${_o#* } & 022)) -eq 0 ] || return 1
			[ "$_d" != / ] || break
			_d=$(dirname "$_d")
		done
	done
}
# trusted CMD: prints CMD's real path if CMD (found as the shell finds it), each link on the
# way to the file and the file itself are root_only, and the file is not rustup. A rustup proxy
# (rustc, cargo, ... in ~/.cargo/bin) runs whatever toolchain the environment picks, so it is
# no tool of its own; rustup makes its proxies as hard links to itself (symbolic links where
# hard ones fail), so a file that is rustup may have any name. The rule: the file's real name
# is not rustup, and the file has one name only (link count 1): its other names cannot be
# listed without searching every file system, and one of them may be rustup. Toolchains are
# single files whose other names are symbolic links (Debian's /usr/bin/rustc-1.NN,
# clang-NN, ld.lld -> lld); one deduplicated by hard links (an ostree or Nix store) is
# refused too: name it with RDNA1_RUSTC. A tool is then run by its real path (a link swapped
# later changes nothing), an LLVM tool by a vetted directory (below).
trusted() {
	_t=$(command -v "$1" 2>/dev/null) || return 1
	case $_t in /*) ;; *) return 1 ;; esac
	_n=0
	while [ -L "$_t" ]; do
		_n=$((_n + 1))
		[ $_n -le 40 ] && root_only "$(dirname "$_t")" || return 1
		_l=$(readlink "$_t") || return 1
		case $_l in /*) _t=$_l ;; *) _t=$(dirname "$_t")/$_l ;; esac
	done
	_t=$(readlink -f "$_t" 2>/dev/null) || return 1
	[ -f "$_t" ] && [ -x "$_t" ] || return 1
	[ "${_t##*/}" != rustup ] || return 1
	[ "$(stat -c %h "$_t")" = 1 ] || return 1
	root_only "$_t" || return 1
	echo "$_t"
}

# The kernel's configuration, read before any tool runs. Each value used is checked for its
# shape first: the config is a file of the headers, and these values reach messages, file
# names and shell arithmetic.
cfg=$kdir/.config
[ -r "$cfg" ] || cfg=$kdir/include/config/auto.conf
[ -r "$cfg" ] || die "no kernel config in $kdir (.config or include/config/auto.conf): install the headers of $rel"
conf() { sed -n "s/^$1=\"\{0,1\}\([^\"]*\)\"\{0,1\}\$/\1/p" "$cfg" | head -n1; }
[ "$(conf CONFIG_RUST)" = y ] || die "Linux $rel is built without CONFIG_RUST: it cannot load Rust modules"
# dkms.conf's BUILD_EXCLUSIVE_CONFIG can only ask that amdgpu be set (=y or =m: dkms greps for
# "^CONFIG_X=[ym]"); the module arms its probe when the amdgpu module loads, which a built-in
# one never does.
[ "$(conf CONFIG_DRM_AMDGPU)" != y ] ||
	die "amdgpu is built into this kernel (CONFIG_DRM_AMDGPU=y): rdna1_mtype hooks it only as a module (its probe arms when the amdgpu module loads); use a kernel with CONFIG_DRM_AMDGPU=m"
want=$(conf CONFIG_RUSTC_VERSION_TEXT)
[ -n "$want" ] || die "Linux $rel's config has no CONFIG_RUSTC_VERSION_TEXT: cannot tell which rustc built it"
# A version text: "rustc X.Y.Z", then words of digits, letters and ( ) / , : . _ + ~ - (Arch's
# "(Arch Linux rust 1:1.87.0-1)"), nothing a shell or sed would read.
vtext=" ()/,:$alnum._+~-"
case $want in
"rustc "[0123456789]*.[0123456789]*.[0123456789]*) ;;
*) die "Linux $rel's CONFIG_RUSTC_VERSION_TEXT is not a rustc version (\"rustc X.Y.Z ...\"): the headers' config is damaged" ;;
esac
case $want in *[!"$vtext"]*) die "Linux $rel's CONFIG_RUSTC_VERSION_TEXT has characters no rustc version has: the headers' config is damaged" ;; esac
num=$(echo "$want" | sed -n 's/^rustc \([0-9]*\.[0-9]*\)\.[0-9]*.*/\1/p')
bindgen_want=$(conf CONFIG_BINDGEN_VERSION_TEXT)
case $bindgen_want in
"" | "bindgen "[0123456789]*) ;;
*) die "Linux $rel's CONFIG_BINDGEN_VERSION_TEXT is not a bindgen version (\"bindgen X.Y.Z\"): the headers' config is damaged" ;;
esac
case $bindgen_want in *[!"$vtext"]*) die "Linux $rel's CONFIG_BINDGEN_VERSION_TEXT has characters no bindgen version has: the headers' config is damaged" ;; esac
clang_major=""
if [ "$(conf CONFIG_CC_IS_CLANG)" = y ]; then
	# Digits only, before arithmetic: $((...)) evaluates what it is given.
	v=$(conf CONFIG_CLANG_VERSION)
	case $v in
	"" | *[!0123456789]*) die "Linux $rel's CONFIG_CLANG_VERSION is \"$v\", not a number (MAJOR*10000+MINOR*100+PATCH): the headers' config is damaged" ;;
	esac
	[ ${#v} -le 7 ] || die "Linux $rel's CONFIG_CLANG_VERSION $v is not a clang version: the headers' config is damaged"
	clang_major=$((v / 10000))
fi

# Releases: 6.18 and later (gmc_v10_0_get_vm_pte's signature in the contract); outside 7.2
# and 7.3, whose source was verified, only with the contract checked on the kernel's BTF
# (below), which the module is then built with (docs/KERNELS.md).
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

# rustc: the override (used as given: the administrator named it), then, if trusted, PATH's
# rustc, Ubuntu's versioned rustc-1.NN, and root's own rustup toolchains; never a user's
# (SUDO_HOME, CARGO_HOME: see trusted above).
found=""
tried=""
for c in ${RDNA1_RUSTC:-} rustc "rustc-$num" "/usr/lib/rust-$num/bin/rustc" /root/.rustup/toolchains/"$num"*/bin/rustc; do
	if [ "$c" = "${RDNA1_RUSTC:-}" ]; then
		# make gets the file that answered, not a name to look up again.
		t=$(command -v "$c" 2>/dev/null) || t=$c
	elif ! t=$(trusted "$c"); then
		p=$(command -v "$c" 2>/dev/null) && tried="$tried${tried:+; }$p: not used (a rustup proxy: a link to rustup, symbolic or hard, or any file of several names; or not root's: a file or directory on the way is another user's or writable by others)"
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
case $found in *[!"$alnum"/._+~-]*) die "the rustc's path $found has characters make cannot take in RUSTC=: install it elsewhere" ;; esac

# bindgen, by its vetted path only (make would otherwise look bindgen up on PATH): the one of
# the kernel's CONFIG_BINDGEN_VERSION_TEXT, else any trusted one (the metadata rebuild below
# checks that the configuration it gives is the kernel's).
bindgen=""
bindgen_other=""
for b in bindgen /root/.cargo/bin/bindgen; do
	b=$(trusted "$b") || continue
	case $b in *[!"$alnum"/._+~-]*) continue ;; esac
	if [ -n "$bindgen_want" ] && [ "$("$b" --version 2>/dev/null)" = "$bindgen_want" ]; then
		bindgen=$b
		break
	fi
	bindgen_other=${bindgen_other:-$b}
done
bindgen=${bindgen:-$bindgen_other}

# The kernel's own Rust crates, built with it: Debian's linux-headers leave them out, so they
# are rebuilt from the matching linux-source (dkms-rust-metadata.sh); elsewhere the message
# names the package that has them. The rebuilt metadata is read by the module build: the lock
# of this kernel's metadata (the one dkms-rust-metadata.sh takes) is held, exclusively, from
# the rebuild to the end of make (fd 9, which make inherits), so no other build for this
# kernel replaces the metadata while this one reads it.
if [ -e "$kdir/rust/libkernel.rmeta" ] || [ -e "$kdir/rust/kernel.rmeta" ]; then
	echo "rdna1-mtype: Linux $rel: using the Rust metadata its headers ship ($kdir/rust)" >&2
else
	mkdir -p "$cache"
	exec 9>"$cache/.$rel.lock"
	flock 9 || die "cannot lock $cache/.$rel.lock"
	# bindgen may be "": then it says so, after what it checks first (a Debian tree, its source).
	kdir=$(sh "$here/dkms-rust-metadata.sh" "$kdir" "$rel" "$found" "$bindgen")
fi

# The make arguments, one each (values may not split): KDIR, the vetted tools by their paths,
# the contract read from the BTF.
set -- KDIR="$kdir" RUSTC="$found"
[ -z "$bindgen" ] || set -- "$@" BINDGEN="$bindgen"
# shellcheck disable=SC2086 # btf_args: words checked above to be of digits, letters, "=", ","
[ -z "$btf_args" ] || set -- "$@" $btf_args

# A clang-built kernel builds its modules with the same LLVM major version. Kbuild takes it as
# LLVM=DIR/ (the kernel's Makefile since 5.18: DIR/clang, DIR/ld.lld, DIR/llvm-ar, ...), so
# every LLVM tool is run from the one directory vetted here; LLVM=1 or LLVM=-NN would look
# each up on PATH. The tools are run by the links in that directory (ld.lld, llvm-strip are
# one binary that reads the name it was run by): each is trusted and, with the directory,
# root's. The candidates: Debian's and Ubuntu's /usr/lib/llvm-NN/bin, Gentoo's
# /usr/lib/llvm/NN/bin, and the directories of clang-NN and clang, as found on PATH and
# resolved (Arch, Fedora: /usr/bin).
llvm_tools="clang ld.lld llvm-ar llvm-nm llvm-objcopy llvm-objdump llvm-readelf llvm-strip llvm-link"
if [ -n "$clang_major" ]; then
	major=$clang_major
	llvm=""
	dirs="/usr/lib/llvm-$major/bin /usr/lib/llvm/$major/bin"
	for c in "clang-$major" clang; do
		p=$(command -v "$c" 2>/dev/null) || continue
		case $p in /*) dirs="$dirs $(dirname "$p") $(dirname "$(readlink -f "$p")")" ;; esac
	done
	for d in $dirs; do
		d=$(readlink -f "$d" 2>/dev/null) || continue
		[ -d "$d" ] && root_only "$d" || continue
		case $d in *[!"$alnum"/._+~-]*) continue ;; esac
		ok=yes
		for tool in $llvm_tools; do
			trusted "$d/$tool" >/dev/null || { ok=no; break; }
		done
		# clang++ (HOSTCXX) is run only if there is one: then it is vetted too.
		[ ! -e "$d/clang++" ] || trusted "$d/clang++" >/dev/null || ok=no
		[ $ok = yes ] && "$d/clang" --version 2>/dev/null | grep -q "version $major\." || continue
		llvm=$d/
		break
	done
	[ -n "$llvm" ] ||
		die "Linux $rel was built with clang $major: install clang-$major, lld-$major and llvm-$major (root-owned, as from the distribution's packages: one directory with $llvm_tools; tried: $dirs)"
	set -- "$@" LLVM="$llvm"
fi
mk=$(trusted make) || die "no make owned by root on PATH (a file or directory on the way is another user's or writable by others): install make"
shown=$(printf ' %s' "$@")
echo "rdna1-mtype: building for $rel with $found ($want)${shown#* RUSTC="$found"}" >&2
exec "$mk" -C "$here" "$@"
