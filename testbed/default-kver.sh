#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print the newest Debian kernel release that has both an image and headers.
for d in $(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V -r); do
	k=${d#/usr/src/linux-headers-}
	if [ -f "/boot/vmlinuz-$k" ] && [ -d "/lib/modules/$k" ]; then
		echo "$k"
		exit 0
	fi
done
echo "default-kver: no kernel with image and headers installed (linux-image-amd64, linux-headers-amd64)" >&2
exit 1
