# Debian's real kernel packages, for check-kernel: sourced after env.sh, never run.
#
# A private apt state (the machine's apt is never changed) over sid, trixie, trixie-backports
# and bookworm-backports, whose Release files may be past their Valid-Until date. A kernel is
# unpacked as installed, but only what check-kernel reads (amdgpu.ko* and vmlinuz), into
# $RDNA1_CACHE/debian-kernels/KVER/; the .deb files are not kept.

DK_APT=$RDNA1_CACHE/apt-kernels
DK_TREES=$RDNA1_CACHE/debian-kernels

dk_opts() {
	printf '%s\n' -o "Dir::Etc::SourceList=$DK_APT/sources.list" -o Dir::Etc::SourceParts=/dev/null \
		-o "Dir::State::Lists=$DK_APT/lists" -o "Dir::Cache=$DK_APT/cache" \
		-o Dir::State::status=/dev/null -o APT::Sandbox::User=root -o APT::Architecture=amd64 \
		-o Acquire::Check-Valid-Until=false
}

dk_apt() { # apt-get|apt-cache ARGS...
	local tool=$1 opts
	shift
	mapfile -t opts < <(dk_opts)
	"$tool" "${opts[@]}" "$@"
}

# Updates the private package lists once a day. Under a lock: make test's check-kernel-debian
# and rustc-floor run side by side, and a second apt-get update on the same lists fails.
dk_update() {
	local stamp=$DK_APT/lists/.updated m lock
	mkdir -p "$DK_APT/lists/partial" "$DK_APT/cache/archives/partial"
	exec {lock}>"$DK_APT/.update.lock"
	flock "$lock" || die "cannot lock $DK_APT/.update.lock"
	if [ -f "$stamp" ] && [ -n "$(find "$stamp" -mmin -1440)" ]; then
		exec {lock}>&-
		return 0
	fi
	m=$(sed -n 's/^deb \([^ ]*\) sid .*/\1/p' "$APT_STATE/sources.list" 2>/dev/null | head -n1)
	[ -n "$m" ] || m=http://deb.debian.org/debian
	{
		for s in sid trixie trixie-backports bookworm-backports; do
			echo "deb $m $s main"
		done
	} >"$DK_APT/sources.list"
	log "private apt update for Debian's kernels"
	dk_apt apt-get update -qq || die "apt-get update (kernels) failed"
	touch "$stamp"
	exec {lock}>&-
}

# Every amd64 kernel release in the archive, one per line: "KVER VERSION" (newest version of
# each; flavours amd64 and rt, the ones with amdgpu).
dk_list() {
	dk_update
	dk_apt apt-cache search --names-only '^linux-image-[0-9][^ ]*-(amd64|rt-amd64)$' |
		awk '{print $1}' | grep -v -- '-dbg$' | grep -v -- '-cloud-amd64$' | sort -V | while read -r pkg; do
		local v
		v=$(dk_apt apt-cache madison "$pkg" | awk '{print $3}' | sort -V | tail -n1)
		[ -n "$v" ] && echo "${pkg#linux-image-} $v"
	done
}

# Unpacks kernel KVER (version VERSION, default the newest) and prints the tree's path.
dk_tree() {
	local kver=$1 version=${2:-} tree tmp pkg
	tree=$DK_TREES/$kver
	# .complete holds the package version unpacked: another version is fetched anew.
	if [ -f "$tree/.complete" ] && [ "$(cat "$tree/.complete")" = "${version:-newest}" ]; then
		echo "$tree"
		return 0
	fi
	dk_update
	rm -rf "$tree" && mkdir -p "$tree"
	tmp=$(mktemp -d)
	# The package layout changed over time: linux-image-KVER held vmlinuz and the modules;
	# later releases split them into linux-binary-KVER and linux-modules-KVER (linux-image
	# is then a metapackage). Whichever exist at this version are fetched.
	local pkgs=()
	for pkg in "linux-image-$kver" "linux-binary-$kver" "linux-modules-$kver"; do
		# apt-cache show succeeds, printing nothing, for a name only referenced by others.
		local info
		info=$(dk_apt apt-cache show "$pkg${version:+=$version}" 2>/dev/null || true)
		case $info in Package:*) pkgs+=("$pkg") ;; esac
	done
	[ ${#pkgs[@]} -gt 0 ] || die "no package of kernel $kver${version:+ $version} in the archive"
	for pkg in "${pkgs[@]}"; do
		local spec=$pkg
		[ -z "$version" ] || spec="$pkg=$version"
		(cd "$tmp" && dk_apt apt-get download -qq "$spec" >/dev/null 2>&1) ||
			die "could not download $spec"
	done
	for deb in "$tmp"/*.deb; do
		# tar exits non-zero when a package holds none of the patterns (linux-binary has no
		# amdgpu); what must be there is checked below.
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tree" --wildcards --no-anchored \
			'amdgpu.ko*' 'vmlinuz*' 2>/dev/null || true
	done
	rm -rf "$tmp"
	find "$tree" -name 'amdgpu.ko*' | grep -q . ||
		die "no amdgpu module in ${pkgs[*]} (the modules package of $kver is not in this archive)"
	find "$tree" -name 'vmlinuz*' | grep -q . || die "no vmlinuz in ${pkgs[*]}"
	echo "${version:-newest}" >"$tree/.complete"
	echo "$tree"
}
