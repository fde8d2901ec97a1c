#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs inside the Debian sid root (tests/debian/run.sh): lays Debian's installed headers of
# KVER out as another distribution's headers package does, with the kernel's Rust metadata
# shipped in them, so that DKMS builds against a tree that already carries the metadata (the
# path Arch and Ubuntu owners take) instead of rebuilding it (Debian's).
#   arch    /usr/lib/modules/KVER/build is one real directory: the source part and the build
#           output together, the real top Makefile, rust/*.rmeta (0644) and rust/*.so, and
#           /usr/src/linux a link to it; as Arch's linux PKGBUILD, _package-headers, does.
#   ubuntu  /usr/src/linux-headers-KVER holds the build output, the real top Makefile and a link
#           to every other entry of the common headers (debian/scripts/link-headers);
#           /usr/src/linux-lib-rust-KVER/rust holds the metadata, linked in as
#           linux-headers-KVER/rust -> ../linux-lib-rust-KVER/rust (debian/scripts/link-lib-rust).
#   debian  puts Debian's own layout back.
# The metadata is what DKMS rebuilt for KVER from linux-source (META: a build dir of
# kmod/dkms-rust-metadata.sh); everything else is Debian's headers of the same build: one
# 7.2.13 source and config throughout (docs/KERNELS.md, "Headers that ship Rust metadata").
# usage: headers-shape.sh arch|ubuntu|debian KVER [META]
set -eu
shape=$1
kver=$2
meta=${3:-}
die() { echo "headers-shape.sh: $*" >&2; exit 1; }
mods=/usr/lib/modules/$kver
saved=/var/tmp/rdna1-debian-headers
# Debian's two halves, found from its links the first time and remembered for the way back.
if [ ! -e "$saved/build" ]; then
	mkdir -p "$saved"
	[ -L "$mods/build" ] && [ -L "$mods/source" ] || die "$mods/build and source are not Debian's links"
	ln -s "$(readlink -f "$mods/build")" "$saved/build"
	ln -s "$(readlink -f "$mods/source")" "$saved/source"
	cp -a "$mods/build" "$saved/build-link"
fi
objtree=$(readlink "$saved/build")
srctree=$(readlink "$saved/source")
# Debian's build output while Ubuntu's takes its name: beside it, so its relative links hold.
aside=${objtree%/*}/.debian-${objtree##*/}

# Undo any shape, then lay out the one asked for.
[ -L "$mods/build" ] || rm -rf "$mods/build"
rm -f "$mods/build" /usr/src/linux
if [ -d "$aside" ]; then
	rm -rf "$objtree"
	mv "$aside" "$objtree"
fi
rm -rf "/usr/src/linux-lib-rust-$kver"
cp -a "$saved/build-link" "$mods/build"
[ "$shape" != debian ] || exit 0
[ -d "$meta/rust" ] && [ -f "$meta/scripts/target.json" ] || die "no Rust metadata in $meta"

# The build output of FROM as real files in DIR (Debian's scripts/ and tools/ are links into
# linux-kbuild), under the real top Makefile.
output() { # FROM DIR
	cp -a "$1/." "$2/"
	rm -f "$2/Makefile" "$2/.kernelvariables" "$2/scripts" "$2/tools"
	cp -a "$srctree/Makefile" "$2/"
	mkdir -p "$2/scripts" "$2/tools"
	cp -aL "$1/scripts/." "$2/scripts/"
	cp -aL "$1/tools/." "$2/tools/"
	cp "$meta/scripts/target.json" "$2/scripts/"
	# Debian's .kernelvariables named the compiler; Ubuntu writes its gcc-NN into the Makefile.
	cc=$(sed -n 's/^CC = .*\(gcc-[0-9]*\)$/\1/p' "$1/.kernelvariables")
	[ -z "$cc" ] || sed -i "s/^CC\t\t= \$(CROSS_COMPILE)gcc\$/CC\t\t= \$(CROSS_COMPILE)$cc/" "$2/Makefile"
}
# Every entry of SRC that DST lacks, as a relative link (REL: SRC seen from DST).
link_tree() { # SRC DST REL
	for e in "$1"/* "$1"/.[!.]*; do
		[ -e "$e" ] || [ -L "$e" ] || continue
		n=${e##*/}
		if [ ! -e "$2/$n" ] && [ ! -L "$2/$n" ]; then
			ln -s "$3/$n" "$2/$n"
		elif [ -d "$e" ] && [ ! -L "$e" ] && [ -d "$2/$n" ] && [ ! -L "$2/$n" ]; then
			link_tree "$e" "$2/$n" "../$3/$n"
		fi
	done
}
case $shape in
arch)
	b=$mods/build
	rm -f "$b"
	mkdir "$b"
	cp -a "$srctree/." "$b/"
	for a in "$b"/arch/*/; do
		[ "$a" = "$b/arch/x86/" ] || rm -r "$a"
	done
	output "$objtree" "$b"
	echo "$kver" >"$b/version"
	install -Dt "$b/rust" -m644 "$meta"/rust/*.rmeta
	install -Dt "$b/rust" "$meta"/rust/*.so
	ln -s "../lib/modules/$kver/build" /usr/src/linux
	;;
ubuntu)
	mv "$objtree" "$aside"
	mkdir "$objtree"
	output "$aside" "$objtree"
	link_tree "$srctree" "$objtree" "../${srctree##*/}"
	lib=/usr/src/linux-lib-rust-$kver
	install -Dt "$lib/rust" -m644 "$meta"/rust/*.rmeta
	install -Dt "$lib/rust" "$meta"/rust/*.so
	ln -s "../linux-lib-rust-$kver/rust" "$objtree/rust"
	;;
*) die "unknown shape $shape (arch, ubuntu or debian)" ;;
esac
