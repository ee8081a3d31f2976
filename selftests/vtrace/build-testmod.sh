#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build one of the test-only modules (selftests/vtrace/NAME/) for one kernel, out of the source tree.
#   build-testmod.sh NAME KVER OUTDIR   -> OUTDIR/vtrace_NAME.ko (exit 1 if it cannot be built)
# NAME: failinj (the fault injector), irqoff (the irqs-off injector).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
name=$1 kver=$2 out=$3
kdir=/lib/modules/$kver/build
[ -d "$kdir" ] || kdir=/usr/src/linux-headers-$kver
[ -d "$kdir" ] || { echo "build-testmod: no headers for $kver" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
src=$here/$name/vtrace_$name.c
[ "$out/vtrace_$name.ko" -nt "$src" ] && exit 0
cp "$src" "$here/$name/Kbuild" "$out/"
make -s -C "$kdir" M="$out" W=1 modules 2>&1 | grep -v "Skipping BTF" >&2 || true
[ -f "$out/vtrace_$name.ko" ]
