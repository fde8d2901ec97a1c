#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make install / make uninstall. Every file installed is listed once, in files(), so uninstall
# removes exactly what install put there.
# usage: install.sh install|uninstall   (from the source tree's top)
# Running it again is safe: the config is kept, DKMS rebuilds the module (after a failed build,
# or with new sources), nothing is added twice.
# Variables: DESTDIR (staging root for packagers: then dkms, systemctl and udevadm are not
# run; the package's scripts do that), PREFIX (/usr), SYSCONFDIR (/etc), PURGE=1 (uninstall
# the config file and the DKMS builds' cache too), RDNA1CTL (a built rdna1ctl; default: cargo
# build --release, under sudo as the user who ran sudo), ZSHCOMPDIR (zsh's completion
# directory; default Debian's on Debian, else site-functions), CACHEDIR (the DKMS builds'
# cache, /var/cache/rdna1-mtype: kmod/dkms-rust-metadata.sh).
set -eu
top=$(cd "$(dirname "$0")" && pwd)
DESTDIR=${DESTDIR:-}
PREFIX=${PREFIX:-/usr}
SYSCONFDIR=${SYSCONFDIR:-/etc}
# zsh's completions: Debian's zsh reads vendor-completions, Arch's and Fedora's site-functions
# (their packages pass ZSHCOMPDIR=/usr/share/zsh/site-functions; `make install` there finds it
# here).
if [ -z "${ZSHCOMPDIR:-}" ]; then
	if [ -e /etc/debian_version ]; then
		ZSHCOMPDIR=$PREFIX/share/zsh/vendor-completions
	else
		ZSHCOMPDIR=$PREFIX/share/zsh/site-functions
	fi
fi
# What kmod/dkms-rust-metadata.sh rebuilds for each Debian kernel (about 190 MB each).
CACHEDIR=${CACHEDIR:-/var/cache/rdna1-mtype}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$top/Cargo.toml" | head -n1)
src=$PREFIX/src/rdna1-mtype-$version
say() { echo "rdna1-mtype: $*" >&2; }
die() { say "$*"; exit 1; }
case $CACHEDIR in /*/*) ;; *) die "CACHEDIR=$CACHEDIR: an absolute path below a directory (PURGE=1 removes it)" ;; esac
live() { [ -z "$DESTDIR" ]; }
# rdna1ctl's subcommands, one man page each (rdna1ctl-NAME.8); a cargo test (cli_contract.rs)
# keeps this list equal to the command line's.
commands="status enable disable set apply layout events verify doctor report search run check-kernel completions man"

# "SOURCE DEST MODE" per line; SOURCE is relative to the tree, or @name for generated files.
files() {
	echo "@rdna1ctl $PREFIX/bin/rdna1ctl 755"
	echo "@bash $PREFIX/share/bash-completion/completions/rdna1ctl 644"
	echo "@zsh $ZSHCOMPDIR/_rdna1ctl 644"
	echo "@fish $PREFIX/share/fish/vendor_completions.d/rdna1ctl.fish 644"
	echo "@man $PREFIX/share/man/man8/rdna1ctl.8 644"
	for c in $commands; do
		echo "@man-$c $PREFIX/share/man/man8/rdna1ctl-$c.8 644"
	done
	echo "@service $PREFIX/lib/systemd/system/rdna1-mtype.service 644"
	echo "udev/70-rdna1-mtype.rules $PREFIX/lib/udev/rules.d/70-rdna1-mtype.rules 644"
	echo "dist/modprobe.d/rdna1-mtype.conf $PREFIX/lib/modprobe.d/rdna1-mtype.conf 644"
	# The workload `rdna1ctl report` and `search` run by default, and the in-process check their
	# Python commands load (rdna1ctl looks in PREFIX/share/rdna1-mtype/).
	echo "dist/field-kit/battery.py $PREFIX/share/rdna1-mtype/battery.py 755"
	echo "dist/field-kit/python/sitecustomize.py $PREFIX/share/rdna1-mtype/python/sitecustomize.py 644"
	# The check's package: every module in it.
	for f in "$top"/dist/field-kit/python/rdna1_check/*.py; do
		f=rdna1_check/$(basename "$f")
		echo "dist/field-kit/python/$f $PREFIX/share/rdna1-mtype/python/$f 644"
	done
	for d in README.md docs/INSTALL.md docs/CLI.md docs/DESIGN.md docs/ABI.md; do
		[ -e "$top/$d" ] && echo "$d $PREFIX/share/doc/rdna1-mtype/$(basename "$d") 644"
	done
	# The DKMS source tree: what kmod/Kbuild compiles, and the version it reads.
	echo "dkms.conf $src/dkms.conf 644"
	echo "Cargo.toml $src/Cargo.toml 644"
	for f in Kbuild Makefile hook.c hook.h amdgpu_bo_layout.h amdgpu_vm_layout.h; do
		echo "kmod/$f $src/kmod/$f 644"
	done
	for f in dkms-make.sh dkms-rust-metadata.sh; do
		echo "kmod/$f $src/kmod/$f 755"
	done
	# The crate: its root and every module next to it.
	for f in "$top"/kmod/*.rs; do
		echo "kmod/$(basename "$f") $src/kmod/$(basename "$f") 644"
	done
	for f in "$top"/shared/src/*.rs; do
		echo "shared/src/$(basename "$f") $src/shared/src/$(basename "$f") 644"
	done
}
CONFIG=$SYSCONFDIR/rdna1-mtype/config.toml

nocargo="or pass a built one: make install RDNA1CTL=/path/to/rdna1ctl"

# Builds rdna1ctl into the tree's target/. Under sudo, as the user who ran sudo (unless the
# tree is root's, as after `sudo -i` and a clone there): sudo's PATH has no ~/.cargo/bin
# (rustup's), and a build as root would leave a target/ that user cannot write.
rdna1ctl_bin() {
	if [ -n "${RDNA1CTL:-}" ]; then
		echo "$RDNA1CTL"
		return
	fi
	if [ "$(id -u)" = 0 ] && [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ] &&
		[ "$(stat -c %u "$top")" != 0 ]; then
		build_as "$SUDO_USER"
	else
		command -v cargo >/dev/null 2>&1 ||
			die "cargo is not on PATH ($PATH): install Rust (https://rustup.rs, or the distribution's cargo), $nocargo"
		(cd "$top" && cargo build -q --release --locked -p rdna1ctl --target-dir "$top/target") >&2 ||
			die "cargo build of rdna1ctl failed (above)"
	fi
	[ -x "$top/target/release/rdna1ctl" ] || die "cargo built no $top/target/release/rdna1ctl"
	echo "$top/target/release/rdna1ctl"
}

# build_as USER: cargo build in USER's login environment (their profile puts cargo on PATH;
# ~/.cargo/bin is added in any case), with nothing of root's environment but the tree's path.
build_as() {
	user=$1
	home=$(getent passwd "$user" | cut -d: -f6)
	[ -n "$home" ] || die "sudo's user $user has no passwd entry: build rdna1ctl yourself, $nocargo"
	# runuser: util-linux, on Debian, Arch and Fedora alike; su where it is missing.
	if command -v runuser >/dev/null 2>&1; then
		as() { runuser -u "$user" -- "$@"; }
	else
		# shellcheck disable=SC2016 # expanded by that shell
		as() { su -s /bin/sh "$user" -c '"$0" "$@"' "$@"; }
	fi
	# cargo writes target/ (or creates it): an earlier `sudo make install` left one owned by root.
	w=$top/target
	[ -e "$w" ] || w=$top
	as test -w "$w" ||
		die "$w is not writable by $user (an earlier sudo make install built it as root?): sudo chown -R $user: $w, then sudo make install again; $nocargo"
	say "building rdna1ctl as $user (cargo from $user's login PATH or ~/.cargo/bin)"
	rc=0
	# shellcheck disable=SC2016 # expanded by the user's shell
	as env -i HOME="$home" USER="$user" LOGNAME="$user" PATH=/usr/local/bin:/usr/bin:/bin \
		sh -lc 'PATH="$HOME/.cargo/bin:$PATH"; command -v cargo >/dev/null 2>&1 || exit 127
		cd "$1" && exec cargo build -q --release --locked -p rdna1ctl --target-dir "$1/target"' \
		sh "$top" >&2 || rc=$?
	case $rc in
	0) ;;
	127) die "cargo not found for $user (login PATH and $home/.cargo/bin): install Rust as $user (https://rustup.rs, or the distribution's cargo), then sudo make install again; $nocargo" ;;
	*) die "cargo build of rdna1ctl as $user failed (above)" ;;
	esac
}

# The unit names rdna1ctl, the config and the docs where this install puts them.
unit() {
	case $PREFIX$SYSCONFDIR in *[\|\&]*) die "PREFIX or SYSCONFDIR holds | or &: choose another" ;; esac
	sed -e "s|@BINDIR@|$PREFIX/bin|g" -e "s|@SYSCONFDIR@|$SYSCONFDIR|g" \
		-e "s|@DOCDIR@|$PREFIX/share/doc/rdna1-mtype|g" "$top/dist/systemd/rdna1-mtype.service" >"$1"
	! grep -n '@[A-Z]*@' "$1" >&2 || die "dist/systemd/rdna1-mtype.service: a placeholder install.sh does not fill (above)"
}

# DKMS's add, build and install, again after a failed build or with new sources: dkms refuses
# to add a version it has ("already contains"), and dkms 3.0's `install` of a version it built
# installs that old build, so: add only what it lacks, rebuild (--force), reinstall (--force).
# (Never `add --force`: it deletes the source tree it is given when that is DKMS's own.)
dkms_install() {
	if ! dkms status -m rdna1-mtype -v "$version" 2>/dev/null | grep -q .; then
		dkms add "$src" || return
	fi
	dkms build --force "rdna1-mtype/$version" && dkms install --force "rdna1-mtype/$version"
}

do_install() {
	bin=$(rdna1ctl_bin)
	"$bin" --version >/dev/null || die "$bin does not run"
	gen=$(mktemp -d)
	trap 'rm -rf "$gen"' EXIT
	cp "$bin" "$gen/rdna1ctl"
	for sh in bash zsh fish; do "$bin" completions "$sh" >"$gen/$sh"; done
	"$bin" man >"$gen/man"
	unit "$gen/service"
	for c in $commands; do "$bin" man "$c" >"$gen/man-$c"; done
	files | while read -r from to mode; do
		case $from in @*) from=$gen/${from#@} ;; *) from=$top/$from ;; esac
		install -D -m "$mode" "$from" "$DESTDIR$to"
	done
	# The one version: dkms.conf gets Cargo.toml's (a cargo test also keeps the two equal).
	sed -i "s/^PACKAGE_VERSION=.*/PACKAGE_VERSION=\"$version\"/" "$DESTDIR$src/dkms.conf"
	# The config is the administrator's: installed once, never overwritten.
	if [ -e "$DESTDIR$CONFIG" ]; then
		say "kept $CONFIG (yours); the shipped default is $PREFIX/share/doc/rdna1-mtype/config.toml"
	else
		install -D -m 644 "$top/dist/config/config.toml" "$DESTDIR$CONFIG"
	fi
	install -D -m 644 "$top/dist/config/config.toml" "$DESTDIR$PREFIX/share/doc/rdna1-mtype/config.toml"
	if live; then
		dkms_install ||
			die "dkms could not build rdna1_mtype for $(uname -r): read the message above and docs/INSTALL.md (\"Troubleshooting\"), fix it, then run this again"
		udevadm control --reload 2>/dev/null || true
		systemctl daemon-reload 2>/dev/null && systemctl enable rdna1-mtype.service || true
		say "installed $version; run: sudo modprobe rdna1_mtype && rdna1ctl status"
	else
		say "staged $version in $DESTDIR (not run: dkms install, systemctl enable, udevadm reload)"
	fi
}

do_uninstall() {
	if live; then
		systemctl disable rdna1-mtype.service 2>/dev/null || true
		if dkms status -m rdna1-mtype -v "$version" 2>/dev/null | grep -q .; then
			dkms remove "rdna1-mtype/$version" --all || die "dkms remove failed: nothing else removed"
		fi
	fi
	files | while read -r _ to _; do rm -f "$DESTDIR$to"; done
	rm -f "$DESTDIR$PREFIX/share/doc/rdna1-mtype/config.toml"
	if [ "${PURGE:-0}" = 1 ]; then
		rm -f "$DESTDIR$CONFIG"
		rm -rf "$DESTDIR$CACHEDIR"
	else
		[ ! -e "$DESTDIR$CONFIG" ] || say "kept $CONFIG (PURGE=1 removes it)"
		# Debian's `apt purge rdna1-mtype-dkms` removes it too.
		[ ! -e "$DESTDIR$CACHEDIR" ] ||
			say "kept $CACHEDIR, the kernels' Rust metadata DKMS builds rebuilt ($(du -sh "$DESTDIR$CACHEDIR" 2>/dev/null | cut -f1)): PURGE=1 removes it, or sudo rm -rf $CACHEDIR"
	fi
	# Our own directories, if now empty; shared ones (share/man/man8, ...) stay.
	for d in "$src/kmod" "$src/shared/src" "$src/shared" "$src" "$PREFIX/share/doc/rdna1-mtype" \
		"$PREFIX/share/rdna1-mtype/python" "$PREFIX/share/rdna1-mtype" \
		"$SYSCONFDIR/rdna1-mtype"; do
		rmdir "$DESTDIR$d" 2>/dev/null || true
	done
	if live; then
		udevadm control --reload 2>/dev/null || true
		systemctl daemon-reload 2>/dev/null || true
	fi
	say "removed $version${DESTDIR:+ from $DESTDIR}"
}

case ${1:-} in
install) do_install ;;
uninstall) do_uninstall ;;
*) die "usage: install.sh install|uninstall" ;;
esac
