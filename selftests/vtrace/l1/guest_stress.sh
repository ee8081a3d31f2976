#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vtrace_guest for minutes: the fault cases in loops, then control-port fuzzing by the host; no splat, no leak.
#   ARG: seconds of each phase (default 30; Documentation/fuzzing.rst has a long run)
# vtrace-l1: --timeout 1800
# vtrace-l1-manual: the guest stalls now and then in the fuzz phase (RCU stall, open in Documentation/fuzzing.rst)
. "$VTRACE_PROJ/testbed/lib.sh"
. "$VTRACE_PROJ/selftests/vtrace/guest-lib.sh"

SECS=${1:-30}
name=gstress
dir=$VTRACE_OUT/$name
ktap_header 15
modprobe kvm_amd
l2_start $name /tests/guest_stress.sh --cpus 2 --ctl socket --arg "$SECS" --timeout $((SECS * 3 + 400))
for i in $(seq 1 $((SECS * 2 + 240))); do
	grep -q '^vtg-phase: fuzz' "$dir/console.log" 2> /dev/null && break
	sleep 1
done
python3 "$VTRACE_PROJ/selftests/vtrace/guest_ctl_fuzz.py" "/run/vtrace-$name.sock" "$dir/fuzz.ctl" \
	"$SECS" > "$dir/fuzz.out" 2>&1
fuzz_rc=$?
while read -r line; do
	case "$line" in
	"ok "*)		ktap_result 0 "${line#ok * }" ;;
	"not ok "*)	ktap_result 1 "${line#not ok * }" ;;
	"#"*)		echo "$line" ;;
	esac
done < "$dir/fuzz.out"
ktap_result $fuzz_rc "ctl_fuzz_exit_status" "fuzzer exit $fuzz_rc"
l2_wait
ktap_result $? "stress_l2_runs"
l2_results $name stress
sed -n 's/\r$//; s/^vtg-stress: /# /p' "$dir/console.log"
save_dmesg l1-dmesg
"$VTRACE_PROJ/testbed/splat-check.sh" "$VTRACE_OUT"/*.log "$VTRACE_OUT"/*/console.log
ktap_result $? "no_kernel_splat"
ktap_finish
