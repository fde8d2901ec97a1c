#!/usr/bin/env bash
# The Debian root of one release's real-kernel stage (tests/kernel/env.sh, debian_release: sid
# for 7.2, trixie with trixie-backports for 7.3), made once by mmdebstrap (from the host's
# bookworm) and kept in $RDNA1_CACHE/debian-roots/RELEASE/KEY; KEY covers the package list,
# the suites, the mirror and this script, so a change makes a new root. The stages never write
# into it: each run mounts an overlay on top (tests/debian/overlay.sh). Prints the root's path.
# The archive's Release files may be past their Valid-Until date, so that check is off.
# usage: root.sh RELEASE
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../kernel/env.sh"
rel=$1
debian_release "$rel"
mirror=$(sed -n 's/^deb \([^ ]*\) sid .*/\1/p' "$APT_STATE/sources.list" 2>/dev/null | head -n1)
mirror=${mirror:-http://deb.debian.org/debian}
key=$({
	echo "$DR_PACKAGES $DR_SUITES $mirror"
	cat "$0"
} | sha256sum | cut -c1-16)
dir=$RDNA1_CACHE/debian-roots/$rel
root=$dir/$key
if [ -f "$root/.rdna1-complete" ]; then
	echo "$root"
	exit 0
fi
command -v mmdebstrap >/dev/null || die "mmdebstrap missing (tests/kernel/setup-host.sh installs it)"
mkdir -p "$dir"
# An mmdebstrap that was killed leaves its mounts (proc, sys, the host's /dev/shm) in its
# target: unmount them before anything below is removed, and never cross a mount.
findmnt -rn -o TARGET | { grep "^$dir/" || true; } | sort -r | xargs -r -n1 umount -l
# Older roots of this release are left behind by a package change: keep only this one.
find "$dir" -mindepth 1 -maxdepth 1 ! -name "$key" -exec rm -rf --one-file-system {} +
# The one root kept before there were several releases (debian-root/KEY): gone, unless
# something is mounted in it (a run of an older checkout making or using it).
legacy=$RDNA1_CACHE/debian-root
if [ -d "$legacy" ] && ! findmnt -rn -o TARGET | grep -q "^$legacy/"; then
	# Both releases' roots may be made at once, each removing it: a race leaves at most disk.
	rm -rf --one-file-system "$legacy" || true
fi
tmp=$root.tmp
rm -rf --one-file-system "$tmp"
suites=()
for s in $DR_SUITES; do suites+=("deb $mirror $s main"); done
log "making the Debian ${DR_SUITES%% *} root for $DR_KVER (mmdebstrap)"
# shellcheck disable=SC2086 # the package list is words
mmdebstrap --quiet --variant=minbase --mode=root \
	--aptopt='Acquire::Check-Valid-Until "false"' --aptopt='APT::Install-Recommends "false"' \
	--include="$(echo $DR_PACKAGES | tr ' ' ',')" \
	"${DR_SUITES%% *}" "$tmp" "${suites[@]}" >"$dir/mmdebstrap.log" 2>&1 ||
	{ tail -n 20 "$dir/mmdebstrap.log" >&2; die "mmdebstrap failed (log above)"; }
touch "$tmp/.rdna1-complete"
mv "$tmp" "$root"
echo "$root"
