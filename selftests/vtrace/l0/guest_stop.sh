#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The second half of l1/guest_stop.sh, run on this machine by run_vm_tests.sh
# once L1 has ended: vtrace-merge, reading the slow-host guest's ports, warns
# once for each stop that could not turn something off (the EOS flags 1 and 2
# of the vtrace_failinj cases), and for nothing else.
. "$VTRACE_PROJ/testbed/lib.sh"

ktap_header 1
d=$VTRACE_OUT/gstop
on="EOS of session [0-9]*: the guest could not turn its instance's tracing_on off"
ev="EOS of session [0-9]*: the guest could not disable its instance's events"
want="1 1" all=2
grep -q "# SKIP vtrace_failinj" "$d/console.log" 2> /dev/null && want="0 0" all=0
"$VTRACE_PROJ/user/vtrace-merge" --guest "g=$d,offset=0" --stats > "$d/merge-stats" \
	2> "$d/merge-err"
rc=$?
got="$(grep -c "$on" "$d/merge-err") $(grep -c "$ev" "$d/merge-err")"
grep "could not" "$d/merge-err" | sed 's/^/# /'
echo "# vtrace-merge: tracing_on and events warnings: $got, expected $want (exit $rc)"
[ $rc = 0 ] && [ "$got" = "$want" ] && [ "$(grep -c "could not" "$d/merge-err")" = $all ]
ktap_result $? merge_warns_what_each_stop_left_on
ktap_finish
