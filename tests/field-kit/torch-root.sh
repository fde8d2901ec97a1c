#!/usr/bin/env bash
# A Debian sid root with Debian's PyTorch (python3-torch, a CPU-only build), made once by
# mmdebstrap and kept in $RDNA1_CACHE/torch-root/KEY (KEY: the package, the mirror and this
# script). conv2d-cpu.sh runs the shipped conv2d.py in it: PyPI's Linux torch wheel is the CUDA
# build (900 MB plus CUDA's), and PyTorch's CPU wheel index is not reachable from here.
# The tests never write into the root. Prints its path.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../kernel/env.sh"
mirror=$(sed -n 's/^deb \([^ ]*\) sid .*/\1/p' "$APT_STATE/sources.list" 2>/dev/null | head -n1)
mirror=${mirror:-http://deb.debian.org/debian}
key=$({
	echo "python3-torch $mirror"
	cat "$0"
} | sha256sum | cut -c1-16)
root=$RDNA1_CACHE/torch-root/$key
if [ -f "$root/.rdna1-complete" ]; then
	echo "$root"
	exit 0
fi
command -v mmdebstrap >/dev/null || die "mmdebstrap missing (tests/kernel/setup-host.sh installs it)"
mkdir -p "$RDNA1_CACHE/torch-root"
findmnt -rn -o TARGET | { grep "^$RDNA1_CACHE/torch-root/" || true; } | sort -r | xargs -r -n1 umount -l
find "$RDNA1_CACHE/torch-root" -mindepth 1 -maxdepth 1 ! -name "$key" -exec rm -rf --one-file-system {} +
tmp=$root.tmp
rm -rf --one-file-system "$tmp"
log "making a Debian sid root with python3-torch (mmdebstrap)"
mmdebstrap --quiet --variant=minbase --mode=root \
	--aptopt='Acquire::Check-Valid-Until "false"' --aptopt='APT::Install-Recommends "false"' \
	--include=python3-torch \
	sid "$tmp" "$mirror" >"$RDNA1_CACHE/torch-root/mmdebstrap.log" 2>&1 ||
	{ tail -n 20 "$RDNA1_CACHE/torch-root/mmdebstrap.log" >&2; die "mmdebstrap failed (log above)"; }
touch "$tmp/.rdna1-complete"
mv "$tmp" "$root"
echo "$root"
