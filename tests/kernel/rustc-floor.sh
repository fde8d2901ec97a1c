#!/usr/bin/env bash
# The shared crate's files, which kmod compiles into the module (kmod/rdna1_mtype_main.rs
# includes shared/src/*.rs by path), must compile with the oldest rustc that built a kernel the
# module is built for, since DKMS compiles the module with exactly the kernel's rustc. That
# rustc is Debian's 7.3.4 (trixie-backports) kernel's "rustc 1.85.1 (4eb161250 2025-03-15) (built
# from a source tarball)" (its .config; the kernel itself requires 1.85 from 7.1 on). Trixie's
# rustc 1.85.1 package, with sid's libllvm19 (the host's bookworm libc is too old for it), is
# unpacked into the cache and run in the sid tools root: it compiles shared/src/lib.rs as kmod's
# build does, edition 2021, no_std, core only. kmod's own files need the kernel crate and are
# compiled only by the DKMS builds (tests/debian).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$here/env.sh"
. "$here/debian-kernels.sh"
version=1.85.1+dfsg1-1+deb13u1
want="rustc 1.85.1 (4eb161250 2025-03-15) (built from a source tarball)"
floor=$RDNA1_CACHE/rustc-floor/$version
if [ ! -f "$floor/.complete" ]; then
	dk_update
	rm -rf "$floor" && mkdir -p "$floor"
	tmp=$(mktemp -d)
	log "downloading Debian trixie's rustc $version (and sid's libllvm19)"
	(cd "$tmp" && dk_apt apt-get download -qq "rustc=$version" "libstd-rust-1.85=$version" \
		"libstd-rust-dev=$version" libllvm19/sid >/dev/null) || die "apt-get download of rustc $version failed"
	for d in "$tmp"/*.deb; do dpkg-deb -x "$d" "$floor/root"; done
	rm -rf "$tmp"
	touch "$floor/.complete"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rustc() {
	RDNA1_ENV="LD_LIBRARY_PATH=/opt/usr/lib/x86_64-linux-gnu" "$top/tests/sid-tools/run.sh" \
		--bind "$floor/root:/opt" --bind "$top/shared:/mnt" --rw "$work:/srv" -- /opt/usr/bin/rustc "$@"
}
got=$(rustc --version)
[ "$got" = "$want" ] || die "the unpacked rustc says \"$got\", not \"$want\""
if ! rustc --edition 2021 --crate-type lib --crate-name rdna1_shared --emit metadata \
	-o /srv/librdna1_shared.rmeta /mnt/src/lib.rs >"$work/out.txt" 2>&1; then
	cat "$work/out.txt" >&2
	die "shared/src, which kmod compiles, does not compile with $want (above)"
fi
echo "shared/src compiles with $want"
