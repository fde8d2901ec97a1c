# Shared settings for the pinned test kernel: sourced, never run.
# Everything lives under $RDNA1_CACHE (outside the clone) so a fresh clone reuses it.

RDNA1_CACHE=${RDNA1_CACHE:-$HOME/.cache/rdna1-mtype}
KERNEL_PKG=linux-source-7.2
KERNEL_PKG_VERSION=7.2.13-1
KERNEL_SUITE=sid
RUST_SRC_PKG=rust-src
RUST_SRC_VERSION=1.95.0+dfsg1-2~bpo13+1
RUST_SRC_SUITE=trixie-backports
RUST_TOOLCHAIN=1.95.0
BINDGEN_VERSION=0.72.1
# udevadm verify (systemd >= 254) checks the udev rule; bookworm has 252, so udev from
# bookworm-backports (built against bookworm's libc) is unpacked privately.
UDEV_VERSION=254.26-1~bpo12+1
LLVM_VERSION=19
# Debian's real kernels that check-kernel is tested on (tests/kernel/check-kernel-debian.sh):
# one hookable, one with the pre-6.18 signature.
DEBIAN_KVER=7.2.13+deb14-amd64
DEBIAN_KVER_VERSION=7.2.13-1
DEBIAN_OLD_KVER=6.12.117+deb13-amd64
DEBIAN_OLD_KVER_VERSION=6.12.117-1
# The test kernel and every module built against it use LLVM (clang, lld): Rust + KASAN needs a
# clang-built kernel (init/Kconfig: RUST depends on !KASAN || CC_IS_CLANG).
KMAKE_LLVM=(LLVM="-$LLVM_VERSION" CC="ccache clang-$LLVM_VERSION")

# buildable_paths DIR...: refuses (exits 2) where DIR holds white space or ':', which kbuild
# cannot build in (make splits words at white space, and ':' separates a rule's target from its
# prerequisites): the kernel and module builds would fail halfway, after the long steps. make
# test, demo, bench and soak call it first, with the clone and the cache.
buildable_paths() {
	local d
	for d in "$@"; do
		case $d in
		*[[:space:]:]*)
			echo "rdna1-mtype: '$d' holds white space or ':', which kbuild (make) cannot build in: clone into a path without them, or set RDNA1_CACHE to one" >&2
			exit 2
			;;
		esac
	done
}

# The .deb packages from other suites are fetched here with a private apt state.
APT_STATE=$RDNA1_CACHE/apt
DEB_DIR=$RDNA1_CACHE/debs
TOOLS_DIR=$RDNA1_CACHE/tools
RUST_LIB_SRC=$RDNA1_CACHE/rust-src/usr/src/rustc-${RUST_TOOLCHAIN}/library
KSRC=$RDNA1_CACHE/src/linux-${KERNEL_PKG_VERSION}
# Cargo's build trees for make test, shared by every clone (cargo itself tracks what changed
# since: a fresh clone rebuilds the workspace's crates, not their dependencies); one per
# toolchain, so an old toolchain's artifacts go with it.
RDNA1_CARGO_TARGET=$RDNA1_CACHE/cargo/$RUST_TOOLCHAIN
export CCACHE_DIR=$RDNA1_CACHE/ccache
export CCACHE_MAXSIZE=4G
# Depend mode: a miss compiles once, with the compiler's own dependency list (kbuild's -MMD),
# where the default mode first runs the preprocessor to hash its output: kernel objects
# compiled 32% slower through ccache that way, 7% in depend mode
# (tests/kernel/ccache-bench.sh). A hit needs the same sources and flags either way.
export CCACHE_DEPEND=1

# Toolchain the kernel's Rust support is built with; modules must use the same one.
export RUSTUP_TOOLCHAIN=$RUST_TOOLCHAIN
export RUST_LIB_SRC
export LIBCLANG_PATH=/usr/lib/llvm-${LLVM_VERSION}/lib
export PATH=$TOOLS_DIR/bin:$PATH

# cargo_cache PARENT KEY: the cargo target for a staged source tree (packaging/source-tree.sh,
# made with SOURCE_DATE_EPOCH=1: every file at one time, whatever the commit) whose workspace
# content is KEY (packaging/workspace-key.sh). Cargo judges the workspace's own crates by file
# time, so one content only ever sees one target: a new KEY takes over the last target with the
# workspace crates' fingerprints removed, and cargo rebuilds exactly those (the vendored crates,
# fixed by Cargo.lock, keep theirs and are not rebuilt). Prints the target's path.
cargo_cache() {
	local parent=$1 key=$2 last
	[[ $key =~ ^[0-9a-f]{16}$ ]] || die "cargo_cache: not a workspace key: '$key'"
	mkdir -p "$parent"
	if [ ! -d "$parent/$key" ]; then
		last=$(find "$parent" -mindepth 1 -maxdepth 1 -type d -printf '%T@ %p\n' | sort -n | tail -n1 | cut -d' ' -f2-)
		if [ -n "$last" ]; then
			find "$last" -path '*/.fingerprint/*' -prune \( -name 'rdna1ctl-*' -o -name 'rdna1-mtype-shared-*' \
				-o -name 'rdna1-abi-probe-*' \) -exec rm -rf {} +
			mv "$last" "$parent/$key"
		else
			mkdir "$parent/$key"
		fi
	fi
	find "$parent" -mindepth 1 -maxdepth 1 ! -name "$key" -exec rm -rf {} +
	touch "$parent/$key"
	echo "$parent/$key"
}

# niced CMD...: runs CMD at niceness RDNA1_NICE (default 19) until the file RDNA1_NICE_UNTIL
# exists, at full priority after that or without it. make test (tests/run.sh) names the file it
# makes once what the first VM boot waits for is built (cold: the test kernel; warm: the static
# binaries); its checks lane names a later one (tests/run.sh says when). 19, not 10: at 10 six niced compilers took a quarter of
# the CPU from the kernel build (CFS weights 110 against 1024 each; at 19, 15).
niced() {
	if [ -n "${RDNA1_NICE_UNTIL:-}" ] && [ ! -e "$RDNA1_NICE_UNTIL" ]; then
		nice -n "${RDNA1_NICE:-19}" "$@"
	else
		"$@"
	fi
}

# unnice_tree PID [EXCEPT]: back to full priority, every process below PID that niced started,
# but those below EXCEPT (a lane that stays niced longer). A niced
# command keeps its niceness after RDNA1_NICE_UNTIL appears (and so do the children it starts),
# so without this a build started during the kernel build (Debian's package, cargo test) would
# stay at 19 beside the VM boots for its whole length. Twice, a second apart: a child started
# by a process not yet reniced inherits 19.
unnice_tree() {
	local round pids
	for round in 1 2; do
		pids=$(ps -eo pid=,ppid=,ni= | awk -v root="$1" -v except="${2:-0}" '
			{ parent[$1] = $2; nice[$1] = $3 }
			END {
				for (p in parent) {
					q = p
					skip = 0
					while (q in parent && q != root && q > 1) {
						if (q == except) skip = 1
						q = parent[q]
					}
					if (q == root && !skip && nice[p] > 0) print p
				}
			}')
		# shellcheck disable=SC2086 # a list of pids
		[ -z "$pids" ] || renice -n 0 -p $pids >/dev/null 2>&1 || true
		[ $round = 2 ] || sleep 1
	done
}

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Kernel build dir for a flavour: keyed by source version, config settings and toolchain,
# so a change to any of them builds a new tree and an unchanged one rebuilds nothing.
kbuild_dir() {
	local flavour=$1 here key
	here=$(dirname "${BASH_SOURCE[0]}")
	key=$({
		echo "$KERNEL_PKG_VERSION $RUST_TOOLCHAIN $BINDGEN_VERSION $LLVM_VERSION ${KMAKE_LLVM[*]}"
		"clang-$LLVM_VERSION" --version | head -n1
		# Only the settings: a comment edit must not cost a cold kernel build.
		grep -hE '^(CONFIG_|# CONFIG_)' "$here/config/base.config"
		[ "$flavour" = base ] || grep -hE '^(CONFIG_|# CONFIG_)' "$here/config/$flavour.config"
	} | sha256sum | cut -c1-16)
	echo "$RDNA1_CACHE/kbuild/$flavour-$key"
}

# Debian's real kernels end to end (tests/debian/): per release, a root made by mmdebstrap with
# that kernel's headers, image, modules and source, the Debian rustc its Rust was built with
# (CONFIG_RUSTC_VERSION_TEXT names it), dkms, and what the rdna1-mtype packages depend on.
# The packages are built once, in 7.2's sid root (its cargo; rdna1ctl needs Rust >= 1.95,
# which trixie has only in backports, whose cargo would also replace trixie's rustc).
DEBIAN_RELEASES="7.2 7.3"
DEBIAN_DKMS_PACKAGES="bindgen dkms build-essential make flex bison bc python3 openssl dwarves \
xz-utils libelf-dev libssl-dev kmod"
# debian_release REL: sets DR_KVER, DR_VERSION (its packages'), DR_SUITES (the first is the
# root's own) and DR_PACKAGES for release REL.
debian_release() {
	local rustc extra
	case $1 in
	7.2)
		DR_KVER=$DEBIAN_KVER DR_VERSION=$DEBIAN_KVER_VERSION DR_SUITES=sid
		# Its .config names "rustc 1.97.1"; cargo and the packaging tools build our packages.
		rustc=1.97.1+dfsg1-1
		extra="cargo=$rustc dh-dkms debhelper"
		;;
	7.3)
		# trixie-backports' 7.3.4, built by trixie's own rustc 1.85.1, gcc-14 and bindgen 0.71.1.
		DR_KVER=7.3.4+deb13-amd64 DR_VERSION=7.3.4-1~bpo13+1 DR_SUITES="trixie trixie-backports"
		rustc=1.85.1+dfsg1-1+deb13u1
		extra=""
		;;
	*) die "no Debian release $1 (tests/kernel/env.sh: $DEBIAN_RELEASES)" ;;
	esac
	DR_PACKAGES="linux-headers-$DR_KVER=$DR_VERSION linux-binary-$DR_KVER=$DR_VERSION \
linux-modules-$DR_KVER=$DR_VERSION linux-source-$1=$DR_VERSION rustc=$rustc rust-src=$rustc \
$extra $DEBIAN_DKMS_PACKAGES"
}
