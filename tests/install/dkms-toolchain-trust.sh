#!/usr/bin/env bash
# kmod/dkms-make.sh runs as root (DKMS, also from dpkg at a kernel upgrade): it must never run a
# build tool that an unprivileged user can replace. Each candidate below is a fake rustc that
# answers the wanted version and leaves a marker when it runs; the script must not run it:
#  - in the invoking user's home: SUDO_HOME/.rustup/toolchains (sudo >= 1.9.16 sets SUDO_HOME)
#    and CARGO_HOME/bin;
#  - on PATH, in a directory owned by that user, and in a root-owned but world-writable one;
#  - rustc on PATH as a rustup proxy (the environment picks the toolchain it runs): a symbolic
#    link to rustup, and a hard link to it as rustup makes them (in rustup's directory and in
#    another), all in root-owned directories.
# RDNA1_RUSTC, the explicit override, is used as given (the administrator's choice).
# usage: dkms-toolchain-trust.sh WORK_DIR   (as root; WORK_DIR in directories only root can
# write, as make test's build/test: the proxies must be refused for being proxies, not for
# where they are)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/install/work-dir.sh"
work_dir dkms-toolchain-trust.sh "$1"

want="rustc 1.93.0 (abc 2026-01-01)"
kernel=$work/kernel
mkdir -p "$kernel"
printf 'CONFIG_RUST=y\nCONFIG_RUSTC_VERSION_TEXT="%s"\n' "$want" >"$kernel/.config"
marker=$work/ran
fake() { # fake PATH: a rustc at PATH that leaves the marker and answers the wanted version
	mkdir -p "$(dirname "$1")"
	printf '#!/bin/sh\necho "$0" >>%s\necho "%s"\n' "$marker" "$want" >"$1"
	chmod 755 "$1"
}

# The invoking user's home, owned by that user (uid 65534 here).
home=$work/home
fake "$home/.rustup/toolchains/1.93.0-x86_64-unknown-linux-gnu/bin/rustc"
fake "$home/.cargo/bin/rustc"
fake "$home/bin/rustc"
chown -R 65534:65534 "$home"
# Root-owned, but anyone may write there.
fake "$work/open/rustc"
chmod 1777 "$work/open"
# A rustup proxy (a link to a binary named rustup) in a root-owned directory.
fake "$work/proxy/rustup"
ln -s rustup "$work/proxy/rustc"
# rustup's own proxies: hard links to rustup, beside it (CARGO_HOME/bin) ...
fake "$work/cargo/bin/rustup"
ln "$work/cargo/bin/rustup" "$work/cargo/bin/rustc"
# ... and one more name of it in another directory, without a rustup beside it.
mkdir -p "$work/elsewhere"
ln "$work/cargo/bin/rustup" "$work/elsewhere/rustc"

run() { # run ENV...: dkms-make.sh for the fake kernel, its output in $work/out
	rm -f "$marker"
	rc=0
	# Its metadata cache in the work directory, not the machine's /var/cache/rdna1-mtype.
	env RDNA1_KBUILD_CACHE="$work/cache" "$@" sh "$top/kmod/dkms-make.sh" "$kernel" 7.2.99 >"$work/out" 2>&1 || rc=$?
}
refused() { # refused WHAT ENV...: the fake never ran and the build stopped naming the rustc
	local what=$1
	shift
	run "$@"
	if [ -e "$marker" ]; then
		bad "$what: dkms-make.sh ran $(cat "$marker")"
	elif [ $rc = 0 ] || ! grep -q "no such rustc found" "$work/out"; then
		bad "$what: exit $rc, $(cat "$work/out")"
	else
		echo "ok   $what: not run"
	fi
}
path=/usr/sbin:/usr/bin:/sbin:/bin
refused "SUDO_HOME's rustup toolchain" PATH=$path SUDO_HOME="$home" HOME=/root
refused "CARGO_HOME's rustc" PATH=$path CARGO_HOME="$home/.cargo"
refused "a user's directory on PATH" PATH="$home/bin:$path" SUDO_HOME="$home"
refused "a world-writable directory on PATH" PATH="$work/open:$path"
refused "a rustup proxy on PATH" PATH="$work/proxy:$path"
refused "a rustup proxy hard-linked beside rustup on PATH" PATH="$work/cargo/bin:$path"
refused "a hard link to rustup elsewhere on PATH" PATH="$work/elsewhere:$path"

# The explicit override is honoured: the administrator named it.
run PATH=$path RDNA1_RUSTC="$home/bin/rustc"
if [ -e "$marker" ] && grep -q "building for 7.2.99 with $home/bin/rustc\|no libkernel.rmeta\|rust has no" "$work/out"; then
	echo "ok   RDNA1_RUSTC: used as given"
else
	bad "RDNA1_RUSTC was not used: exit $rc, $(cat "$work/out")"
fi

[ $fails = 0 ] || { echo "$fails toolchain trust check(s) failed" >&2; exit 1; }
