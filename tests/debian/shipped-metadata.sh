# Sourced by tests/debian/run.sh for 7.2, after DKMS built and installed the module the Debian
# way (its variables: rel, mnt, kver, version, ko, meta, makelog, out, here; env.sh's
# RUST_TOOLCHAIN; overlay.sh's in_root and bind_in).
# Headers that ship the Rust metadata, as Arch's linux-headers and Ubuntu's linux-headers +
# linux-lib-rust do (tests/debian/headers-shape.sh): the real dkms install builds against them
# with the metadata they carry. Neither linux-source (removed above) nor the metadata DKMS
# rebuilt (moved out of its cache) is left, so no build below can rebuild or reuse it.
log "debian $rel: dkms install against Arch's and Ubuntu's layouts of $kver's headers (Rust metadata shipped)"
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
	log "debian $rel: $shape's layout: shipped metadata used; $(cat "$out/same-module-$shape.txt")"
done
# A rustc other than the one CONFIG_RUSTC_VERSION_TEXT names, as the only one: the toolchain
# make test builds with (RUST_TOOLCHAIN), read-only, root's, in place of sid's.
sysroot=$(rustup run "$RUST_TOOLCHAIN" rustc --print sysroot)
second=/usr/lib/rust-$RUST_TOOLCHAIN
for d in bin lib; do bind_in "$sysroot/$d" "$second/$d" ro; done
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
log "debian $rel: rustc $RUST_TOOLCHAIN refused in one line: ${refusal#rdna1-mtype: }"
rm "$mnt/usr/bin/rustc"
mv "$mnt/usr/bin/rustc.sid" "$mnt/usr/bin/rustc"
# Debian's layout and Debian's build back, for the boot.
in_root sh /tmp/headers-shape.sh debian "$kver" || die "could not put Debian's headers back"
mkdir -p "${ko%/*}"
cp "$deb_ko.orig" "$ko"
