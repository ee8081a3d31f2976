#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vtrace_guest data path: markers of every CPU reach the host's cpuK files, metadata, EOS counters.
. "$VTRACE_PROJ/testbed/lib.sh"
. "$VTRACE_PROJ/selftests/vtrace/guest-lib.sh"

ktap_header 15
modprobe kvm_amd
l2_run gdata /tests/guest_data.sh --cpus 2 --arg 3000 --timeout 240
ktap_result $? "data_l2_runs"
l2_results gdata data
checker gdata data_host_side --markers 3000 --console "$VTRACE_OUT/gdata/console.log"
sed -n 's/\r$//; s/^vtg-\(status\|time\|dmesg\): /# \1: /p' "$VTRACE_OUT/gdata/console.log"
ls -l "$VTRACE_OUT/gdata" | sed 's/^/# /'

save_dmesg l1-dmesg
"$VTRACE_PROJ/testbed/splat-check.sh" "$VTRACE_OUT"/*.log "$VTRACE_OUT"/*/console.log
ktap_result $? "no_kernel_splat"
ktap_finish
