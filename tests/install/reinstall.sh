#!/usr/bin/env bash
# `sudo make install` as the administrator runs it (no DESTDIR: dkms, systemctl and udevadm
# run), twice, into a private root: PREFIX, SYSCONFDIR and CACHEDIR below WORK_DIR, the real
# dkms in private trees against the pinned test kernel (a stand-in on PATH adds them),
# systemctl and udevadm stand-ins that only log. Issue 39:
#  1. the second install succeeds and rebuilds the module ("DKMS failed, install the right
#     rustc, sudo make install again" must work; dkms refuses a second add);
#  2. the installed unit names PREFIX/bin and SYSCONFDIR, its modprobe may fail, and with no
#     module loaded its ExecStart says so and exits with a status the unit counts as success
#     (a wrong config still fails it);
#  3. make uninstall keeps the DKMS builds' cache and says so; PURGE=1 removes it;
#  4. under sudo (SUDO_USER), rdna1ctl is not built as root: cargo runs as that user, and
#     when that user has none the message says what to do.
# usage: reinstall.sh WORK_DIR KBUILD_DIR RDNA1CTL_BINARY   (as root)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/install/work-dir.sh"
work_dir reinstall.sh "$1" bin root trees/tree trees/modules
kb=$2
bin=$3
rel=$(cat "$kb/include/config/kernel.release")
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$top/Cargo.toml" | head -n1)
root=$work/root
dk=$work/trees
mkdir -p "$dk/modules/$rel"
dkms=$(command -v dkms)

cat >"$work/bin/dkms" <<EOF
#!/bin/sh
# The real dkms in this test's trees; builds and installs for the test kernel; no depmod
# (the install tree holds only this module). While WORK_DIR/fail-build exists, a build fails
# as one without the kernel's rustc does, leaving the module added, not built.
case \$1 in build | install) set -- "\$@" -k "$rel" --kernelsourcedir "$kb" ;; esac
case \$1 in build | install) [ ! -e "$work/fail-build" ] || { echo "stand-in: the build failed" >&2; exit 10; } ;; esac
exec "$dkms" "\$@" --no-depmod --sourcetree "$root/usr/src" --dkmstree "$dk/tree" --installtree "$dk/modules"
EOF
for t in systemctl udevadm; do
	printf '#!/bin/sh\necho "%s $*" >>"%s"\n' "$t" "$work/calls" >"$work/bin/$t"
done
chmod 755 "$work/bin/"*
run() {
	PATH="$work/bin:$PATH" PREFIX="$root/usr" SYSCONFDIR="$root/etc" \
		CACHEDIR="$root/var/cache/rdna1-mtype" RDNA1CTL="$bin" "$@"
}
built=$dk/tree/rdna1-mtype/$version/$rel/x86_64/module/rdna1_mtype.ko
ko=$dk/modules/$rel/updates/dkms/rdna1_mtype.ko

# 1. A failed DKMS build, then again (the issue's "install the right rustc, make install
# again"), then again: the last rebuilds.
touch "$work/fail-build"
if run sh "$top/install.sh" install >"$work/install-0.log" 2>&1; then
	bad "make install succeeded with a failing DKMS build"
fi
grep -q 'dkms could not build rdna1_mtype.*run this again' "$work/install-0.log" ||
	bad "a failed DKMS build: the message does not say to run make install again: $(cat "$work/install-0.log")"
rm "$work/fail-build"
run sh "$top/install.sh" install >"$work/install-1.log" 2>&1 ||
	{ cat "$work/install-1.log" >&2; bad "make install after a failed DKMS build failed"; }
[ -f "$ko" ] || bad "the first make install installed no $ko"
touch "$work/marker" && sleep 1
run sh "$top/install.sh" install >"$work/install-2.log" 2>&1 ||
	{ cat "$work/install-2.log" >&2; bad "a second make install (same version, same DKMS tree) failed"; }
[ "$built" -nt "$work/marker" ] || bad "the second make install did not rebuild $built"
[ "$ko" -nt "$work/marker" ] || bad "the second make install did not reinstall $ko"
st=$("$work/bin/dkms" status -m rdna1-mtype)
[ "$st" = "rdna1-mtype/$version, $rel, x86_64: installed" ] || bad "dkms status after two installs: $st"
grep -qx 'systemctl enable rdna1-mtype.service' "$work/calls" || bad "make install did not enable the unit: $(cat "$work/calls")"

# 2. The unit, as installed.
unit=$root/usr/lib/systemd/system/rdna1-mtype.service
cmd=$(sed -n 's/^ExecStart=//p' "$unit")
[ "$cmd" = "$root/usr/bin/rdna1ctl apply --config $root/etc/rdna1-mtype/config.toml" ] ||
	bad "the unit's ExecStart is not PREFIX/bin/rdna1ctl with SYSCONFDIR's config: $cmd"
pre=$(sed -n 's/^ExecStartPre=//p' "$unit")
[[ $pre == -*modprobe\ rdna1_mtype ]] || bad "the unit's modprobe fails the unit when there is no module: ExecStartPre=$pre"
ok=$(sed -n 's/^SuccessExitStatus=//p' "$unit")
# No module: an empty sysfs, the installed config where the unit reads it.
nomod=$work/no-module
mkdir -p "$nomod/sys" "$nomod$root/etc/rdna1-mtype"
cp "$root/etc/rdna1-mtype/config.toml" "$nomod$root/etc/rdna1-mtype/"
rc=0
RDNA1CTL_ROOT=$nomod $cmd >"$work/unit.out" 2>&1 || rc=$?
grep -q 'rdna1_mtype is not loaded: nothing applied' "$work/unit.out" || bad "ExecStart without the module says: $(cat "$work/unit.out")"
[ $rc = 0 ] || [[ " $ok " == *" $rc "* ]] || bad "ExecStart without the module exits $rc: the unit fails (SuccessExitStatus=$ok)"
echo 'bogus = 1' >>"$nomod$root/etc/rdna1-mtype/config.toml"
rc=0
RDNA1CTL_ROOT=$nomod $cmd >"$work/unit.out" 2>&1 || rc=$?
if [ $rc = 0 ] || [[ " $ok " == *" $rc "* ]]; then
	bad "ExecStart with a wrong config exits $rc, which the unit counts as success"
fi

# 3. Uninstall: the cache kept, and said; PURGE=1 removes it.
mkdir -p "$root/var/cache/rdna1-mtype/kbuild/$rel"
run sh "$top/install.sh" uninstall >"$work/uninstall.log" 2>&1 ||
	{ cat "$work/uninstall.log" >&2; bad "make uninstall failed"; }
[ -z "$("$work/bin/dkms" status -m rdna1-mtype)" ] || bad "make uninstall left it in DKMS"
[ -d "$root/var/cache/rdna1-mtype" ] || bad "make uninstall (no PURGE) removed the cache"
grep -q "kept $root/var/cache/rdna1-mtype.*PURGE=1" "$work/uninstall.log" ||
	bad "make uninstall did not say it kept the cache and how to remove it: $(cat "$work/uninstall.log")"
PURGE=1 run sh "$top/install.sh" uninstall >>"$work/uninstall.log" 2>&1 || bad "make uninstall PURGE=1 failed"
[ ! -e "$root/var/cache/rdna1-mtype" ] || bad "make uninstall PURGE=1 left the cache"
left=$(cd "$root" && find . -mindepth 1 -not -type d)
[ -z "$left" ] || bad "make uninstall PURGE=1 left: $left"

# 4. Under sudo, for a user with no cargo (nobody): not built as root; the message says what
# to do. A tree that user may write, so the only thing missing is cargo, in a place that user
# can reach (scratch_dir); a cargo on root's PATH that only logs who ran it.
scratch_dir tree
cp "$top/install.sh" "$top/Cargo.toml" "$tree/"
chown -R nobody "$tree"
printf '#!/bin/sh\nid -u >>"%s"\nexit 1\n' "$work/cargo-ran-as" >"$work/bin/cargo"
chmod 755 "$work/bin/cargo"
rc=0
(unset RDNA1CTL && PATH="$work/bin:$PATH" SUDO_USER=nobody DESTDIR=$work/stage sh "$tree/install.sh" install) \
	>"$work/sudo.log" 2>&1 || rc=$?
[ ! -e "$work/cargo-ran-as" ] || bad "under sudo, cargo ran as uid $(cat "$work/cargo-ran-as"), not as nobody"
[ $rc != 0 ] || bad "make install without cargo succeeded"
grep -q 'cargo not found for nobody.*https://rustup.rs.*RDNA1CTL=/path/to/rdna1ctl' "$work/sudo.log" ||
	bad "no cargo for the sudo user: the message does not say what to do: $(cat "$work/sudo.log")"
[ ! -e "$tree/target" ] || bad "make install left $tree/target"

[ "$fails" = 0 ] || exit 1
echo "reinstall: two installs (rebuilt), the unit without a module, the cache on uninstall, sudo's cargo: passed"
