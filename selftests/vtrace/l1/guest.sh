#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vtrace_guest data path: markers of every CPU reach the host's cpuK files, metadata, EOS counters.
. "$VTRACE_PROJ/testbed/lib.sh"

# l2_results NAME PREFIX: the guest's "vtg: ok N name" lines as results here
l2_results() {
	local line tmp=$VTRACE_OUT/$1.ktap
	l2_ktap "$1" > "$tmp"
	while read -r line; do
		case "$line" in
		"ok "*)		ktap_result 0 "$2_${line#ok * }" ;;
		"not ok "*)	ktap_result 1 "$2_${line#not ok * }" ;;
		esac
	done < "$tmp"
}

# checker NAME TEST ARGS...: guest_check.py on the guest's port files, one result
checker() {
	local name=$1 test=$2 out rc
	shift 2
	out=$(python3 "$VTRACE_PROJ/selftests/vtrace/guest_check.py" "$VTRACE_OUT/$name" "$@" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	ktap_result $rc "$test"
}

ktap_header 14
modprobe kvm_amd
l2_run gdata /tests/guest_data.sh --cpus 2 --arg 3000 --timeout 240
ktap_result $? "data_l2_runs"
l2_results gdata data
checker gdata data_host_side --markers 3000 --console "$VTRACE_OUT/gdata/console.log"
sed -n 's/\r$//; s/^vtg-\(status\|time\): /# \1: /p' "$VTRACE_OUT/gdata/console.log"
ls -l "$VTRACE_OUT/gdata" | sed 's/^/# /'

save_dmesg l1-dmesg
"$VTRACE_PROJ/testbed/splat-check.sh" "$VTRACE_OUT"/*.log "$VTRACE_OUT"/*/console.log
ktap_result $? "no_kernel_splat"
ktap_finish
