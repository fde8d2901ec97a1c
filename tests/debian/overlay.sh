# A Debian root (tests/debian/root.sh) to work in without writing to it: sourced by the Debian
# stages after env.sh, never run.
#   overlay_up LOWER DIR   mounts an overlay of LOWER at DIR/root (its writes in DIR/upper) with
#                          /proc, sets mnt to it and unmounts everything at exit
#   bind_in SRC PATH [ro]  binds SRC at PATH inside the root (unmounted at exit)
#   in_root CMD...         runs CMD in the root, niced while make test builds what its first
#                          VM boot waits for (env.sh, niced), with a clean environment
mounts=()
overlay_cleanup() {
	local i
	for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount "${mounts[$i]}" 2>/dev/null || umount -l "${mounts[$i]}"; done
}
overlay_up() {
	mnt=$2/root
	mkdir -p "$2/upper" "$2/work" "$mnt"
	trap overlay_cleanup EXIT
	mount -t overlay overlay -o "lowerdir=$1,upperdir=$2/upper,workdir=$2/work" "$mnt"
	mounts+=("$mnt")
	mount -t proc proc "$mnt/proc"
	mounts+=("$mnt/proc")
}
bind_in() {
	mkdir -p "$mnt$2"
	mount --bind "$1" "$mnt$2"
	mounts+=("$mnt$2")
	[ "${3:-}" != ro ] || mount -o remount,bind,ro "$mnt$2"
}
in_root() { niced chroot "$mnt" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 "$@"; }
