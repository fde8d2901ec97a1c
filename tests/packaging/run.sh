#!/usr/bin/env bash
# The Arch and RPM packages, built as their distributions build them, with the tools Debian
# packages (tests/sid-tools: makepkg, pacman, rpmbuild, rpmlint; cargo and rustc 1.97.1):
#   1. makepkg (as an unprivileged user, no dependency check: this is not Arch) builds
#      rdna1-mtype-dkms and rdna1ctl from packaging/arch-source.sh's PKGBUILD and tarball;
#      pacman --root installs both into an empty root. Asserted: the root holds exactly
#      tests/install/expected-files.txt (install.sh's one list), the DKMS package owns the
#      module's source and dkms.conf, depends on dkms and rust, and the config is a backup file;
#      zsh's completion is in site-functions (Arch's zsh reads it, not Debian's
#      vendor-completions); rdna1ctl has python as an optional dependency (battery.py) and
#      the crates' licence notices in /usr/share/licenses/rdna1ctl.
#   2. rpmbuild (unprivileged) builds rdna1-mtype-dkms and rdna1ctl from packaging/rpm-source.sh's
#      spec and tarball; rpmlint reports no error on the spec and the packages (but those
#      packaging/rpm/rdna1-mtype.rpmlintrc says why it filters). Asserted: the two
#      packages hold exactly the same list (zsh's in site-functions), the DKMS one runs dkms in
#      %post and %preun, rdna1ctl runs systemd's scriptlets (systemd-update-helper) and
#      recommends python3, the config is %config(noreplace), %check ran the installed rdna1ctl,
#      the licence files (the crates' notices among them) are %license, rdna1ctl provides
#      bundled(crate(...)) for what its build compiled,
#      cargo left its debug info in the binary, and rpm split it into rdna1ctl-debuginfo
#      (with rdna1-mtype-debugsource, as Fedora's per-subpackage settings make them).
#   0. static.sh: what the packaging files promise without a build (dkms.conf, Debian's
#      changelog date, control, postrm, the spec's scriptlets).
# rdna1ctl's cargo builds are kept in ~/.cache/rdna1-mtype/packaging-cargo-target/KEY (env.sh,
# cargo_cache), one per format.
# usage: run.sh OUT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$1
. "$top/tests/kernel/env.sh"
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$top/Cargo.toml" | head -n1)
user=65534
w=$out/work
rm -rf "$w" "$out/dist" && mkdir -p "$w"
log "packaging: the packaging files (tests/packaging/static.sh)"
"$here/static.sh" "$top" 2>"$out/static.log" || { cat "$out/static.log" >&2; die "tests/packaging/static.sh failed ($out/static.log)"; }
# Kbuild's passing files are not source: the tarball, made while the modules stage may be
# compiling in kmod/ and tests/modules/, must hold none (a file kbuild removes between git's
# listing and tar's read fails the tarball). A .tmp_PID directory in each place stands in for them.
probes=("$top/kmod/.tmp_rdna1probe" "$top/tests/modules/harness/.tmp_rdna1probe")
trap 'rm -rf "${probes[@]}"' EXIT
for p in "${probes[@]}"; do mkdir -p "$p" && : >"$p/tmp"; done
tarball=$(SOURCE_DATE_EPOCH=1 "$top/packaging/source-tarball.sh" "$out/dist")
rm -rf "${probes[@]}"
if tar -tzf "$tarball" | grep -F .tmp_rdna1probe >&2; then
	die "the source tarball holds kbuild's temporary files (above): .gitignore must ignore them"
fi
# The cargo targets (env.sh, cargo_cache): a fresh clone of the same sources rebuilds nothing,
# other sources only the workspace's crates.
# The key of the very tree that is built (the tarball's), not of the checkout.
mkdir -p "$w/keysrc"
tar -xzf "$tarball" -C "$w/keysrc"
key=$("$top/packaging/workspace-key.sh" "$w/keysrc/rdna1-mtype-$version")
rm -rf "$w/keysrc"
target=$(cargo_cache "$RDNA1_CACHE/packaging-cargo-target" "$key")
TARBALL=$tarball "$top/packaging/arch-source.sh" "$w/arch" >/dev/null
TARBALL=$tarball "$top/packaging/rpm-source.sh" "$w/rpm" >/dev/null
chown -R "$user:$user" "$w" "$target"
# as_user CMD...: in the tools root as nobody, the work dir at /home, the cargo target at /srv
# (one per package format: their builds differ in path and flags, and would rebuild each other's).
# Unoptimised, without the release profile's LTO and single codegen unit: what is checked here
# is the packages, not the binary (the Debian stage builds and runs the shipped profile's). Both
# builds from nothing then take 131 s and 217 CPU-s instead of 265 s and 489 CPU-s (optimised,
# docs/MEASUREMENTS.md, session 13): on a cold run they share the CPUs with the VM boots.
as_user() {
	RDNA1_ENV="HOME=/home CARGO_TARGET_DIR=/srv/$format CARGO_PROFILE_RELEASE_OPT_LEVEL=0 CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16" \
		"$top/tests/sid-tools/run.sh" \
		--rw "$w:/home" --rw "$target:/srv" -- setpriv --reuid=$user --regid=$user --clear-groups "$@"
}
as_root() { "$top/tests/sid-tools/run.sh" --rw "$w:/home" -- "$@"; }
# Arch's and Fedora's zsh read site-functions: their packages put the completion there
# (install.sh's ZSHCOMPDIR), not in Debian's vendor-completions (install.sh's default).
expected=$(sed -e "s/VERSION/$version/" -e 's|^usr/share/zsh/vendor-completions/|usr/share/zsh/site-functions/|' \
	"$top/tests/install/expected-files.txt" | sort)
same_list() { # WHAT LIST: LIST (files, one per line) is install.sh's list
	# Man pages come compressed, as every packager's tool does it (makepkg's zipman, rpm's
	# brp-compress, Debian's dh_compress). The licence files are the package's, not install.sh's
	# (checked apart: licences), and rpm links the binary's build id to it in /usr/lib/.build-id.
	if ! diff -u <(echo "$expected") <(echo "$2" | grep -v -e '^usr/share/licenses/' -e '^usr/lib/\.build-id/' |
		sed 's|^\(usr/share/man/.*\)\.gz$|\1|' | sort) >"$out/$1.diff"; then
		cat "$out/$1.diff" >&2
		die "$1 does not hold exactly tests/install/expected-files.txt (diff above)"
	fi
}

# The crates' own versions in Cargo.lock, for what the packages must say of them.
lock_version() { awk -v n="$1" '$0 == "name = \"" n "\"" { getline; gsub(/version = |"/, ""); print; exit }' "$top/Cargo.lock"; }
xz_version=$(lock_version xz4rust)
[ -n "$xz_version" ] || die "no xz4rust in Cargo.lock"
# notices FILE: THIRD-PARTY-LICENSES as packaged: linked crates with their own licence texts
# (xz4rust's MIT notice; btf-rs's LGPL; tracepoint_decode, which ships no licence file, with
# Microsoft's copyright line), never a crate rdna1ctl does not link (spdx: a dev-dependency;
# serde_derive: a proc macro, run by the compiler).
notices() {
	local f=$1
	grep -qx "xz4rust $xz_version: MIT" "$f" || die "$f: no 'xz4rust $xz_version: MIT'"
	grep -q '^btf-rs .*: LGPL-2.1-or-later$' "$f" || die "$f: no btf-rs (LGPL-2.1-or-later)"
	sed -n '/^tracepoint_decode /,/^=====/p' "$f" | grep -q 'Copyright (c) Microsoft Corporation' ||
		die "$f: tracepoint_decode without its copyright line"
	grep -q 'Permission is hereby granted' "$f" || die "$f: no MIT text"
	! grep -Eq '^(spdx|serde_derive) ' "$f" || die "$f: lists a crate rdna1ctl does not link: $(grep -E '^(spdx|serde_derive) ' "$f")"
}

log "packaging: makepkg (rdna1-mtype-dkms, rdna1ctl $version)"
format=arch
# Arch's own package suffix (Debian's makepkg.conf says .pkg.tar.gz).
as_user sh -c 'cd /home/arch && PKGEXT=.pkg.tar.zst makepkg --nodeps --noconfirm --noprogressbar' >"$out/makepkg.log" 2>&1 ||
	{ tail -n 30 "$out/makepkg.log" >&2; die "makepkg failed ($out/makepkg.log)"; }
pkgs=()
for p in rdna1-mtype-dkms rdna1ctl; do
	f=$(cd "$w/arch" && echo "$p-$version-1-"*.pkg.tar.zst)
	[ -f "$w/arch/$f" ] || die "makepkg made no $p package ($out/makepkg.log)"
	pkgs+=("/home/arch/$f")
done
mkdir -p "$w/pacroot/var/lib/pacman"
# Arch's pacman.conf takes unsigned local packages (LocalFileSigLevel = Optional); Debian's
# default requires a signature everywhere.
printf '[options]\nArchitecture = auto\nSigLevel = Required DatabaseOptional\nLocalFileSigLevel = Optional\n' >"$w/pacman.conf"
pac() { as_root pacman --config /home/pacman.conf --root /home/pacroot --dbpath /home/pacroot/var/lib/pacman "$@"; }
pac -U --noconfirm --nodeps --nodeps --noscriptlet "${pkgs[@]}" >"$out/pacman.log" 2>&1 ||
	{ tail -n 20 "$out/pacman.log" >&2; die "pacman -U --root failed ($out/pacman.log)"; }
same_list pacman-root "$(cd "$w/pacroot" && find . -path ./var/lib/pacman -prune -o ! -type d -print | sed 's|^\./||')"
info=$(pac -Qi rdna1-mtype-dkms rdna1ctl)
echo "$info" >"$out/pacman-Qi.txt"
dkms_info=$(echo "$info" | sed -n '/^Name *: rdna1-mtype-dkms/,/^$/p')
[[ $dkms_info == *"Depends On"*dkms*rdna1ctl=$version*rust* ]] || die "rdna1-mtype-dkms's dependencies: $dkms_info"
owner=$(pac -Qo "/home/pacroot/usr/src/rdna1-mtype-$version/dkms.conf" 2>&1 || true)
[[ $owner == *"is owned by rdna1-mtype-dkms $version-1"* ]] || die "dkms.conf's owner: $owner"
pkginfo=$(as_root sh -c "tar -xOf ${pkgs[1]} .PKGINFO")
grep -qx "etc/rdna1-mtype/config.toml" <(echo "$pkginfo" | sed -n 's/^backup = //p') ||
	die "rdna1ctl's config.toml is not a backup file"
grep -q '^optdepend = python: ' <<<"$pkginfo" || die "rdna1ctl has no optdepends on python (battery.py): $pkginfo"
[[ $dkms_info == *"Description"*"exact rustc that built the kernel"* ]] ||
	die "rdna1-mtype-dkms's description does not say it needs the exact rustc of the kernel: $dkms_info"
# Arch: the crates' notices where Arch keeps licences (GPL and LGPL are in its licenses package).
lic=$(cd "$w/pacroot" && { find usr/share/licenses -type f 2>/dev/null || true; } | sort)
[ "$lic" = usr/share/licenses/rdna1ctl/THIRD-PARTY-LICENSES ] || die "Arch packages' licence files: ${lic:-none}"
notices "$w/pacroot/usr/share/licenses/rdna1ctl/THIRD-PARTY-LICENSES"

log "packaging: rpmbuild and rpmlint (rdna1-mtype-dkms, rdna1ctl $version)"
format=rpm
# Fedora's rpm makes rdna1ctl-debuginfo and rdna1-mtype-debugsource with find-debuginfo
# (debugedit, elfutils' eu-strip: both in the tools root), one debuginfo package per
# subpackage (redhat-rpm-config's settings, given here: Debian's rpm makes one for all).
fedora_debug=(--define "_debuginfo_subpackages 1" --define "_debugsource_packages 1")
# The payloads at zstd level 3, not rpm's 19: what is checked is what the packages hold, and
# level 19 cost 30 more CPU-s per run (62 CPU-s against 92 for the stage, here).
as_root sh -c 'command -v eu-strip && command -v find-debuginfo' >/dev/null ||
	die "the tools root has no eu-strip or find-debuginfo (tests/sid-tools/root.sh: elfutils, debugedit)"
as_user rpmbuild -bb --nodeps --define "_topdir /home/rpm" --define "_binary_payload w3.zstdio" "${fedora_debug[@]}" /home/rpm/SPECS/rdna1-mtype.spec >"$out/rpmbuild.log" 2>&1 ||
	{ tail -n 30 "$out/rpmbuild.log" >&2; die "rpmbuild failed ($out/rpmbuild.log)"; }
# %check ran (a failing check fails rpmbuild): it runs the installed binary.
grep -Eq '^\++ .*/usr/bin/rdna1ctl --version$' "$out/rpmbuild.log" || die "rpmbuild ran no %check of the installed rdna1ctl ($out/rpmbuild.log)"
# Debug info, not stripped by cargo: what find-debuginfo splits off (the packaged binary is
# stripped by rpm).
as_user readelf -S /srv/rpm/release/rdna1ctl | grep -q '\.debug_info' ||
	die "cargo built rdna1ctl without debug info (or stripped it): the spec must pass Fedora's %{build_rustflags}"
rpms=()
for p in "noarch/rdna1-mtype-dkms-$version-1" "x86_64/rdna1ctl-$version-1"; do
	f=$(cd "$w/rpm/RPMS" && echo "$p".*.rpm)
	[ -f "$w/rpm/RPMS/$f" ] || die "rpmbuild made no ${p#*/} package ($out/rpmbuild.log)"
	rpms+=("/home/rpm/RPMS/$f")
done
debuginfo=()
for p in rdna1ctl-debuginfo rdna1-mtype-debugsource; do
	f=$(cd "$w/rpm/RPMS" && echo "x86_64/$p-$version-1".*.rpm)
	[ -f "$w/rpm/RPMS/$f" ] || die "rpmbuild made no $p package ($out/rpmbuild.log)"
	debuginfo+=("/home/rpm/RPMS/$f")
done
# The binary's debug info is in rdna1ctl-debuginfo, by its build id.
as_root rpm -qpl --nosignature "${debuginfo[0]}" | grep -q '^/usr/lib/debug/usr/bin/rdna1ctl-.*\.debug$' ||
	die "rdna1ctl-debuginfo holds no /usr/lib/debug/usr/bin/rdna1ctl-*.debug"
# rpmlint on the debuginfo package, not on the debugsource one: that is the compiled sources as
# they are, vendored crates included (one ships CRLF line ends), with no binary by design.
as_user rpmlint -r /home/rpm/SPECS/rdna1-mtype.rpmlintrc /home/rpm/SPECS/rdna1-mtype.spec "${rpms[@]}" "${debuginfo[0]}" >"$out/rpmlint.log" 2>&1 ||
	{ cat "$out/rpmlint.log" >&2; die "rpmlint found errors ($out/rpmlint.log)"; }
# Files, not directories (a package owns its own directories too).
same_list rpm-packages "$(as_root rpm -qp --nosignature --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "${rpms[@]}" |
	sed -n 's|^[^d][^ ]* /||p')"
scripts=$(as_root rpm -qp --scripts --nosignature "${rpms[0]}")
[[ $scripts == *"postinstall"*"dkms add -m rdna1-mtype -v $version"*"dkms install -m rdna1-mtype -v $version"*"preuninstall"*"dkms remove -m rdna1-mtype -v $version --all"* ]] ||
	die "rdna1-mtype-dkms's scripts: $scripts"
as_root rpm -qpc --nosignature "${rpms[1]}" | grep -qx /etc/rdna1-mtype/config.toml || die "config.toml is not a %config file"
scripts=$(as_root rpm -qp --scripts --nosignature "${rpms[1]}")
[[ $scripts == *"postinstall"*"systemd-update-helper install-system-units rdna1-mtype.service"*"preuninstall"*"systemd-update-helper remove-system-units rdna1-mtype.service"* ]] ||
	die "rdna1ctl's scripts do not run systemd's scriptlets (%systemd_post, %systemd_preun): $scripts"
as_root rpm -qp --recommends --nosignature "${rpms[1]}" | grep -qx python3 || die "rdna1ctl does not recommend python3 (battery.py)"
# Licences: %license files in /usr/share/licenses, the crates' notices among them; rpm's
# bundled(crate(...)) Provides, generated from cargo-vendor.txt, for what the build compiled
# (xz4rust; serde_derive, a proc macro, too), not dev-dependencies (spdx) or the workspace's own.
# (Fedora's rpm names the directory after the package, Debian's, here, adds -VERSION.)
lic=$(as_root rpm -qp --nosignature --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "${rpms[@]}" |
	sed -n 's|^[^d][^ ]* \(/usr/share/licenses/\)|\1|p' |
	sed "s|^\(/usr/share/licenses/[^/]*\)-$version/|\1/|" | sort | tr '\n' ' ')
want="/usr/share/licenses/rdna1-mtype-dkms/COPYING /usr/share/licenses/rdna1ctl/COPYING /usr/share/licenses/rdna1ctl/LGPL-2.1-or-later.txt /usr/share/licenses/rdna1ctl/MIT.txt /usr/share/licenses/rdna1ctl/THIRD-PARTY-LICENSES /usr/share/licenses/rdna1ctl/cargo-vendor.txt "
[ "$lic" = "$want" ] || die "the RPMs' licence files: $lic, want $want"
mkdir -p "$w/rpm-files"
as_root rpm2cpio "${rpms[1]}" >"$w/rdna1ctl.cpio"
(cd "$w/rpm-files" && cpio -idm --quiet '*/THIRD-PARTY-LICENSES' <"$w/rdna1ctl.cpio")
notices "$(find "$w/rpm-files" -name THIRD-PARTY-LICENSES)"
provides=$(as_root rpm -qp --provides --nosignature "${rpms[1]}")
echo "$provides" >"$out/rpm-provides.txt"
grep -qx "bundled(crate(xz4rust)) = $xz_version" <<<"$provides" || die "rdna1ctl does not provide bundled(crate(xz4rust)) = $xz_version ($out/rpm-provides.txt)"
grep -q '^bundled(crate(serde_derive)) = ' <<<"$provides" || die "rdna1ctl does not provide bundled(crate(serde_derive)) ($out/rpm-provides.txt)"
# RPM's form of a Cargo version, as cargo2rpm writes it: build metadata dropped (toml's
# "1.2.1+spec-1.1.0" is 1.2.1), a pre-release after "~" (1.0.0-alpha.1: 1.0.0~alpha.1).
toml_version=$(lock_version toml)
grep -qx "bundled(crate(toml)) = ${toml_version%%+*}" <<<"$provides" ||
	die "rdna1ctl's toml Provides is not ${toml_version%%+*} (Cargo.lock: $toml_version): $(grep 'crate(toml)' <<<"$provides")"
! grep -Eq '^bundled\(crate\((spdx|rdna1ctl|rdna1-mtype-shared)\)\)' <<<"$provides" ||
	die "rdna1ctl provides a crate its build did not bundle: $(grep -E 'crate\((spdx|rdna1ctl|rdna1-mtype-shared)\)' <<<"$provides")"
as_root rpm -qp --qf '%{DESCRIPTION}' --nosignature "${rpms[0]}" | tr '\n' ' ' | grep -q 'exact rustc that built the kernel' ||
	die "rdna1-mtype-dkms's description does not say it needs the exact rustc of the kernel"
log "packaging: both formats install exactly install.sh's $(grep -c . <<<"$expected") files and their licences ($(grep -c '^bundled(crate(' <<<"$provides") bundled crates); rpmlint: $(tail -n 1 "$out/rpmlint.log" | sed 's/; has taken.*//')"
