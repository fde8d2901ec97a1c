#!/usr/bin/env bash
# For maintainers extending the supported kernel range: downloads Debian's linux-source-VER
# (private apt state, as setup-host.sh) and compares what rdna1_mtype depends on with the
# pinned 7.2 source: gmc_v10_0_get_vm_pte, the get_vm_pte prototype, the head of
# struct amdgpu_device and struct amdgpu_bo; and the module's copies of struct amdgpu_bo and
# struct amdgpu_vm (check-bo-copy.sh) against VER's headers. Identical: the range in kmod/hook.c may include
# VER. Different: read the diff before changing anything.
# usage: check-hook-source.sh 7.3
set -euo pipefail
. "$(dirname "$0")/env.sh"
ver=${1:?usage: check-hook-source.sh VERSION (e.g. 7.3)}
"$(dirname "$0")/setup-host.sh" >/dev/null
opts=(-o "Dir::Etc::SourceList=$APT_STATE/sources.list" -o Dir::Etc::SourceParts=/dev/null
	-o "Dir::State::Lists=$APT_STATE/lists" -o "Dir::Cache=$APT_STATE/cache"
	-o Dir::State::status=/dev/null -o APT::Architecture=amd64 -o APT::Sandbox::User=root)
pkgver=$(apt-cache "${opts[@]}" policy "linux-source-$ver" | awk '/Candidate/{print $2}')
[ -n "$pkgver" ] && [ "$pkgver" != "(none)" ] || die "linux-source-$ver is not in sid or trixie-backports"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get "${opts[@]}" download -q "linux-source-$ver=$pkgver" >/dev/null)
amd=drivers/gpu/drm/amd/amdgpu
dpkg --fsys-tarfile "$work"/linux-source-*.deb | tar -xO --wildcards '*/linux-source-*.tar.xz' |
	xz -dc | tar -x -C "$work" --wildcards "*/$amd/gmc_v10_0.c" "*/$amd/amdgpu_gmc.h" \
	"*/$amd/amdgpu.h" "*/$amd/amdgpu_object.h" "*/$amd/amdgpu_vm.h" "*/$amd/amdgpu_ttm.h"
new=$(find "$work" -maxdepth 1 -type d -name 'linux-source-*' | head -n1)
extract() { # tree
	sed -n '/^static void gmc_v10_0_get_vm_pte/,/^}/p' "$1/$amd/gmc_v10_0.c"
	sed -n '/void (\*get_vm_pte)/,/;/p' "$1/$amd/amdgpu_gmc.h"
	sed -n '/^struct amdgpu_device {/,+2p' "$1/$amd/amdgpu.h"
	sed -n '/^struct amdgpu_bo {/,/^};/p' "$1/$amd/amdgpu_object.h"
}
# The module's copies of struct amdgpu_bo and struct amdgpu_vm (up to is_compute_context),
# member for member against VER's headers.
"$(dirname "$0")/check-bo-copy.sh" "$new" || exit 1
if diff -u <(extract "$KSRC") <(extract "$new"); then
	echo "linux-source-$ver ($pkgver): identical to $KERNEL_PKG_VERSION in everything rdna1_mtype depends on"
else
	echo "linux-source-$ver ($pkgver): DIFFERS from $KERNEL_PKG_VERSION (above)" >&2
	exit 1
fi
