#!/usr/bin/env bash
# code-objects.sh RDNA1CTL: doctor's code-object reader on real Debian ROCm binaries, checked
# against LLVM's own reader (issue 25).
#
# Packages (the archive's current versions, downloaded once with a private apt state over sid
# and experimental, unpacked into $RDNA1_CACHE/rocm-debs/):
# - librocblas5 (experimental, ROCm 7): librocblas.so.5.*'s .hip_fatbin holds zstd-compressed
#   bundles (CCOB), and rocblas/5/library the Tensile files (TensileLibrary_lazy_gfx1010.dat, ...);
# - librocfft0 (3.5 MB): one plain bundle (__CLANG_OFFLOAD_BUNDLE__).
# The stage fails if they stop holding both kinds.
# They are laid out in a tree as a wheel's torch would load them: torch/lib/libtorch_hip.so and
# libMIOpen.so are absolute links to the libraries in /usr/lib (resolved inside --root), and
# torch/lib/rocblas/library links to rocBLAS's. `rdna1ctl --root TREE doctor` names the targets
# it found (torch.kernels, torch.miopen, torch.rocblas); LLVM 21's clang-offload-bundler --list
# (tests/sid-tools) on every bundle of the same sections, and the Tensile file names, must give
# exactly the same sets. The doctor run's time on librocblas5 is printed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
rdna1ctl=$1
. "$top/tests/kernel/env.sh"

RA=$RDNA1_CACHE/apt-rocm
DEBS=$RDNA1_CACHE/rocm-debs
ra() { # apt-get|apt-cache ARGS...
	local tool=$1
	shift
	"$tool" -o "Dir::Etc::SourceList=$RA/sources.list" -o Dir::Etc::SourceParts=/dev/null \
		-o "Dir::State::Lists=$RA/lists" -o "Dir::Cache=$RA/cache" -o Dir::State::status=/dev/null \
		-o APT::Sandbox::User=root -o APT::Architecture=amd64 -o Acquire::Check-Valid-Until=false "$@"
}

# The unpacked packages: $DEBS/PKG/ holds the tree and .version; fetched only when missing.
fetch() { # PKG
	local pkg=$1 tmp
	[ -f "$DEBS/$pkg/.version" ] && return 0
	if [ ! -f "$RA/lists/.updated" ]; then
		mkdir -p "$RA/lists/partial" "$RA/cache/archives/partial"
		m=$(sed -n 's/^deb \([^ ]*\) sid .*/\1/p' "$APT_STATE/sources.list" 2>/dev/null | head -n1)
		printf 'deb %s sid main\ndeb %s experimental main\n' "${m:-http://deb.debian.org/debian}" \
			"${m:-http://deb.debian.org/debian}" >"$RA/sources.list"
		log "private apt update for Debian's ROCm (sid, experimental)"
		ra apt-get update -qq || die "apt-get update (ROCm packages) failed"
		touch "$RA/lists/.updated"
	fi
	tmp=$(mktemp -d)
	log "downloading $pkg"
	# Experimental's version when it has one (apt prefers sid's otherwise).
	v=$(ra apt-cache madison "$pkg" | awk '{print $3}' | sort -V | tail -n1)
	[ -n "$v" ] || die "$pkg is not in Debian sid or experimental"
	(cd "$tmp" && ra apt-get download -qq "$pkg=$v" >/dev/null) || die "apt-get download $pkg=$v failed"
	rm -rf "${DEBS:?}/$pkg"
	mkdir -p "$DEBS/$pkg"
	dpkg-deb -x "$tmp"/*.deb "$DEBS/$pkg"
	echo "$v" >"$DEBS/$pkg/.version"
	rm -rf "$tmp"
}
fetch librocblas5
fetch librocfft0
echo "librocblas5 $(cat "$DEBS/librocblas5/.version"), librocfft0 $(cat "$DEBS/librocfft0/.version")"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tree=$work/tree
cp -a "$top/tests/fixtures/rdna1-enforce" "$tree"
# Hard links: the 1 GB of rocBLAS costs no copy (the cache is on the same file system), or a
# copy where it is not.
for p in librocblas5 librocfft0; do
	cp -al "$DEBS/$p/usr" "$tree/" 2>/dev/null || cp -a "$DEBS/$p/usr" "$tree/"
done
lib=/usr/lib/x86_64-linux-gnu
blas=$(cd "$tree$lib" && ls librocblas.so.5.* | head -n1)
fft=$(cd "$tree$lib" && ls librocfft.so.0.* | head -n1)
[ -n "$blas" ] && [ -n "$fft" ] || die "the packages hold no librocblas.so.5.* / librocfft.so.0.*"
venv=/home/owner/venv
sp=$venv/lib/python3.12/site-packages
mkdir -p "$tree$venv/bin" "$tree$sp/torch/lib/rocblas"
printf 'home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n' >"$tree$venv/pyvenv.cfg"
: >"$tree$venv/bin/python"
: >"$tree$sp/torch/__init__.py"
printf "__version__ = '2.9.1+rocm7.2'\ncuda = None\nhip = '7.2.53211'\n" >"$tree$sp/torch/version.py"
ln -s "$lib/$blas" "$tree$sp/torch/lib/libtorch_hip.so"
ln -s "$lib/$fft" "$tree$sp/torch/lib/libMIOpen.so"
ln -s "$lib/rocblas/5/library" "$tree$sp/torch/lib/rocblas/library"

t0=$(date +%s%N)
"$rdna1ctl" --root "$tree" --json doctor --python "$venv/bin/python" >"$work/doctor.json" || [ $? -eq 3 ]
t1=$(date +%s%N)
echo "doctor on librocblas5's $(stat -Lc %s "$tree$lib/$blas") bytes and the rest: $(((t1 - t0) / 1000000)) ms"

# LLVM's view: every bundle of each .hip_fatbin, split at its recorded size (plain bundles: at
# the next magic), listed by clang-offload-bundler-21.
mkdir -p "$work/b"
for f in "$blas" "$fft"; do
	objcopy -O binary --only-section=.hip_fatbin "$tree$lib/$f" "$work/$f.fatbin"
done
python3 - "$work" "$blas" "$fft" <<'PY'
import struct, sys
work, names = sys.argv[1], sys.argv[2:]
seen = set()
for name in names:
    d = open(f"{work}/{name}.fatbin", "rb").read()
    i, n, kinds = 0, 0, set()
    while True:
        hits = [j for j in (d.find(b"CCOB", i), d.find(b"__CLANG_OFFLOAD_BUNDLE__", i)) if j >= 0]
        if not hits:
            break
        j = min(hits)
        if d.startswith(b"CCOB", j):
            ver = struct.unpack_from("<H", d, j + 4)[0]
            size = struct.unpack_from("<Q" if ver == 3 else "<I", d, j + 8)[0]
            kinds.add(f"CCOB v{ver}")
        else:
            nxt = [k for k in (d.find(b"CCOB", j + 4), d.find(b"__CLANG_OFFLOAD_BUNDLE__", j + 4)) if k >= 0]
            size = (min(nxt) if nxt else len(d)) - j
            kinds.add("plain")
        open(f"{work}/b/{name}.{n:04d}", "wb").write(d[j:j + size])
        n, i = n + 1, j + size
    print(f"{name}: {n} bundles ({', '.join(sorted(kinds))})")
    seen |= kinds
# Both formats must be read, or the stage proves less than it says.
if "plain" not in seen or not any(k.startswith("CCOB") for k in seen):
    sys.exit(f"the packages no longer hold both plain and compressed bundles ({sorted(seen)}): pick others")
PY
"$top/tests/sid-tools/run.sh" --bind "$work/b:/srv" -- sh -c \
	'for f in /srv/*; do echo "== ${f#/srv/}"; clang-offload-bundler-21 --list --type=o --input="$f" || echo "FAILED"; done' \
	>"$work/llvm.txt"
! grep -q FAILED "$work/llvm.txt" || die "clang-offload-bundler-21 could not list a bundle: $(grep -B1 FAILED "$work/llvm.txt" | head -n4)"

python3 - "$work" "$blas" "$fft" "$tree$lib/rocblas/5/library" <<'PY'
import json, os, re, sys
work, blas, fft, library = sys.argv[1:]
doc = json.load(open(f"{work}/doctor.json"))
checks = {c["id"]: c for c in doc["checks"]}
def doctor_targets(cid):
    m = re.search(r"\(targets: ([^)]*)\)", checks[cid]["message"])
    assert m, f"{cid} names no targets: {checks[cid]}"
    return set(m.group(1).split())
llvm = {blas: set(), fft: set()}
for block in open(f"{work}/llvm.txt").read().split("== ")[1:]:
    head, *ids = block.strip().splitlines()
    lib = head.rsplit(".", 1)[0]
    for i in ids:
        if "amdgcn-amd-amdhsa--" in i:
            llvm[lib].add(i.rsplit("--", 1)[1].split(":")[0])
tensile = {t for n in os.listdir(library) for t in re.findall(r"gfx[0-9a-f]+(?:-[0-9]+-generic)?", n)}
bad = 0
for cid, want, what in [("torch.kernels", llvm[blas], f"{blas} (LLVM)"),
                        ("torch.miopen", llvm[fft], f"{fft} (LLVM)"),
                        ("torch.rocblas", tensile, "rocblas/5/library (file names)")]:
    got = doctor_targets(cid)
    ok = got == want and want
    bad += not ok
    print(f"{'ok' if ok else 'FAIL'} {cid}: doctor {' '.join(sorted(got))}" +
          ("" if ok else f"; {what}: {' '.join(sorted(want))}"))
for cid in ("torch.kernels", "torch.rocblas", "rocm.rocblas"):
    print(f"{checks[cid]['status']:4} {cid}: {checks[cid]['message'][:160]}")
    bad += checks[cid]["status"] != "ok"
sys.exit(1 if bad else 0)
PY
