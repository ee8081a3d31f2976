#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build a busybox initramfs for the test bed's L1 (host) or L2 (guest) kernel.
#
#   mkinitramfs.sh KVER ROLE OUT.cpio.gz [FILE=DEST ...]
#
# ROLE is l1 or l2.  The image holds busybox, the kernel modules the role
# needs (with their dependencies, in load order), testbed/init-ROLE.sh as
# /init, and every extra FILE copied to DEST inside the image.
set -eu

kver=$1 role=$2 out=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)

case "$role" in
l1)	mods="virtio_pci virtio_console 9pnet_virtio 9p" ;;
l2)	mods="virtio_pci virtio_console 9pnet_virtio 9p msr" ;;  # 9p: l2_start --hostroot
*)	echo "mkinitramfs: unknown role $role" >&2; exit 2 ;;
esac

[ -d "/lib/modules/$kver" ] || { echo "mkinitramfs: no /lib/modules/$kver" >&2; exit 1; }

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,run,mnt,lib/modules,etc,root}
cp /bin/busybox "$root/bin/busybox"
ln -s busybox "$root/bin/sh"

# Dependencies first: a depth-first walk of modinfo's "depends".
declare -A seen
order=()
add_module() {
	local m=$1 dep
	[ -n "${seen[$m]:-}" ] && return 0
	seen[$m]=1
	for dep in $(modinfo -k "$kver" -F depends "$m" 2>/dev/null | tr ',' ' '); do
		add_module "$dep"
	done
	local f
	f=$(modinfo -k "$kver" -F filename "$m" 2>/dev/null) || true
	case "$f" in
	""|"(builtin)")	return 0 ;;
	esac
	cp "$f" "$root/lib/modules/"
	order+=("$(basename "$f")")
}
for m in $mods; do
	add_module "$m"
done
printf '%s\n' "${order[@]}" > "$root/lib/modules/order"

cp "$here/init-$role.sh" "$root/init"
chmod +x "$root/init"

for spec in "$@"; do
	src=${spec%%=*} dst=${spec#*=}
	mkdir -p "$root/$(dirname "$dst")"
	cp -L "$src" "$root/$dst"
done

# a temporary name of this run's own: two builds at once (two suites finding the image
# stale) each rename a whole image into place; with one shared name the second's mv failed
mkdir -p "$(dirname "$out")"
tmp="$out.tmp.$$"
trap 'rm -rf "$root" "$tmp"' EXIT
(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 > "$tmp"
mv "$tmp" "$out"
