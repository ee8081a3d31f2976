#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# L2 side of the host suite: boot, say so, then idle until L1 stops the VM.
echo "vtg: booted"
sleep 600
