#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the L2 ("guest") initramfs: busybox, vtrace_guest.ko, L2 scripts, static helpers,
# the test-only fault injector vtrace_failinj.ko.
#
#   build-l2.sh KVER [GUEST_KO]
# Writes build/testbed/initramfs-l2-KVER.cpio.gz.  GUEST_KO defaults to the
# module built in the tree (kmod/guest/vtrace_guest.ko).
set -eu
shopt -s nullglob
here=$(cd "$(dirname "$0")" && pwd)
proj=$(cd "$here/.." && pwd)
kver=$1
ko=${2:-$proj/kmod/guest/vtrace_guest.ko}

"$proj/selftests/vtrace/build-helpers.sh" "$proj/build/helpers"
extra=("$ko=lib/vtrace/vtrace_guest.ko")
for f in "$proj"/selftests/vtrace/l2/*.sh; do
	extra+=("$f=tests/$(basename "$f")")
done
for f in "$proj"/build/helpers/*; do
	extra+=("$f=bin/$(basename "$f")")
done
# the test-only fault injector, when this kernel's headers build it
fi=$proj/build/failinj/$kver/vtrace_failinj.ko
if "$proj/selftests/vtrace/build-failinj.sh" "$kver" "$(dirname "$fi")"; then
	extra+=("$fi=lib/vtrace/vtrace_failinj.ko")
fi
"$here/mkinitramfs.sh" "$kver" l2 "$proj/build/testbed/initramfs-l2-$kver.cpio.gz" "${extra[@]}"
