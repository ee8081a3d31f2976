#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the static helper programs the L2 test scripts run (gcc -static).
#   build-helpers.sh OUTDIR
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=$1
mkdir -p "$out"
for c in "$here"/helpers/*.c; do
	[ -f "$c" ] || continue
	b=$out/$(basename "$c" .c)
	if [ ! -f "$b" ] || [ "$b" -ot "$c" ] ||
	   [ -n "$(find "$here/helpers" -name '*.h' -newer "$b" -print -quit)" ]; then
		gcc -static -O2 -Wall -Wextra -I"$here/../../include/uapi" -o "$b" "$c"
	fi
done
