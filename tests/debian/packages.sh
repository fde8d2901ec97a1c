#!/usr/bin/env bash
# Our Debian packages, rdna1ctl and rdna1-mtype-dkms, built as a Debian developer builds them
# (dpkg-buildpackage from packaging/debian-source.sh's tree) in 7.2's sid root, the one with a
# cargo new enough for rdna1ctl; every release's stage installs these same files
# (tests/debian/run.sh).
# usage: packages.sh OUT_DIR   (writes OUT_DIR/debs/*.deb and OUT_DIR/package-build.log)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$1
. "$top/tests/kernel/env.sh"
. "$here/overlay.sh"
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$top/Cargo.toml" | head -n1)

# Niced while make test builds what its first VM boot waits for (env.sh, niced; tests/run.sh).
lower=$(niced "$here/root.sh" 7.2)
overlay_up "$lower" "$out/build-root"
log "debian packages: building the packages rdna1ctl and rdna1-mtype-dkms $version in sid"
SOURCE_DATE_EPOCH=1 "$top/packaging/debian-source.sh" "$mnt/build/rdna1-mtype" >/dev/null
# rdna1ctl's cargo target (env.sh, cargo_cache): a fresh clone of the same sources rebuilds
# nothing, other sources only the workspace's crates.
key=$("$top/packaging/workspace-key.sh" "$mnt/build/rdna1-mtype")
target=$(cargo_cache "$RDNA1_CACHE/debian-cargo-target" "$key")
bind_in "$target" /var/cache/rdna1-cargo-target
in_root sh -c 'cd /build/rdna1-mtype && CARGO_TARGET_DIR=/var/cache/rdna1-cargo-target dpkg-buildpackage -b -us -uc' \
	>"$out/package-build.log" 2>&1 || { tail -n 30 "$out/package-build.log" >&2; die "dpkg-buildpackage failed"; }
mkdir -p "$out/debs"
for d in "rdna1ctl_${version}_amd64.deb" "rdna1-mtype-dkms_${version}_all.deb"; do
	[ -f "$mnt/build/$d" ] || die "dpkg-buildpackage made no $d"
	cp "$mnt/build/$d" "$out/debs/"
done
contents=$(dpkg-deb -c "$out/debs/rdna1-mtype-dkms_${version}_all.deb")
[[ $contents == *"usr/src/rdna1-mtype-$version/dkms.conf"* ]] || die "rdna1-mtype-dkms has no dkms.conf"
