#!/usr/bin/env bash
# Installs everything the test kernel, the VM harness and the module builds need, from package
# registries only. Idempotent: a second run only checks.
#
# Bookworm packages are installed with the machine's own apt. The two packages that bookworm lacks
# (linux-source-7.2 from sid, rust-src 1.95 from trixie-backports) are *downloaded* with a private
# apt state and unpacked with dpkg -x: the machine's apt sources and installed packages never change
# (installing from sid would upgrade libc).
set -euo pipefail
. "$(dirname "$0")/env.sh"

APT_PKGS=(build-essential bc flex bison libelf-dev libssl-dev cpio kmod busybox-static
	qemu-system-x86 ccache dwarves rsync xz-utils zstd python3 dkms systemd mmdebstrap "libclang-${LLVM_VERSION}-dev"
	"clang-${LLVM_VERSION}" "lld-${LLVM_VERSION}" "llvm-${LLVM_VERSION}")

# bindgen is the longest step (about 2 minutes of compiling on a fresh machine) and needs only
# cargo: it builds while the packages are installed, downloaded and unpacked.
bindgen_job=""
if ! "$TOOLS_DIR/bin/bindgen" --version 2>/dev/null | grep -q "$BINDGEN_VERSION"; then
	log "cargo install bindgen-cli $BINDGEN_VERSION (in the background)"
	mkdir -p "$TOOLS_DIR"
	cargo install -q --locked --root "$TOOLS_DIR" bindgen-cli --version "$BINDGEN_VERSION" \
		>"$TOOLS_DIR/bindgen-install.log" 2>&1 &
	bindgen_job=$!
fi

missing=()
for p in "${APT_PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "apt-get install ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The mirror this machine already uses; the private state points the other suites at it.
mirror() {
	local uri
	uri=$( (grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}';
		grep -hE '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}') |
		grep -v security | head -n1)
	[ -n "$uri" ] || die "no Debian mirror found in the machine's apt sources"
	echo "$uri"
}

fetch_deb() { # name version suite
	local name=$1 ver=$2 suite=$3 file
	file=$DEB_DIR/${name}_${ver//:/%3a}_all.deb
	[ -s "$file" ] && return 0
	mkdir -p "$APT_STATE/lists/partial" "$APT_STATE/cache/archives/partial" "$DEB_DIR"
	local m
	m=$(mirror)
	printf 'deb %s sid main\ndeb %s trixie-backports main\n' "$m" "$m" >"$APT_STATE/sources.list"
	local opts=(-o "Dir::Etc::SourceList=$APT_STATE/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$APT_STATE/lists" -o "Dir::Cache=$APT_STATE/cache"
		-o Dir::State::status=/dev/null -o APT::Sandbox::User=root -o APT::Architecture=amd64)
	if [ ! -f "$APT_STATE/lists/.updated" ]; then
		log "private apt update (sid, trixie-backports)"
		apt-get "${opts[@]}" update -qq
		touch "$APT_STATE/lists/.updated"
	fi
	log "apt-get download $name=$ver ($suite)"
	(cd "$DEB_DIR" && apt-get "${opts[@]}" download "$name=$ver") ||
		die "could not download $name=$ver from $suite; check 'apt-cache policy' under $APT_STATE"
	[ -s "$file" ] || die "downloaded $name but $file is missing"
}

fetch_deb "$KERNEL_PKG" "$KERNEL_PKG_VERSION" "$KERNEL_SUITE"
fetch_deb "$RUST_SRC_PKG" "$RUST_SRC_VERSION" "$RUST_SRC_SUITE"

if [ ! -d "$RUST_LIB_SRC/core" ]; then
	log "unpacking rust-src"
	rm -rf "$RDNA1_CACHE/rust-src"
	dpkg -x "$DEB_DIR/${RUST_SRC_PKG}_${RUST_SRC_VERSION}_all.deb" "$RDNA1_CACHE/rust-src"
	[ -d "$RUST_LIB_SRC/core" ] || die "rust-src did not contain $RUST_LIB_SRC"
fi

if [ ! -f "$KSRC/Makefile" ]; then
	log "unpacking kernel source"
	tmp=$(mktemp -d)
	dpkg -x "$DEB_DIR/${KERNEL_PKG}_${KERNEL_PKG_VERSION}_all.deb" "$tmp"
	tarball=$(find "$tmp/usr/src" -maxdepth 1 -name 'linux-source-*.tar.xz' | head -n1)
	[ -n "$tarball" ] || die "no tarball in $KERNEL_PKG"
	rm -rf "$KSRC" && mkdir -p "$KSRC"
	tar -xJf "$tarball" -C "$KSRC" --strip-components=1
	rm -rf "$tmp"
fi

rustup run "$RUST_TOOLCHAIN" rustc --version >/dev/null 2>&1 ||
	die "rustup toolchain $RUST_TOOLCHAIN is missing: install it (README, \"Two commands\"): curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --default-toolchain $RUST_TOOLCHAIN --component rustfmt,clippy"
for c in rustfmt clippy; do
	rustup component list --toolchain "$RUST_TOOLCHAIN" --installed | grep -q "^$c" ||
		die "rustup toolchain $RUST_TOOLCHAIN lacks $c: rustup component add --toolchain $RUST_TOOLCHAIN $c"
done

if ! "$TOOLS_DIR/bin/udevadm-verify" --version 2>/dev/null | grep -q '^254$'; then
	log "udev $UDEV_VERSION (bookworm-backports) for udevadm verify"
	st=$APT_STATE-bpo
	mkdir -p "$st/lists/partial" "$st/cache/archives/partial" "$DEB_DIR/bpo" "$TOOLS_DIR/bin"
	printf 'deb %s bookworm-backports main\n' "$(mirror)" >"$st/sources.list"
	bopts=(-o "Dir::Etc::SourceList=$st/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$st/lists" -o "Dir::Cache=$st/cache"
		-o Dir::State::status=/dev/null -o APT::Sandbox::User=root -o APT::Architecture=amd64)
	apt-get "${bopts[@]}" update -qq
	(cd "$DEB_DIR/bpo" && apt-get "${bopts[@]}" download -q "udev=$UDEV_VERSION" \
		"libsystemd-shared=$UDEV_VERSION" >/dev/null) || die "could not download udev $UDEV_VERSION"
	rm -rf "$TOOLS_DIR/udev"
	for d in "$DEB_DIR"/bpo/*.deb; do dpkg -x "$d" "$TOOLS_DIR/udev"; done
	printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' \
		"$TOOLS_DIR/udev/usr/lib/x86_64-linux-gnu/systemd" "$TOOLS_DIR/udev/bin/udevadm" \
		>"$TOOLS_DIR/bin/udevadm-verify"
	chmod +x "$TOOLS_DIR/bin/udevadm-verify"
	"$TOOLS_DIR/bin/udevadm-verify" --version | grep -q '^254$' || die "udevadm $UDEV_VERSION does not run"
fi
if [ -n "$bindgen_job" ]; then
	wait "$bindgen_job" || { cat "$TOOLS_DIR/bindgen-install.log" >&2; die "cargo install bindgen-cli $BINDGEN_VERSION failed"; }
	log "bindgen-cli $BINDGEN_VERSION installed"
fi
log "host ready: $(rustc --version), $(bindgen --version), clang $LLVM_VERSION, $(gcc -dumpfullversion)"
