#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Smoke test in L2: vtrace_guest loads and unloads.
if insmod /lib/vtrace/vtrace_guest.ko && rmmod vtrace_guest; then
	echo "vtg: ok 1 l2_vtrace_guest_load_unload"
else
	echo "vtg: not ok 1 l2_vtrace_guest_load_unload"
fi
