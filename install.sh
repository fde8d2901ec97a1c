#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make install / make uninstall. Every file installed is listed once, in files(), so uninstall
# removes exactly what install put there.
# usage: install.sh install|uninstall   (from the source tree's top)
# Variables: DESTDIR (staging root for packagers: then dkms, systemctl and udevadm are not
# run; the package's scripts do that), PREFIX (/usr), SYSCONFDIR (/etc), PURGE=1 (uninstall
# the config file too), RDNA1CTL (a built rdna1ctl; default: cargo build --release),
# ZSHCOMPDIR (zsh's completion directory; default Debian's).
set -eu
top=$(cd "$(dirname "$0")" && pwd)
DESTDIR=${DESTDIR:-}
PREFIX=${PREFIX:-/usr}
SYSCONFDIR=${SYSCONFDIR:-/etc}
# zsh's completions: Debian's vendor directory by default; Arch and Fedora read site-functions
# (their packages pass ZSHCOMPDIR=/usr/share/zsh/site-functions).
ZSHCOMPDIR=${ZSHCOMPDIR:-$PREFIX/share/zsh/vendor-completions}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$top/Cargo.toml" | head -n1)
src=$PREFIX/src/rdna1-mtype-$version
say() { echo "rdna1-mtype: $*" >&2; }
die() { say "$*"; exit 1; }
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
	echo "dist/systemd/rdna1-mtype.service $PREFIX/lib/systemd/system/rdna1-mtype.service 644"
	echo "udev/70-rdna1-mtype.rules $PREFIX/lib/udev/rules.d/70-rdna1-mtype.rules 644"
	echo "dist/modprobe.d/rdna1-mtype.conf $PREFIX/lib/modprobe.d/rdna1-mtype.conf 644"
	# The workload `rdna1ctl report` and `search` run by default, and the in-process check their
	# Python commands load (rdna1ctl looks in PREFIX/share/rdna1-mtype/).
	echo "dist/field-kit/battery.py $PREFIX/share/rdna1-mtype/battery.py 755"
	for f in sitecustomize.py rdna1_check.py; do
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

rdna1ctl_bin() {
	if [ -n "${RDNA1CTL:-}" ]; then
		echo "$RDNA1CTL"
		return
	fi
	(cd "$top" && cargo build -q --release --locked -p rdna1ctl) >&2 || die "cargo build of rdna1ctl failed"
	echo "$top/target/release/rdna1ctl"
}

do_install() {
	bin=$(rdna1ctl_bin)
	"$bin" --version >/dev/null || die "$bin does not run"
	gen=$(mktemp -d)
	trap 'rm -rf "$gen"' EXIT
	cp "$bin" "$gen/rdna1ctl"
	for sh in bash zsh fish; do "$bin" completions "$sh" >"$gen/$sh"; done
	"$bin" man >"$gen/man"
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
		dkms add "$src" && dkms install "rdna1-mtype/$version" ||
			die "dkms could not build rdna1_mtype for $(uname -r): read the message above, and docs/INSTALL.md"
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
	elif [ -e "$DESTDIR$CONFIG" ]; then
		say "kept $CONFIG (PURGE=1 removes it)"
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
