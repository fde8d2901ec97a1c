# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by the DKMS script tests (bash): their work directory, made fresh, root's alone up to
# /. kmod/dkms-make.sh trusts only tools whose every directory is root's and writable by nobody
# else, so in any other place a fake tool would be refused for where it is, not for what it is,
# and a test could pass for the wrong reason. The clone may sit anywhere (under /tmp, whose
# 1777 fails that rule; under a 0700 home): where DIR's directories are not root's alone, the
# work directory is made with mktemp in the first place that is (root_only_places), DIR holds
# a note naming it, and it is removed when the test passes (kept and named when it fails).
# Sets work (its real path), fails=0 and bad() (counts a failure and says it); debian_headers
# (below).
# usage: . work-dir.sh; work_dir NAME DIR [SUBDIR...]
# root_only DIR: DIR and every directory above it are root's and writable by nobody else.
root_only() {
	local d o
	d=$(cd "$1" 2>/dev/null && pwd -P) || return 1
	while :; do
		o=$(stat -c '%u %a' "$d") || return 1
		[ "${o%% *}" = 0 ] && (((8#${o#* } & 8#022) == 0)) || return 1
		[ "$d" != / ] || return 0
		d=$(dirname "$d")
	done
}
# Where a root-only work directory can be made when the clone's is not: the run's cache (root's
# ~/.cache unless RDNA1_CACHE moves it), then /run and /var/lib (root's 0755 on every system
# this runs on; a directory there is the test's own and removed after it).
root_only_places() { printf '%s\n' "${RDNA1_CACHE:-$HOME/.cache/rdna1-mtype}" /run /var/lib; }
# work_dir_cleanup (the EXIT trap): removes the scratch places (scratch_dir), and a work
# directory made elsewhere when the test passed.
scratch=()
work_elsewhere=""
work_dir_cleanup() {
	local rc=$?
	[ ${#scratch[@]} = 0 ] || rm -rf "${scratch[@]}"
	if [ -n "$work_elsewhere" ]; then
		if [ $rc = 0 ] && [ "${fails:-1}" = 0 ]; then
			rm -rf "$work_elsewhere"
		else
			echo "$work_elsewhere kept for the failure above" >&2
		fi
	fi
	exit $rc
}
# scratch_dir VAR: VAR set to a new directory (mode 755) that uid 65534 can reach (under /tmp:
# the work directory may sit in a 0700 home, as a clone under /root does), removed at exit.
scratch_dir() {
	local d
	d=$(mktemp -d /tmp/rdna1-scratch.XXXXXX)
	chmod 755 "$d"
	scratch+=("$d")
	setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$d" ||
		{ echo "uid 65534 cannot reach $d" >&2; exit 1; }
	printf -v "$1" %s "$d"
}
work_dir() {
	local name=$1 d place
	[ "$(id -u)" = 0 ] || { echo "$name: needs root (files owned by another user)" >&2; exit 1; }
	rm -rf "$2" && mkdir -p "$2"
	chmod 755 "$2"
	work=$(cd "$2" && pwd -P)
	if ! root_only "$work"; then
		place=""
		while read -r d; do
			mkdir -p "$d" 2>/dev/null && root_only "$d" && { place=$d; break; }
		done < <(root_only_places)
		[ -n "$place" ] || { echo "$name: neither $work nor any of $(root_only_places | paste -sd' ') is root's alone up to /: set RDNA1_CACHE to a directory that is" >&2; exit 1; }
		work_elsewhere=$(mktemp -d "$place/rdna1-$name.XXXXXX")
		chmod 755 "$work_elsewhere"
		echo "$work_elsewhere" >"$work/work-dir-is"
		work=$work_elsewhere
	fi
	trap work_dir_cleanup EXIT
	shift 2
	for d in "$@"; do mkdir -p "$work/$d"; done
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
