#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vtrace_guest accounting: ring-buffer overruns on purpose; status, EOS, page headers and vtrace-merge --stats agree.
. "$VTRACE_PROJ/testbed/lib.sh"
. "$VTRACE_PROJ/selftests/vtrace/guest-lib.sh"

ktap_header 16
modprobe kvm_amd
dir=$VTRACE_OUT/gacct
l2_run gacct /tests/guest_accounting.sh --cpus 2 --arg 3000 --timeout 240
ktap_result $? "acct_l2_runs"
l2_results gacct acct

"$VTRACE_PROJ/user/vtrace-merge" -q --guest "g=$dir,offset=0" --stats > "$dir/stats.txt" 2>&1
ktap_result $? "acct_vtrace_merge_stats_runs"
sed 's/^/# /' "$dir/stats.txt"
out=$(python3 "$VTRACE_PROJ/selftests/vtrace/guest_check.py" "$dir" --accounting --sessions 3 \
	--console "$dir/console.log" --merge-stats "$dir/stats.txt" 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
ktap_result $rc "acct_status_eos_pages_merge_agree"
# session 2 read during the bursts: losses reported by several pages
pages=$(echo "$out" | sed -n 's/^# session 2 cpu.*lost (\([0-9]*\) pages).*/\1/p' | sort -n | head -1)
[ "${pages:-0}" -ge 2 ]
ktap_result $? "acct_s2_missed_counts_mid_stream" "session 2: fewest pages with a missed count on a CPU: ${pages:-none}"

save_dmesg l1-dmesg
"$VTRACE_PROJ/testbed/splat-check.sh" "$VTRACE_OUT"/*.log "$VTRACE_OUT"/*/console.log
ktap_result $? "no_kernel_splat"
ktap_finish
