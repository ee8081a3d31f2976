#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the L2 ("guest") initramfs: busybox, vtrace_guest.ko, L2 scripts, static helpers,
# the test-only fault injector vtrace_failinj.ko and irqs-off injector vtrace_irqoff.ko.
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
# the modules without their debug information (vtrace_guest.ko: 2.1 MB
# with it, 133 KB without): the guest loads and the image carries less
mkdir -p "$proj/build/testbed/l2-ko"
strip --strip-debug -o "$proj/build/testbed/l2-ko/vtrace_guest.ko" "$ko" 2> /dev/null ||
	cp "$ko" "$proj/build/testbed/l2-ko/vtrace_guest.ko"
extra=("$proj/build/testbed/l2-ko/vtrace_guest.ko=lib/vtrace/vtrace_guest.ko")
for f in "$proj"/selftests/vtrace/l2/*.sh; do
	extra+=("$f=tests/$(basename "$f")")
done
for f in "$proj"/build/helpers/*; do
	extra+=("$f=bin/$(basename "$f")")
done
# the test-only modules, when this kernel's headers build them (L1 of the
# same kernel loads them from build/ too: l1/guest_failinj.sh, align-lib.sh)
for m in failinj irqoff; do
	tko=$proj/build/$m/$kver/vtrace_$m.ko
	if "$proj/selftests/vtrace/build-testmod.sh" "$m" "$kver" "$(dirname "$tko")"; then
		strip --strip-debug -o "$proj/build/testbed/l2-ko/vtrace_$m.ko" "$tko"
		extra+=("$proj/build/testbed/l2-ko/vtrace_$m.ko=lib/vtrace/vtrace_$m.ko")
	fi
done
"$here/mkinitramfs.sh" "$kver" l2 "$proj/build/testbed/initramfs-l2-$kver.cpio.gz" "${extra[@]}"
