#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print the kernel build tree the modules build against (the Makefile's KDIR).
#
#   kdir.sh [KVER]
#
# KVER given: /lib/modules/KVER/build.  Else the running kernel's build tree
# when it has one, else the headers of the Debian kernel linux-image-amd64
# points to, else the newest installed linux-headers-*-amd64.  On a fresh
# machine, before `make deps` installed linux-headers-amd64, there is none:
# it prints nothing and exits 1, and the Makefile asks again after deps.
# VTRACE_SYSROOT (tests): look under that folder instead of /, without dpkg.
set -u
root=${VTRACE_SYSROOT:-}

if [ -n "${1:-}" ]; then
	echo "$root/lib/modules/$1/build"
	exit 0
fi
d=$root/lib/modules/$(uname -r)/build
if [ -f "$d/Makefile" ]; then
	echo "$d"
	exit 0
fi
if [ -z "$root" ]; then
	k=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null |
		sed -n 's/.*linux-image-\([^ ,]*\).*/\1/p')
	if [ -n "$k" ] && [ -f "/usr/src/linux-headers-$k/Makefile" ]; then
		echo "/usr/src/linux-headers-$k"
		exit 0
	fi
fi
for d in $(ls -d "$root"/usr/src/linux-headers-*-amd64 2>/dev/null | sort -V -r); do
	if [ -f "$d/Makefile" ]; then
		echo "$d"
		exit 0
	fi
done
exit 1
