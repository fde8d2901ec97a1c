#!/usr/bin/env bash
# One release of Debian's real kernel (tests/kernel/env.sh, DEBIAN_RELEASES), end to end, as a
# Debian user gets rdna1-mtype:
#   1. in that release's root (tests/debian/root.sh: sid for 7.2, trixie with backports for
#      7.3; this run writes only to an overlay on top of it) with Debian's linux-headers,
#      -binary, -modules and -source of the release and the rustc that built it, apt installs
#      our packages (tests/debian/packages.sh built them): DKMS builds rdna1_mtype.ko with that
#      rustc, rebuilding the Rust metadata Debian's headers leave out
#      (kmod/dkms-rust-metadata.sh; or reusing what an earlier run rebuilt with the same key,
#      below) and checking the hook's contract on Debian's amdgpu.ko (rdna1ctl check-kernel);
#   2. 7.2 only: the same headers laid out as Arch's and Ubuntu's, which ship the metadata
#      (tests/debian/shipped-metadata.sh);
#   3. build the test harness the same way, boot Debian's own vmlinuz (TCG) with Debian's
#      modules, the DKMS-built rdna1_mtype.ko and the packaged rdna1ctl, and run the cases
#      whose header names the kernel debian, or debian-RELEASE (below), against Debian's real
#      amdgpu.
# usage: run.sh RELEASE OUT_DIR LIMIT_S DEBS_DIR   (LIMIT_S: the time the boot may take)
# Writes OUT_DIR/vm.log and its per-case results OUT_DIR/vm.log.results.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
rel=$1 out=$2 limit=$3 debs_dir=$4
. "$top/tests/kernel/env.sh"
. "$here/overlay.sh"
debian_release "$rel"
kver=$DR_KVER
# The cases whose header says `# kernels: ... debian` or `debian-RELEASE` (docs/TESTING.md,
# "Adding a case"): policy, guards, stats, status, set/apply/events, the BTF layout and
# check-kernel/doctor, cases that need no test-kernel-only feature. verify (96, 98) needs
# CONFIG_TRACE_EVENT_INJECT to stand in for a GPU's page-table updates; Debian's kernel has
# none, so verify runs in the test kernel's boots only. RDNA1_DEBIAN_CASES=20,30 runs fewer
# (those of them this release runs).
CASES=$("$top/tests/vm/cases-with.sh" "kernels: (.* )?debian(-${rel//./\\.})?( .*)?")
[ -n "$CASES" ] || die "no case header says '# kernels: ... debian' or 'debian-$rel'"
if [ -n "${RDNA1_DEBIAN_CASES:-}" ]; then
	CASES=$(comm -12 <(tr , '\n' <<<"$RDNA1_DEBIAN_CASES" | sort) <(tr , '\n' <<<"$CASES" | sort) | sort -n | paste -sd, -)
	[ -n "$CASES" ] || die "Debian $rel runs none of RDNA1_DEBIAN_CASES=$RDNA1_DEBIAN_CASES"
fi
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$top/Cargo.toml" | head -n1)
debs=("rdna1ctl_${version}_amd64.deb" "rdna1-mtype-dkms_${version}_all.deb")
for d in "${debs[@]}"; do [ -f "$debs_dir/$d" ] || die "no $debs_dir/$d (tests/debian/packages.sh)"; done

# The builds below run niced while make test builds what its first VM boot waits for (env.sh,
# niced; tests/run.sh); the boot never is (a starved TCG guest misjudges time).
lower=$(niced "$here/root.sh" "$rel")
overlay_up "$lower" "$out"
mkdir -p "$mnt/build"
cp "${debs[@]/#/$debs_dir/}" "$mnt/build/"
# The test harness's sources, built below against the same kernel build dir: the files git
# knows, not what the test kernel's build (tests/vm/build-modules.sh) writes beside them.
(cd "$top" && git ls-files -z --cached --others --exclude-standard tests/modules/harness tests/modules/include |
	tar --null -T - -cf -) | tar -xf - -C "$mnt/build"
[ -f "$mnt/build/tests/modules/harness/Kbuild" ] || die "the harness sources did not reach the root"

# The Rust metadata DKMS rebuilds for $kver (kmod/dkms-rust-metadata.sh, a few minutes) is kept
# from the last run that made it, per root (whose tools it was made with). The script reuses it
# only when its own key matches (headers and linux-source versions, rustc, bindgen, the
# .config and the script itself): a change to any of them rebuilds it here, and that rebuild
# is kept for the runs after.
meta_cache=$RDNA1_CACHE/debian-metadata/$rel/$(basename "$lower")
meta=/var/cache/rdna1-mtype/kbuild/$kver
find "$RDNA1_CACHE/debian-metadata/$rel" -mindepth 1 -maxdepth 1 ! -name "$(basename "$lower")" -exec rm -rf {} + 2>/dev/null || true
# Where it was kept before there were several releases.
rm -rf "$RDNA1_CACHE/debian-kbuild"
if [ -f "$meta_cache/$kver/.rdna1-key" ]; then
	mkdir -p "$mnt${meta%/*}"
	cp -a "$meta_cache/$kver" "$mnt$meta"
fi

log "debian $rel: apt install (DKMS builds rdna1_mtype for $kver)"
in_root apt-get install -y "${debs[@]/#//build/}" >"$out/apt-install.log" 2>&1 ||
	{ tail -n 40 "$out/apt-install.log" >&2; die "apt install of the packages failed"; }
st=$(in_root dkms status -m rdna1-mtype)
[[ $st == "rdna1-mtype/$version, $kver, x86_64: installed" ]] || die "dkms status: $st"
# The build went through the contract check and the rebuilt Rust metadata, as its log says.
makelog=$mnt/var/lib/dkms/rdna1-mtype/$version/$kver/x86_64/log/make.log
cp "$makelog" "$out/dkms-make.log" || die "no DKMS make.log"
grep -q "Linux $kver: the hook's contract holds" "$out/dkms-make.log" ||
	die "the DKMS build did not check the contract ($out/dkms-make.log)"
if grep -q "rebuilding the kernel's Rust metadata from linux-source-$rel $DR_VERSION" "$out/dkms-make.log"; then
	log "debian $rel: DKMS rebuilt the kernel's Rust metadata (kept for the next runs)"
	rm -rf "$meta_cache/$kver.new"
	mkdir -p "$meta_cache"
	cp -a "$mnt$meta" "$meta_cache/$kver.new"
	rm -rf "$meta_cache/$kver"
	mv "$meta_cache/$kver.new" "$meta_cache/$kver"
elif grep -q "Linux $kver: reusing its Rust metadata in $meta" "$out/dkms-make.log"; then
	log "debian $rel: DKMS reused the Rust metadata an earlier run rebuilt with the same key ($(cat "$mnt$meta/.rdna1-key"))"
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

log "debian $rel: the test harness, built against the same kernel build dir"
kbuild=/var/cache/rdna1-mtype/kbuild/$kver
in_root sh -c "mkdir -p /tmp/amd && tar -xf /usr/src/linux-source-$rel.tar.xz -C /tmp/amd --strip-components=5 \
	linux-source-$rel/drivers/gpu/drm/amd && make -C $kbuild M=/build/tests/modules/harness \
	AMD=/tmp/amd modules" >"$out/harness-build.log" 2>&1 || { tail -n 30 "$out/harness-build.log" >&2; die "harness build failed"; }
# The module as DKMS built it, but with another amdgpu BTF id: what an amdgpu replaced after
# the build looks like to it (case 88).
cat >"$mnt/tmp/stale-build.sh" <<'EOF'
set -eu
version=$1 kver=$2
cp -r "/usr/src/rdna1-mtype-$version" /tmp/stale
cd /tmp/stale/kmod
# dkms-make.sh ends by running make with its arguments: one more, last, overrides the id.
sed 's/^exec "$mk" -C "$here" "$@"$/& RDNA1_AMDGPU_BTF_ID=0x1/' dkms-make.sh >dkms-make-stale.sh
grep -q 'RDNA1_AMDGPU_BTF_ID=0x1$' dkms-make-stale.sh
sh dkms-make-stale.sh "/usr/lib/modules/$kver/build" "$kver"
EOF
in_root sh /tmp/stale-build.sh "$version" "$kver" >"$out/stale-build.log" 2>&1 ||
	{ tail -n 30 "$out/stale-build.log" >&2; die "stale module build failed"; }
mkdir -p "$out/test-modules"
cp "$mnt"/build/tests/modules/harness/*.ko "$out/test-modules/"
cp "$mnt/tmp/stale/kmod/rdna1_mtype.ko" "$out/test-modules/rdna1_mtype_stale.ko"

# Without the matching kernel source the build names the package to install (last: the
# builds above needed it; the overlay forgets the removal).
in_root dpkg --remove "linux-source-$rel" >"$out/remove-source.log" 2>&1 || die "dpkg --remove linux-source-$rel failed"
msg=$(in_root sh "/usr/src/rdna1-mtype-$version/kmod/dkms-rust-metadata.sh" "/usr/lib/modules/$kver/build" \
	"$kver" rustc 2>&1) && die "dkms-rust-metadata.sh went on without linux-source-$rel"
[[ $msg == *"apt install linux-source-$rel=$DR_VERSION"* ]] || die "missing-source message: $msg"

if [ "$rel" = 7.2 ]; then
	# Arch's and Ubuntu's layouts of these headers, and the wrong-rustc refusal.
	. "$here/shipped-metadata.sh"
fi

log "debian $rel: initramfs with Debian's modules (amdgpu and what it needs) and the DKMS module"
tree=$out/modules/$kver
rm -rf "$out/modules" && mkdir -p "$tree"
cp "$mnt/usr/lib/modules/$kver"/modules.{builtin,builtin.modinfo,order} "$tree/"
{
	in_root modprobe -S "$kver" --show-depends amdgpu | awk '$1 == "insmod" { print $2 }'
	echo "${ko#"$mnt"}"
} | sort -u | while read -r m; do
	path=${m#/usr/lib/modules/$kver/}
	path=${path#/lib/modules/$kver/}
	mkdir -p "$tree/$(dirname "$path")"
	case $m in
	*.xz) xz -dc "$mnt$m" >"$tree/${path%.xz}" ;;
	*.zst) zstd -qdc "$mnt$m" >"$tree/${path%.zst}" ;;
	*) cp "$mnt$m" "$tree/$path" ;;
	esac
done
RDNA1_MODULES_TREE=$tree RDNA1_TEST_MODULES=$out/test-modules RDNA1_SYSROOT=$mnt \
	"$top/tests/vm/mkinitramfs.sh" - "$out/initramfs.cpio"
image=$mnt/usr/lib/modules/$kver/vmlinuz
[ -f "$image" ] || image=$mnt/boot/vmlinuz-$kver
cp "$image" "$out/vmlinuz"

# Built: make test's checks lane may have the CPU back (tests/run.sh).
[ -z "${RDNA1_DEBIAN_READY:-}" ] || touch "$RDNA1_DEBIAN_READY"
log "debian $rel: booting Debian's $kver (cases $CASES)"
RDNA1_STRICT=1 RDNA1_CASES=$CASES "$top/tests/vm/boot.sh" "$out/vmlinuz" "$out/initramfs.cpio" test \
	"$out/vm.log" "$limit"
