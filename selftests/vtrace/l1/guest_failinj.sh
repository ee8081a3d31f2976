#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fault injection (test-only vtrace_failinj.ko): vtrace_guest's calls fail one by one in L2, vtrace_host's load in L1; the loader of vtrace_guest dies.
#   ARG: most failure points tried per function (default 2, make check's short
#   run; 1000 tries them all: Documentation/fuzzing.rst, "Fault injection")
# vtrace-l1: --timeout 900
. "$VTRACE_PROJ/testbed/lib.sh"
. "$VTRACE_PROJ/selftests/vtrace/guest-lib.sh"

FI=$VTRACE_PROJ/build/failinj/$KVER/vtrace_failinj.ko
FP=/sys/module/vtrace_failinj/parameters
MAX=${1:-2}

# host_sweep FUNC RET GFP_ARG: fail vtrace_host's 1st, 2nd, ... call of FUNC
# during insmod (and a read of tsc_offsets, rmmod when it loaded)
host_bad=0 host_points=0
host_sweep() {
	local k=1 inj hits
	while [ $k -le "$MAX" ]; do
		insmod "$FI" func="$1" ret="$2" gfp_arg="$3" comm='*' caller=vtrace_host nth=$k ||
			{ ktap_diag "cannot probe $1"; host_bad=$((host_bad + 1)); return; }
		if insmod "$VTRACE_HOST_KO" 2> /dev/null; then
			cat /sys/kernel/debug/vtrace/tsc_offsets > /dev/null
			rmmod vtrace_host || { ktap_diag "$1 call $k: rmmod failed"; host_bad=$((host_bad + 1)); }
		fi
		inj=$(cat $FP/injected) hits=$(cat $FP/hits)
		rmmod vtrace_failinj
		if grep -q '^vtrace_host ' /proc/modules || [ -d /sys/kernel/debug/vtrace ]; then
			ktap_diag "$1 call $k: left behind"
			host_bad=$((host_bad + 1))
			rmmod vtrace_host 2> /dev/null
		fi
		[ "$inj" -gt 0 ] || break
		host_points=$((host_points + 1))
		k=$((k + 1))
	done
	ktap_diag "host: $1: $((k - 1)) of $hits calls failed in turn"
}

ktap_header 19
modprobe kvm_amd
if [ ! -f "$FI" ]; then
	ktap_skip host_load_fails_cleanly "vtrace_failinj.ko not built for $KVER"
else
	for spec in vzalloc:0:0 __kmalloc:0:2 debugfs_create_dir:-12:0 \
		    tracepoint_probe_register:-12:0 register_kprobe:-12:0; do
		IFS=: read -r f r g <<< "$spec"
		# since v6.10 (allocation profiling) the allocators end in _noprof
		grep -q " ${f}_noprof\$" /proc/kallsyms && f=${f}_noprof
		host_sweep "$f" "$r" "$g"
	done
	ktap_diag "host: $host_points failure points, $host_bad problems"
	[ $host_bad = 0 ] && [ $host_points -gt 0 ]
	ktap_result $? host_load_fails_cleanly
fi
insmod "$VTRACE_HOST_KO" && head -c 0 /sys/kernel/debug/vtrace/tsc_offsets && rmmod vtrace_host
ktap_result $? host_loads_after_injection

# maxcpus=1: CPU 1 is possible but not online until the guest script onlines it
L2_APPEND=maxcpus=1 l2_run gfi /tests/guest_failinj.sh --cpus 2 --arg "$MAX" \
	--timeout $((MAX * 100 + 300))
ktap_result $? "failinj_l2_runs"
l2_results gfi failinj
out=$(python3 "$VTRACE_PROJ/selftests/vtrace/guest_meta_check.py" "$VTRACE_OUT/gfi/ctl" \
	--apic-ids 0,1 2>&1)
r=$?
echo "$out" | sed 's/^/# /'
ktap_result $r meta_apic_id_of_cpu_never_online
out=$(python3 "$VTRACE_PROJ/selftests/vtrace/guest_meta_check.py" "$VTRACE_OUT/gfi/ctl" \
	--kallsyms-zero --no-printk-formats 2>&1)
r=$?
echo "$out" | sed 's/^/# /'
ktap_result $r meta_addresses_only_as_an_unprivileged_reader_sees_them
sed -n 's/\r$//; s/^vtg-fi: /# /p' "$VTRACE_OUT/gfi/console.log"

save_dmesg l1-dmesg
"$VTRACE_PROJ/testbed/splat-check.sh" "$VTRACE_OUT"/*.log "$VTRACE_OUT"/*/console.log
ktap_result $? "no_kernel_splat"
ktap_finish
