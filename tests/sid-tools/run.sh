#!/usr/bin/env bash
# run.sh [--bind HOSTDIR:DIR]... -- COMMAND ARGS...: COMMAND inside the sid tools root (root.sh),
# in a mount namespace of its own: proc mounted, each HOSTDIR bound read-only at DIR (which must
# exist in the root: /mnt, /media, /srv, /opt), an empty environment but PATH (LLVM 21 first) and HOME=/tmp.
# The cached root itself is never written.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$("$here/root.sh")
binds=()
while [ $# -gt 0 ]; do
	case $1 in
	--bind) binds+=("$2"); shift 2 ;;
	--) shift; break ;;
	*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
exec unshare --mount --fork /bin/sh -c '
	root=$1; shift
	mount --make-rprivate / && mount -t proc proc "$root/proc" || exit 1
	while [ "$1" != -- ]; do
		host=${1%%:*}; dir=${1#*:}; shift
		mount --bind "$host" "$root$dir" && mount -o remount,bind,ro "$root$dir" || exit 1
	done
	shift
	exec chroot "$root" env -i PATH=/usr/lib/llvm-21/bin:/usr/bin:/bin HOME=/tmp "$@"
' sh "$root" "${binds[@]}" -- "$@"
