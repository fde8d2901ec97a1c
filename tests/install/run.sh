#!/usr/bin/env bash
# Install tests on the host, with the real tools:
#  1. make install DESTDIR=stage: exactly the expected files; the config survives a reinstall;
#  2. systemd-analyze verify of the installed unit (its paths filled in, its modprobe allowed
#     to fail), udevadm verify of the installed rule;
#  3. the installed rdna1ctl reads the installed config (apply --dry-run);
#  4. the real dkms: add, build, install, status, remove of the staged source tree against the
#     pinned test kernel, in private dkms/install trees; the built .ko is left in OUT/dkms for
#     the VM (case 14 loads it);
#  5. make uninstall: nothing left but the config; PURGE=1: nothing at all.
# The staged tree is kept in OUT/installed for the VM (case 12 boots with it). The DKMS scripts'
# own checks, which the VM needs nothing from, are tests/install/dkms-scripts.sh (a stage of
# its own: its failure does not keep the VM's cases from running).
# usage: tests/install/run.sh OUT_DIR KBUILD_DIR RDNA1CTL_BINARY
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/kernel/env.sh"
out=$1 kb=$2 bin=$3
rel=$(cat "$kb/include/config/kernel.release")
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$top/Cargo.toml" | head -n1)
stage=$out/stage
mkdir -p "$out"
rm -rf "$stage" "$out/dkms"
export RDNA1CTL=$bin

log "install: make install DESTDIR=stage"
make -s -C "$top" install DESTDIR="$stage" 2>"$out/install.log" || { cat "$out/install.log" >&2; die "make install failed"; }
listing() { (cd "$stage" && find . -mindepth 1 \( -type f -o -type l \) | sed 's#^\./##' | sort); }
diff -u <(sed "s/VERSION/$version/" "$top/tests/install/expected-files.txt" | sort) <(listing) ||
	die "make install did not install exactly tests/install/expected-files.txt (diff above)"
echo "# edited by the administrator" >>"$stage/etc/rdna1-mtype/config.toml"
make -s -C "$top" install DESTDIR="$stage" 2>>"$out/install.log"
grep -q 'edited by the administrator' "$stage/etc/rdna1-mtype/config.toml" || die "reinstall overwrote the config"

log "install: systemd-analyze verify, udevadm verify"
# The unit's commands must exist in the root it is checked in: the installed rdna1ctl, and
# the machine's own modprobe, copied in for the check and removed after it.
mkdir -p "$stage/sbin"
cp "$(command -v modprobe)" "$stage/sbin/modprobe"
sa=$(systemd-analyze verify --root="$stage" --man=no rdna1-mtype.service 2>&1) ||
	die "systemd-analyze verify failed: $sa"
[ -z "$sa" ] || die "systemd-analyze verify complained: $sa"
rm -rf "$stage/sbin"
unit=$stage/usr/lib/systemd/system/rdna1-mtype.service
! grep -n '@[A-Z]*@' "$unit" || die "install.sh left placeholders in the unit (above)"
grep -qx 'ExecStart=/usr/bin/rdna1ctl apply --config /etc/rdna1-mtype/config.toml' "$unit" ||
	die "the unit's ExecStart: $(grep ExecStart= "$unit")"
# A kernel without the DKMS module must not fail the unit at boot.
grep -qx 'ExecStartPre=-/sbin/modprobe rdna1_mtype' "$unit" || die "the unit's modprobe is fatal: $(grep ExecStartPre= "$unit")"
# Style issues count too (no --no-style).
udevadm-verify verify "$stage/usr/lib/udev/rules.d/70-rdna1-mtype.rules" >"$out/udevadm.log" 2>&1 ||
	{ cat "$out/udevadm.log" >&2; die "udevadm verify failed"; }
grep -q 'Fail: *0' "$out/udevadm.log" || { cat "$out/udevadm.log" >&2; die "udevadm verify: failures"; }

log "install: the installed rdna1ctl reads the installed config"
"$stage/usr/bin/rdna1ctl" --root "$stage" apply --dry-run >"$out/apply.txt"
grep -q 'mode:    enforce' "$out/apply.txt" || die "apply --dry-run: $(cat "$out/apply.txt")"
man -l "$stage/usr/share/man/man8/rdna1ctl.8" >/dev/null 2>&1 || [ ! -x /usr/bin/man ] || die "the man page does not render"

log "install: dkms add/build/install/status/remove against $rel"
dk=$out/dkms-trees
rm -rf "$dk" && mkdir -p "$dk/tree" "$dk/modules/$rel"
trees=(--sourcetree "$stage/usr/src" --dkmstree "$dk/tree" --installtree "$dk/modules")
dkms add -m rdna1-mtype -v "$version" "${trees[@]}" >"$out/dkms.log" 2>&1 || { cat "$out/dkms.log" >&2; die "dkms add failed"; }
dkms build -m rdna1-mtype -v "$version" -k "$rel" --kernelsourcedir "$kb" "${trees[@]}" >>"$out/dkms.log" 2>&1 ||
	{ cat "$out/dkms.log" "$dk/tree/rdna1-mtype/$version/build/make.log" >&2; die "dkms build failed"; }
# --no-depmod: the install tree holds only our module; depmod runs on the VM's own tree.
dkms install -m rdna1-mtype -v "$version" -k "$rel" --kernelsourcedir "$kb" --no-depmod "${trees[@]}" >>"$out/dkms.log" 2>&1 ||
	{ cat "$out/dkms.log" >&2; die "dkms install failed"; }
st=$(dkms status -m rdna1-mtype "${trees[@]}")
[[ $st == "rdna1-mtype/$version, $rel, x86_64: installed" ]] || die "dkms status: $st"
ko=$dk/modules/$rel/updates/dkms/rdna1_mtype.ko
[ -f "$ko" ] || die "dkms installed no $ko"
modinfo -F version "$ko" | grep -qx "$version" || die "the DKMS module's version is not $version"
mkdir -p "$out/dkms" && cp "$ko" "$out/dkms/rdna1_mtype.ko"
dkms remove -m rdna1-mtype -v "$version" --all "${trees[@]}" >>"$out/dkms.log" 2>&1 || { cat "$out/dkms.log" >&2; die "dkms remove failed"; }
[ -z "$(dkms status -m rdna1-mtype "${trees[@]}")" ] || die "dkms status after remove: $(dkms status "${trees[@]}")"
[ ! -e "$ko" ] || die "dkms remove left $ko"
[ -z "$(ls -A "$dk/tree")" ] || die "dkms remove left $(ls -A "$dk/tree")"

# `dkms remove` while the module is loaded and /dev/rdna1_mtype held (VM case 62): it must only
# delete files and run depmod. Unloading a held module is refused anyway ("in use"), but a
# dkms that tried would fail its remove halfway.
if grep -nE '(^|[^a-z_])(rmmod|modprobe +(-[a-z]+ +)*-r|delete_module)([^a-z_]|$)' "$(command -v dkms)" >&2; then
	die "this dkms unloads modules on remove (lines above): case 62's assumption does not hold"
fi

# The installed tree, for the VM's boot test (case 12: modprobe.d, unit, config as installed).
rm -rf "$out/installed" && cp -a "$stage" "$out/installed"

log "install: make uninstall DESTDIR=stage"
make -s -C "$top" uninstall DESTDIR="$stage" 2>>"$out/install.log"
left=$(listing)
[ "$left" = etc/rdna1-mtype/config.toml ] || die "uninstall left more than the config: $left"
make -s -C "$top" uninstall DESTDIR="$stage" PURGE=1 2>>"$out/install.log"
left=$(cd "$stage" && find . -mindepth 1 -not -type d)
[ -z "$left" ] || die "uninstall PURGE=1 left: $left"
log "install: staged install, unit, rule, dkms cycle and uninstall passed"
