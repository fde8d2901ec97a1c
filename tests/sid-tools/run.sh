#!/usr/bin/env bash
# run.sh [--bind HOSTDIR:DIR]... [--rw HOSTDIR:DIR]... -- COMMAND ARGS...: COMMAND inside the
# sid tools root (root.sh), in a mount namespace of its own: proc mounted, a fresh tmpfs on
# /tmp, each --bind HOSTDIR bound read-only at DIR and each --rw one writable (DIR must exist in
# the root: /mnt, /media, /srv, /opt, /home), an empty environment but PATH (LLVM 21 first) and
# HOME=/tmp, and RDNA1_ENV's NAME=VALUE words. The cached root itself is never written (torch's
# import made /tmp/torchinductor_root there before /tmp was a tmpfs).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$("$here/root.sh")
binds=()
while [ $# -gt 0 ]; do
	case $1 in
	--bind) binds+=("ro:$2"); shift 2 ;;
	--rw) binds+=("rw:$2"); shift 2 ;;
	--) shift; break ;;
	*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
exec unshare --mount --fork /bin/sh -c '
	root=$1; shift
	mount --make-rprivate / && mount -t proc proc "$root/proc" &&
		mount -t tmpfs -o mode=1777 tmpfs "$root/tmp" || exit 1
	while [ "$1" != -- ]; do
		mode=${1%%:*}; b=${1#*:}; host=${b%%:*}; dir=${b#*:}; shift
		mount --bind "$host" "$root$dir" && mount -o "remount,bind,$mode" "$root$dir" || exit 1
	done
	shift
	# shellcheck disable=SC2086 # RDNA1_ENV is a list of words
	exec chroot "$root" env -i PATH=/usr/lib/llvm-21/bin:/usr/bin:/bin HOME=/tmp ${RDNA1_ENV:-} "$@"
' sh "$root" "${binds[@]}" -- "$@"
