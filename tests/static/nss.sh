#!/usr/bin/env bash
# The static rdna1ctl (tests/vm/build-bins.sh) and the user database: it must never dlopen an
# NSS module. Static glibc loads the modules nsswitch.conf names (systemd, sss, ldap) for any
# user not in /etc/passwd, and a shared module in a static process crashes it (exit 139 with
# Debian's "passwd: files systemd"). Run as root in a root of its own (chroot, private mounts),
# so nothing of the host's user database or NSS set-up is used:
#   /etc/passwd and /etc/group with one user, rdna1tester (4242), in group render (4343);
#   nsswitch.conf naming "files rdna1probe" for every user database, and libnss_rdna1probe.so.2
#   (nss-probe.c), which records that it was loaded;
#   busybox (static) as the command rdna1ctl runs, `id`.
# First the control: a static C program's getpwnam of an unknown name loads the stand-in
# (nss-lookup.c), so a load is seen when it happens.
# Cases, with `rdna1ctl run --env FILE ... -- busybox id`:
#   --user rdna1tester: runs as 4242 with group 4343 (the files lookup still works);
#   --user of an unknown name: exit 2, "no such user" and which users a static build knows,
#   nothing loaded;
#   --user of an unknown uid: exit 2 (no group known), the same, nothing loaded;
#   SUDO_UID/SUDO_GID of an unknown uid: runs as that uid and group, nothing loaded.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:?usage: nss.sh STATIC-RDNA1CTL}
[ "$(id -u)" = 0 ] || { echo "nss.sh: needs root (chroot, mounts)" >&2; exit 1; }
static() { local h; h=$(readelf -lW "$1") && [[ $h != *INTERP* ]]; }
static "$bin" || { echo "nss.sh: $bin is not a static binary" >&2; exit 1; }
busybox=$(command -v busybox) || { echo "nss.sh: no busybox (setup-host.sh installs busybox-static)" >&2; exit 1; }
static "$busybox" || { echo "nss.sh: $busybox is not static" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf --one-file-system "$work"' EXIT
root=$work/root
mkdir -p "$root"/{etc,bin,proc,dev,tmp,lib/nss}
: >"$root/dev/null"
# Writable by all, as /tmp is: a module loaded after rdna1ctl dropped root must leave its marker too.
chmod 1777 "$root/tmp"
marker=/tmp/nss-module-loaded
cc -shared -fPIC -nostdlib -O2 -DMARKER="\"$marker\"" -o "$root/lib/nss/libnss_rdna1probe.so.2" "$here/nss-probe.c"
# The linker warns that a static getpwnam needs glibc's shared libraries: that is the point.
cc -static -O2 -o "$root/bin/lookup" "$here/nss-lookup.c" 2>"$work/cc.log" || { cat "$work/cc.log" >&2; exit 1; }
cp "$bin" "$root/bin/rdna1ctl"
cp "$busybox" "$root/bin/busybox"
cat >"$root/etc/passwd" <<'P'
root:x:0:0:root:/root:/bin/busybox
rdna1tester:x:4242:4242:rdna1 tester:/tmp:/bin/busybox
P
cat >"$root/etc/group" <<'G'
root:x:0:
rdna1tester:x:4242:
render:x:4343:rdna1tester
G
cat >"$root/etc/nsswitch.conf" <<'N'
passwd: files rdna1probe
group: files rdna1probe
initgroups: files rdna1probe
shadow: files rdna1probe
N
: >"$root/env"
failed=0
bad() { echo "FAIL: $*" >&2; failed=1; }
# in_root NAME [VAR=VALUE...] -- PROG ARGS...: PROG in the root; its output in $work/NAME.out,
# its exit status in $rc; the marker cleared before.
in_root() {
	local name=$1 vars=()
	shift
	while [ "$1" != -- ]; do vars+=("$1"); shift; done
	shift
	rmdir "$root$marker" 2>/dev/null || true
	rc=0
	unshare -m --propagation private sh -c '
		mount -t proc proc "$1/proc" && mount --bind /dev/null "$1/dev/null" && shift &&
			exec chroot "$@"' sh "$root" \
		"$root" /bin/busybox env -i LD_LIBRARY_PATH=/lib/nss PATH=/bin "${vars[@]}" \
		"$@" >"$work/$name.out" 2>&1 || rc=$?
	loaded=0
	[ ! -d "$root$marker" ] || loaded=1
	echo "$name: exit $rc, NSS module loaded: $loaded: $(tr '\n' ' ' <"$work/$name.out")"
}
# run NAME [VAR=VALUE...] -- ARGS...: rdna1ctl run --env /env ARGS in the root, which must load
# no NSS module.
run() {
	local name=$1 vars=()
	shift
	while [ "$1" != -- ]; do vars+=("$1"); shift; done
	shift
	in_root "$name" "${vars[@]}" -- /bin/rdna1ctl run --env /env "$@"
	[ $loaded = 0 ] || bad "$name: rdna1ctl loaded the NSS module nsswitch.conf names (exit $rc): $(cat "$work/$name.out")"
}
# The stand-in shows a load: static glibc's own getpwnam, for a name not in /etc/passwd, loads
# it (otherwise the checks below could not fail).
in_root control -- /bin/lookup rdna1-nosuchuser
[ $loaded = 1 ] || bad "a static getpwnam of an unknown name did not load the stand-in module (exit $rc): the test cannot see a load"
run known -- --user rdna1tester -- /bin/busybox id
[ $rc = 0 ] || bad "known user: exit $rc"
grep -q 'uid=4242' "$work/known.out" && grep -q '4343' "$work/known.out" ||
	bad "known user: not uid 4242 in group 4343: $(cat "$work/known.out")"
run unknown-name -- --user rdna1-nosuchuser -- /bin/busybox id
[ $rc = 2 ] || bad "unknown name: exit $rc, want 2"
grep -q 'no such user.*static build: it reads users only from /etc/passwd' "$work/unknown-name.out" || bad "unknown name: no 'no such user': $(cat "$work/unknown-name.out")"
run unknown-uid -- --user 54321 -- /bin/busybox id
[ $rc = 2 ] || bad "unknown uid: exit $rc, want 2"
grep -q 'uid 54321 is not in the user database.*static build' "$work/unknown-uid.out" ||
	bad "unknown uid: not the user-database message: $(cat "$work/unknown-uid.out")"
run sudo-uid SUDO_UID=54321 SUDO_GID=54322 -- -- /bin/busybox id
[ $rc = 0 ] || bad "SUDO_UID of an unknown uid: exit $rc"
grep -q 'uid=54321 gid=54322' "$work/sudo-uid.out" || bad "SUDO_UID of an unknown uid: $(cat "$work/sudo-uid.out")"
[ $failed = 0 ] && echo "nss: the static rdna1ctl used /etc/passwd and /etc/group only, and loaded no NSS module"
exit $failed
