#!/usr/bin/env bash
# Debian's real kernel, end to end, as a Debian user gets rdna1-mtype:
#   1. in a sid root (tests/debian/root.sh; this run writes only to an overlay on top of it)
#      with Debian's linux-headers/-binary/-modules/-source of DEBIAN_KVER and Debian's rustc,
#      build the Debian packages rdna1ctl and rdna1-mtype-dkms (packaging/);
#   2. apt installs them: DKMS builds rdna1_mtype.ko for DEBIAN_KVER, rebuilding the Rust
#      metadata Debian's headers leave out (kmod/dkms-rust-metadata.sh; or reusing what an
#      earlier run rebuilt with the same key, below) and checking the hook's contract on
#      Debian's amdgpu.ko (rdna1ctl check-kernel);
#   3. build the test harness the same way, boot Debian's own vmlinuz (TCG) with Debian's
#      modules, the DKMS-built rdna1_mtype.ko and the packaged rdna1ctl, and run the cases
#      whose header names the kernel debian (below) against Debian's real amdgpu.
# usage: run.sh OUT_DIR LIMIT_S   (LIMIT_S: the time the boot may take)
# Writes OUT_DIR/vm.log and its per-case results OUT_DIR/vm.log.results.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$1 limit=$2
. "$top/tests/kernel/env.sh"
# The cases whose header says `# kernels: ... debian` (docs/TESTING.md, "Adding a case"): policy,
# guards, stats, status, set/apply/events, the BTF layout and check-kernel/doctor, cases that
# need no test-kernel-only feature. verify (96, 98) needs CONFIG_TRACE_EVENT_INJECT to stand in
# for a GPU's page-table updates; Debian's kernel has none, so verify runs in the test kernel's
# boots only. RDNA1_DEBIAN_CASES=20,30 runs fewer.
CASES=${RDNA1_DEBIAN_CASES:-$("$top/tests/vm/cases-with.sh" 'kernels: .*\<debian\>.*')}
[ -n "$CASES" ] || die "no case header says '# kernels: ... debian'"
kver=$DEBIAN_KVER
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$top/Cargo.toml" | head -n1)

# The builds below run niced while make test builds what its first VM boot waits for (env.sh,
# niced; tests/run.sh); the boot never is (a starved TCG guest misjudges time).
lower=$(niced "$here/root.sh")
mnt=$out/root
mkdir -p "$out/upper" "$out/work" "$mnt"
mounts=()
cleanup() {
	local i
	for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount "${mounts[$i]}" 2>/dev/null || umount -l "${mounts[$i]}"; done
}
trap cleanup EXIT
mount -t overlay overlay -o "lowerdir=$lower,upperdir=$out/upper,workdir=$out/work" "$mnt"
mounts+=("$mnt")
mount -t proc proc "$mnt/proc"
mounts+=("$mnt/proc")
in_root() { niced chroot "$mnt" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 "$@"; }

log "debian: building the packages rdna1ctl and rdna1-mtype-dkms $version in sid"
SOURCE_DATE_EPOCH=1 "$top/packaging/debian-source.sh" "$mnt/build/rdna1-mtype" >/dev/null
# rdna1ctl's cargo target (env.sh, cargo_cache): a fresh clone of the same sources rebuilds
# nothing, other sources only the workspace's crates.
key=$("$top/packaging/workspace-key.sh" "$mnt/build/rdna1-mtype")
target=$(cargo_cache "$RDNA1_CACHE/debian-cargo-target" "$key")
mkdir -p "$mnt/var/cache/rdna1-cargo-target"
mount --bind "$target" "$mnt/var/cache/rdna1-cargo-target"
mounts+=("$mnt/var/cache/rdna1-cargo-target")
in_root sh -c 'cd /build/rdna1-mtype && CARGO_TARGET_DIR=/var/cache/rdna1-cargo-target dpkg-buildpackage -b -us -uc' \
	>"$out/package-build.log" 2>&1 || { tail -n 30 "$out/package-build.log" >&2; die "dpkg-buildpackage failed"; }
debs=("/build/rdna1ctl_${version}_amd64.deb" "/build/rdna1-mtype-dkms_${version}_all.deb")
for d in "${debs[@]}"; do [ -f "$mnt$d" ] || die "dpkg-buildpackage made no $d"; done
contents=$(dpkg-deb -c "$mnt${debs[1]}")
[[ $contents == *"usr/src/rdna1-mtype-$version/dkms.conf"* ]] || die "rdna1-mtype-dkms has no dkms.conf"

# The Rust metadata DKMS rebuilds for $kver (kmod/dkms-rust-metadata.sh, a few minutes) is kept
# from the last run that made it, per sid root (whose tools it was made with). The script
# reuses it only when its own key matches (headers and linux-source versions, rustc, bindgen,
# the .config and the script itself): a change to any of them rebuilds it here, and that
# rebuild is kept for the runs after.
meta_cache=$RDNA1_CACHE/debian-kbuild/$(basename "$lower")
meta=/var/cache/rdna1-mtype/kbuild/$kver
find "$RDNA1_CACHE/debian-kbuild" -mindepth 1 -maxdepth 1 ! -name "$(basename "$lower")" -exec rm -rf {} + 2>/dev/null || true
if [ -f "$meta_cache/$kver/.rdna1-key" ]; then
	mkdir -p "$mnt${meta%/*}"
	cp -a "$meta_cache/$kver" "$mnt$meta"
fi

log "debian: apt install (DKMS builds rdna1_mtype for $kver)"
in_root apt-get install -y "${debs[@]}" >"$out/apt-install.log" 2>&1 ||
	{ tail -n 40 "$out/apt-install.log" >&2; die "apt install of the packages failed"; }
st=$(in_root dkms status -m rdna1-mtype)
[[ $st == "rdna1-mtype/$version, $kver, x86_64: installed" ]] || die "dkms status: $st"
# The build went through the contract check and the rebuilt Rust metadata, as its log says.
makelog=$mnt/var/lib/dkms/rdna1-mtype/$version/$kver/x86_64/log/make.log
cp "$makelog" "$out/dkms-make.log" || die "no DKMS make.log"
grep -q "Linux $kver: the hook's contract holds" "$out/dkms-make.log" ||
	die "the DKMS build did not check the contract ($out/dkms-make.log)"
if grep -q "rebuilding the kernel's Rust metadata from linux-source-7.2 $DEBIAN_KVER_VERSION" "$out/dkms-make.log"; then
	log "debian: DKMS rebuilt the kernel's Rust metadata (kept for the next runs)"
	rm -rf "$meta_cache/$kver.new"
	mkdir -p "$meta_cache"
	cp -a "$mnt$meta" "$meta_cache/$kver.new"
	rm -rf "$meta_cache/$kver"
	mv "$meta_cache/$kver.new" "$meta_cache/$kver"
elif grep -q "Linux $kver: reusing its Rust metadata in $meta" "$out/dkms-make.log"; then
	log "debian: DKMS reused the Rust metadata an earlier run rebuilt with the same key ($(cat "$mnt$meta/.rdna1-key"))"
else
	die "the DKMS build neither rebuilt nor reused the Rust metadata ($out/dkms-make.log)"
fi
# ... and compiled in what the check read from amdgpu's BTF (case 88 relies on it).
grep -q "^rdna1-mtype: building for $kver .* RDNA1_AMDGPU_BTF_ID=0x[0-9a-f]\{16\} RDNA1_BTF_BO_LAYOUT=" \
	"$out/dkms-make.log" || die "the DKMS build did not use amdgpu's BTF id and layout ($out/dkms-make.log)"
grep -q "^rdna1-mtype: building for $kver .* RDNA1_BTF_VM_COMPUTE=[0-9]\+ RDNA1_BTF_VM_TASK_INFO=[0-9]\+ RDNA1_BTF_TASK_INFO_TGID=[0-9]\+ RDNA1_BTF_TASK_INFO_NAME=[0-9]\+" \
	"$out/dkms-make.log" || die "the DKMS build did not use amdgpu's BTF offsets of is_compute_context and task_info ($out/dkms-make.log)"
ko=$(find "$mnt/usr/lib/modules/$kver/updates/dkms" -name 'rdna1_mtype.ko*' | head -n1)
[ -n "$ko" ] || die "DKMS installed no rdna1_mtype.ko for $kver"
in_root rdna1ctl check-kernel "$kver" >"$out/check-kernel.txt" || die "check-kernel $kver: $(cat "$out/check-kernel.txt")"

log "debian: the test harness, built against the same kernel build dir"
kbuild=/var/cache/rdna1-mtype/kbuild/$kver
in_root sh -c "mkdir -p /tmp/amd && tar -xf /usr/src/linux-source-7.2.tar.xz -C /tmp/amd --strip-components=5 \
	linux-source-7.2/drivers/gpu/drm/amd && make -C $kbuild M=/build/rdna1-mtype/tests/modules/harness \
	AMD=/tmp/amd modules" >"$out/harness-build.log" 2>&1 || { tail -n 30 "$out/harness-build.log" >&2; die "harness build failed"; }
# The module as DKMS built it, but with another amdgpu BTF id: what an amdgpu replaced after
# the build looks like to it (case 88).
cat >"$mnt/tmp/stale-build.sh" <<'EOF'
set -eu
version=$1 kver=$2
cp -r "/usr/src/rdna1-mtype-$version" /tmp/stale
cd /tmp/stale/kmod
# dkms-make.sh ends by running make with its arguments: one more, last, overrides the id.
sed 's/^exec make -C "$here" $args$/& RDNA1_AMDGPU_BTF_ID=0x1/' dkms-make.sh >dkms-make-stale.sh
grep -q 'RDNA1_AMDGPU_BTF_ID=0x1$' dkms-make-stale.sh
sh dkms-make-stale.sh "/usr/lib/modules/$kver/build" "$kver"
EOF
in_root sh /tmp/stale-build.sh "$version" "$kver" >"$out/stale-build.log" 2>&1 ||
	{ tail -n 30 "$out/stale-build.log" >&2; die "stale module build failed"; }
mkdir -p "$out/test-modules"
cp "$mnt"/build/rdna1-mtype/tests/modules/harness/*.ko "$out/test-modules/"
cp "$mnt/tmp/stale/kmod/rdna1_mtype.ko" "$out/test-modules/rdna1_mtype_stale.ko"

# Without the matching kernel source the build names the package to install (last: the
# builds above needed it; the overlay forgets the removal).
in_root dpkg --remove linux-source-7.2 >"$out/remove-source.log" 2>&1 || die "dpkg --remove linux-source-7.2 failed"
msg=$(in_root sh "/usr/src/rdna1-mtype-$version/kmod/dkms-rust-metadata.sh" "/usr/lib/modules/$kver/build" \
	"$kver" rustc 2>&1) && die "dkms-rust-metadata.sh went on without linux-source-7.2"
[[ $msg == *"apt install linux-source-7.2=$DEBIAN_KVER_VERSION"* ]] || die "missing-source message: $msg"

# Headers that ship the Rust metadata, as Arch's linux-headers and Ubuntu's linux-headers +
# linux-lib-rust do (tests/debian/headers-shape.sh): the real dkms install builds against them
# with the metadata they carry. Neither linux-source (removed above) nor the metadata DKMS
# rebuilt (moved out of its cache) is left, so no build below can rebuild or reuse it.
log "debian: dkms install against Arch's and Ubuntu's layouts of $kver's headers (Rust metadata shipped)"
deb_ko=$out/dkms-debian.ko
cp "$ko" "$deb_ko.orig"
unpack_ko() { # KO OUT: a module as insmod reads it
	case $1 in
	*.xz) xz -dc "$1" >"$2" ;;
	*.zst) zstd -qdc "$1" >"$2" ;;
	*) cp "$1" "$2" ;;
	esac
}
unpack_ko "$ko" "$deb_ko"
mv "$mnt$meta" "$mnt/var/tmp/rdna1-shipped-metadata"
cp "$here/headers-shape.sh" "$mnt/tmp/headers-shape.sh"
dkms_again() { # LOG: the package's DKMS build for $kver once more, into LOG (its make.log)
	in_root dkms remove "rdna1-mtype/$version" -k "$kver" >/dev/null 2>&1 || true
	in_root dkms install "rdna1-mtype/$version" -k "$kver" >"$1.dkms" 2>&1 || return 1
	cp "$makelog" "$1"
}
for shape in arch ubuntu; do
	in_root sh /tmp/headers-shape.sh "$shape" "$kver" /var/tmp/rdna1-shipped-metadata ||
		die "could not lay out $kver's headers as $shape's"
	slog=$out/dkms-make-$shape.log
	dkms_again "$slog" || { tail -n 30 "$slog.dkms" "$makelog" >&2; die "dkms install against $shape's headers failed"; }
	grep -q "^rdna1-mtype: Linux $kver: using the Rust metadata its headers ship (/\(usr/\)\{0,1\}lib/modules/$kver/build/rust)$" "$slog" ||
		die "the DKMS build against $shape's headers did not use the metadata they ship ($slog)"
	! grep -q "rebuilding the kernel's Rust metadata\|reusing its Rust metadata" "$slog" ||
		die "the DKMS build against $shape's headers rebuilt or reused metadata ($slog)"
	grep -q "Linux $kver: the hook's contract holds" "$slog" || die "no contract check against $shape's headers ($slog)"
	sko=$(find "$mnt/usr/lib/modules/$kver/updates/dkms" -name 'rdna1_mtype.ko*' | head -n1)
	[ -n "$sko" ] || die "dkms install against $shape's headers installed no module"
	unpack_ko "$sko" "$out/test-modules/rdna1_mtype_$shape.ko"
	# The same module as Debian's DKMS built: the Debian boot's cases hold for it too (case 89
	# also loads it).
	python3 "$here/same-module.py" "$deb_ko" "$out/test-modules/rdna1_mtype_$shape.ko" >"$out/same-module-$shape.txt" ||
		die "the module built against $shape's headers differs from Debian's build: $(cat "$out/same-module-$shape.txt")"
	log "debian: $shape's layout: shipped metadata used; $(cat "$out/same-module-$shape.txt")"
done
# A rustc other than the one CONFIG_RUSTC_VERSION_TEXT names, as the only one: the toolchain
# make test builds with (RUST_TOOLCHAIN), read-only, root's, in place of sid's.
sysroot=$(rustup run "$RUST_TOOLCHAIN" rustc --print sysroot)
second=/usr/lib/rust-$RUST_TOOLCHAIN
for d in bin lib; do
	mkdir -p "$mnt$second/$d"
	mount --bind "$sysroot/$d" "$mnt$second/$d"
	mount -o remount,bind,ro "$mnt$second/$d"
	mounts+=("$mnt$second/$d")
done
mv "$mnt/usr/bin/rustc" "$mnt/usr/bin/rustc.sid"
ln -s "$second/bin/rustc" "$mnt/usr/bin/rustc"
want=$(sed -n 's/^CONFIG_RUSTC_VERSION_TEXT="\(.*\)"$/\1/p' "$mnt/usr/lib/modules/$kver/build/.config")
dkms_again "$out/dkms-make-wrong-rustc.log" && die "dkms install built with rustc $RUST_TOOLCHAIN for a kernel of \"$want\""
# A failed build's log stays in DKMS's build dir.
cp "$mnt/var/lib/dkms/rdna1-mtype/$version/build/make.log" "$out/dkms-make-wrong-rustc.log" ||
	{ tail -n 20 "$out/dkms-make-wrong-rustc.log.dkms" >&2; die "no make.log of the wrong-rustc build"; }
refusal=$(grep '^rdna1-mtype: .*no such rustc' "$out/dkms-make-wrong-rustc.log" || true)
[[ $refusal != *$'\n'* && $refusal == *"\"$want\"; no such rustc found. Install it: "*"Debian apt install rustc;"*" Tried: rustc: rustc $RUST_TOOLCHAIN "* ]] ||
	die "rustc $RUST_TOOLCHAIN was not refused in one line naming \"$want\" ($out/dkms-make-wrong-rustc.log): $refusal"
log "debian: rustc $RUST_TOOLCHAIN refused in one line: ${refusal#rdna1-mtype: }"
rm "$mnt/usr/bin/rustc"
mv "$mnt/usr/bin/rustc.sid" "$mnt/usr/bin/rustc"
# Debian's layout and Debian's build back, for the boot.
in_root sh /tmp/headers-shape.sh debian "$kver" || die "could not put Debian's headers back"
mkdir -p "${ko%/*}"
cp "$deb_ko.orig" "$ko"

log "debian: initramfs with Debian's modules (amdgpu and what it needs) and the DKMS module"
tree=$out/modules/$kver
rm -rf "$out/modules" && mkdir -p "$tree"
cp "$mnt/usr/lib/modules/$kver"/modules.{builtin,builtin.modinfo,order} "$tree/"
{
	in_root modprobe -S "$kver" --show-depends amdgpu | awk '$1 == "insmod" { print $2 }'
	echo "${ko#"$mnt"}"
} | sort -u | while read -r m; do
	rel=${m#/usr/lib/modules/$kver/}
	rel=${rel#/lib/modules/$kver/}
	mkdir -p "$tree/$(dirname "$rel")"
	case $m in
	*.xz) xz -dc "$mnt$m" >"$tree/${rel%.xz}" ;;
	*.zst) zstd -qdc "$mnt$m" >"$tree/${rel%.zst}" ;;
	*) cp "$mnt$m" "$tree/$rel" ;;
	esac
done
RDNA1_MODULES_TREE=$tree RDNA1_TEST_MODULES=$out/test-modules RDNA1_SYSROOT=$mnt \
	"$top/tests/vm/mkinitramfs.sh" - "$out/initramfs.cpio"
image=$mnt/usr/lib/modules/$kver/vmlinuz
[ -f "$image" ] || image=$mnt/boot/vmlinuz-$kver
cp "$image" "$out/vmlinuz"

# Built: make test's checks lane may have the CPU back (tests/run.sh).
[ -z "${RDNA1_DEBIAN_READY:-}" ] || touch "$RDNA1_DEBIAN_READY"
log "debian: booting Debian's $kver (cases $CASES)"
RDNA1_STRICT=1 RDNA1_CASES=$CASES "$top/tests/vm/boot.sh" "$out/vmlinuz" "$out/initramfs.cpio" test \
	"$out/vm.log" "$limit"
