#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The guest resets itself (sysrq b) 3 s after its init ran this, with no
# kernel message: what the bed's mid-run resets look like to its watchdog
# (testbed/l2-watch.sh), for l1/bed_reset.sh.  No vtrace code is loaded.
echo "vtg: ok 1 l2_up"
sleep 3
echo b > /proc/sysrq-trigger
