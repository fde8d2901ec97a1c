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
	qemu-system-x86 ccache dwarves rsync xz-utils zstd python3 "libclang-${LLVM_VERSION}-dev"
	"clang-${LLVM_VERSION}" "lld-${LLVM_VERSION}" "llvm-${LLVM_VERSION}")

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
	die "rustup toolchain $RUST_TOOLCHAIN is missing (rustup cannot download here)"
for c in rustfmt clippy; do
	rustup component list --toolchain "$RUST_TOOLCHAIN" --installed | grep -q "^$c" ||
		die "rustup toolchain $RUST_TOOLCHAIN lacks $c"
done

if ! "$TOOLS_DIR/bin/bindgen" --version 2>/dev/null | grep -q "$BINDGEN_VERSION"; then
	log "cargo install bindgen-cli $BINDGEN_VERSION"
	cargo install -q --locked --root "$TOOLS_DIR" bindgen-cli --version "$BINDGEN_VERSION"
fi
log "host ready: $(rustc --version), $(bindgen --version), clang $LLVM_VERSION, $(gcc -dumpfullversion)"
