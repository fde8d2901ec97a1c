# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by the DKMS script tests (bash): their work directory, made fresh, and checked to be
# root's alone up to /. kmod/dkms-make.sh trusts only tools whose every directory is root's and
# writable by nobody else, so in any other place a fake tool would be refused for where it is,
# not for what it is, and a test could pass for the wrong reason. Sets work (its real path),
# fails=0 and bad() (counts a failure and says it); debian_headers (below).
# usage: . work-dir.sh; work_dir NAME DIR [SUBDIR...]
work_dir() {
	local name=$1 d o
	[ "$(id -u)" = 0 ] || { echo "$name: needs root (files owned by another user)" >&2; exit 1; }
	rm -rf "$2" && mkdir -p "$2"
	chmod 755 "$2"
	work=$(cd "$2" && pwd -P)
	shift 2
	for d in "$@"; do mkdir -p "$work/$d"; done
	d=$work
	while [ "$d" != / ]; do
		d=$(dirname "$d")
		o=$(stat -c '%u %a' "$d")
		[ "${o%% *}" = 0 ] && (((8#${o#* } & 8#022) == 0)) ||
			{ echo "$name: $d is not root's alone ($o): use a WORK_DIR that is" >&2; exit 1; }
	done
	fails=0
}
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# debian_headers RUSTC_TEXT: $work/headers laid out as Debian's linux-headers (a Makefile naming
# KBUILD_OUTPUT, .kernelvariables, a .config of a Rust kernel with amdgpu as a module, no Rust
# metadata), and $work/src/linux-source-7.2.tar.xz, the source its metadata is rebuilt from.
debian_headers() {
	headers=$work/headers
	mkdir -p "$headers/scripts"
	printf 'KBUILD_OUTPUT=/somewhere\ninclude /usr/src/common/Makefile\n' >"$headers/Makefile"
	echo 'CC=gcc' >"$headers/.kernelvariables"
	printf 'CONFIG_RUST=y\nCONFIG_RUSTC_VERSION_TEXT="%s"\nCONFIG_DRM_AMDGPU=m\n' "$1" >"$headers/.config"
	mkdir -p "$work/tree/linux-source-7.2" "$work/src"
	touch "$work/tree/linux-source-7.2/Makefile"
	tar -cJf "$work/src/linux-source-7.2.tar.xz" -C "$work/tree" linux-source-7.2
}
