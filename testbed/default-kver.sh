#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print the default test kernel: the release Debian's linux-image-amd64 points to.
# Falls back to the newest release with both an image and headers installed.
k=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null |
	sed -n 's/.*linux-image-\([^ ,]*\).*/\1/p')
if [ -n "$k" ] && [ -f "/boot/vmlinuz-$k" ] && [ -d "/usr/src/linux-headers-$k" ]; then
	echo "$k"
	exit 0
fi
for d in $(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V -r); do
	k=${d#/usr/src/linux-headers-}
	if [ -f "/boot/vmlinuz-$k" ] && [ -d "/lib/modules/$k" ]; then
		echo "$k"
		exit 0
	fi
done
echo "default-kver: no kernel with image and headers installed (linux-image-amd64, linux-headers-amd64)" >&2
exit 1
