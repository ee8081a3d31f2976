#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the test-only fault injector vtrace_failinj.ko for one kernel, out of the source tree.
#   build-failinj.sh KVER OUTDIR      -> OUTDIR/vtrace_failinj.ko (exit 1 if it cannot be built)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
kver=$1 out=$2
kdir=/lib/modules/$kver/build
[ -d "$kdir" ] || kdir=/usr/src/linux-headers-$kver
[ -d "$kdir" ] || { echo "build-failinj: no headers for $kver" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
src=$here/failinj/vtrace_failinj.c
[ "$out/vtrace_failinj.ko" -nt "$src" ] && exit 0
cp "$src" "$here/failinj/Kbuild" "$out/"
make -s -C "$kdir" M="$out" W=1 modules 2>&1 | grep -v "Skipping BTF" >&2 || true
[ -f "$out/vtrace_failinj.ko" ]
