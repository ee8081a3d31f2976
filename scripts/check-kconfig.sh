#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Stop early, with the option's name, when KDIR lacks a CONFIG_ vtrace needs.
set -eu
kdir=$1
conf="$kdir/.config"
[ -f "$conf" ] || conf="$kdir/include/config/auto.conf"
if [ ! -f "$conf" ]; then
	echo "vtrace: $kdir has no .config: is it a configured kernel build tree?" >&2
	exit 1
fi
rc=0
for opt in CONFIG_TRACING CONFIG_RING_BUFFER CONFIG_DEBUG_FS CONFIG_TRACEPOINTS \
	   CONFIG_VIRTIO_CONSOLE CONFIG_KVM CONFIG_X86_64; do
	if ! grep -Eq "^$opt=(y|m)" "$conf"; then
		echo "vtrace: $kdir: $opt is not set; vtrace needs it" >&2
		rc=1
	fi
done
exit $rc
