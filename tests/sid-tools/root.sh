#!/usr/bin/env bash
# A Debian sid root with the tools some tests borrow from sid, made once by mmdebstrap and kept
# in $RDNA1_CACHE/sid-tools/KEY (KEY: the packages, the mirror and this script):
# - python3-torch, Debian's CPU-only PyTorch: tests/field-kit/check-cpu.sh runs the shipped
#   battery and in-process check with it (PyPI's Linux torch wheel is the CUDA build, 900 MB
#   plus CUDA's, and PyTorch's CPU wheel index is not reachable from here); with
#   python3-torchvision (ResNet-18 through TorchScript), g++ and libtorch-dev (the compiler
#   and headers torch.compile's Inductor builds its CPU kernels with) for
#   tests/field-kit/check-python.sh;
# - clang-tools-21 and llvm-21 (its llvm-objcopy), LLVM's clang-offload-bundler:
#   tests/rocm/code-objects.sh lists real
#   bundles with it (bookworm's LLVM 19 cannot read the compressed bundles ROCm 7 writes);
# - makepkg and pacman (Arch), rpmbuild and rpmlint (Fedora; elfutils and debugedit for its
#   debuginfo package, as Fedora makes it), with cargo: tests/packaging/run.sh
#   builds the Arch and RPM packages as their distributions do (bookworm has none of them).
# The tests never write into the root (in_root: a mount namespace of their own). Prints its path.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../kernel/env.sh"
mirror=$(sed -n 's/^deb \([^ ]*\) sid .*/\1/p' "$APT_STATE/sources.list" 2>/dev/null | head -n1)
mirror=${mirror:-http://deb.debian.org/debian}
packages="python3-torch python3-torchvision g++ libtorch-dev clang-tools-21 llvm-21 makepkg pacman-package-manager libarchive-tools rpm rpmlint elfutils debugedit cargo rustc zstd file"
key=$({
	echo "$packages $mirror"
	cat "$0"
} | sha256sum | cut -c1-16)
root=$RDNA1_CACHE/sid-tools/$key
if [ -f "$root/.rdna1-complete" ]; then
	echo "$root"
	exit 0
fi
command -v mmdebstrap >/dev/null || die "mmdebstrap missing (tests/kernel/setup-host.sh installs it)"
mkdir -p "$RDNA1_CACHE/sid-tools"
findmnt -rn -o TARGET | { grep "^$RDNA1_CACHE/sid-tools/" || true; } | sort -r | xargs -r -n1 umount -l
find "$RDNA1_CACHE/sid-tools" -mindepth 1 -maxdepth 1 ! -name "$key" -exec rm -rf --one-file-system {} +
tmp=$root.tmp
rm -rf --one-file-system "$tmp"
log "making a Debian sid root with $packages (mmdebstrap)"
mmdebstrap --quiet --variant=minbase --mode=root \
	--aptopt='Acquire::Check-Valid-Until "false"' --aptopt='APT::Install-Recommends "false"' \
	--include="$(echo $packages | tr ' ' ',')" \
	sid "$tmp" "$mirror" >"$RDNA1_CACHE/sid-tools/mmdebstrap.log" 2>&1 ||
	{ tail -n 20 "$RDNA1_CACHE/sid-tools/mmdebstrap.log" >&2; die "mmdebstrap failed (log above)"; }
touch "$tmp/.rdna1-complete"
mv "$tmp" "$root"
echo "$root"
