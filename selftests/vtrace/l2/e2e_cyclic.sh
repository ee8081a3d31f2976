#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Demo/e2e guest: cyclictest on CPU 1 for $1 seconds (default 10).
secs=${1:-10}
chroot /host /usr/bin/cyclictest -q -D "$secs" -i 1000 -t 1 -a 1 -p 80 -m
echo "vtg: cyclictest done"
