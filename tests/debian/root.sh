#!/usr/bin/env bash
# The Debian sid root the real-kernel stage works in, made once by mmdebstrap (from the host's
# bookworm) and kept in $RDNA1_CACHE/debian-root/KEY; KEY covers the package list, the
# mirror and this script, so a change makes a new root. The stage never writes into it: each
# run mounts an overlay on top (tests/debian/run.sh). Prints the root's path.
# The archive's Release files may be past their Valid-Until date, so that check is off.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../kernel/env.sh"
mirror=$(sed -n 's/^deb \([^ ]*\) sid .*/\1/p' "$APT_STATE/sources.list" 2>/dev/null | head -n1)
mirror=${mirror:-http://deb.debian.org/debian}
key=$({
	echo "$DEBIAN_ROOT_PACKAGES $mirror"
	cat "$0"
} | sha256sum | cut -c1-16)
root=$RDNA1_CACHE/debian-root/$key
if [ -f "$root/.rdna1-complete" ]; then
	echo "$root"
	exit 0
fi
command -v mmdebstrap >/dev/null || die "mmdebstrap missing (tests/kernel/setup-host.sh installs it)"
mkdir -p "$RDNA1_CACHE/debian-root"
# An mmdebstrap that was killed leaves its mounts (proc, sys, the host's /dev/shm) in its
# target: unmount them before anything below is removed, and never cross a mount.
findmnt -rn -o TARGET | { grep "^$RDNA1_CACHE/debian-root/" || true; } | sort -r | xargs -r -n1 umount -l
# Older roots are left behind by a package change: keep only this one.
find "$RDNA1_CACHE/debian-root" -mindepth 1 -maxdepth 1 ! -name "$key" -exec rm -rf --one-file-system {} +
tmp=$root.tmp
rm -rf --one-file-system "$tmp"
log "making the Debian sid root for $DEBIAN_KVER (mmdebstrap)"
# shellcheck disable=SC2086 # the package list is words
mmdebstrap --quiet --variant=minbase --mode=root \
	--aptopt='Acquire::Check-Valid-Until "false"' --aptopt='APT::Install-Recommends "false"' \
	--include="$(echo $DEBIAN_ROOT_PACKAGES | tr ' ' ',')" \
	sid "$tmp" "$mirror" >"$RDNA1_CACHE/debian-root/mmdebstrap.log" 2>&1 ||
	{ tail -n 20 "$RDNA1_CACHE/debian-root/mmdebstrap.log" >&2; die "mmdebstrap failed (log above)"; }
touch "$tmp/.rdna1-complete"
mv "$tmp" "$root"
echo "$root"
