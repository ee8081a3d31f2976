#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vtrace_host with an unstable host TSC: KVM rewrites offsets at every vCPU load; unload under that load.
# vtrace-l1: --no-tsc-reliable --timeout 600
#
# Without tsc=reliable, L1's KVM rewrites each vCPU's offset whenever the
# vCPU is loaded (hundreds of writes a second).  The module must keep up
# (prev_offset chains without a break), survive unload/reload in the
# middle of it, and, once QEMU is stopped (SIGSTOP: no vCPU loads, no
# writes), hold exactly KVM's offsets.
. "$VTRACE_PROJ/testbed/lib.sh"

D=/sys/kernel/debug/vtrace
KD=/sys/kernel/debug/kvm
KO=$VTRACE_HOST_KO

records() {
	grep -v '^#' "$D/tsc_offsets"
}

stat_of() {
	awk -v k="$1" '$1 == k { print $2 }' "$D/stats"
}

chain_ok() {	# every write's prev_offset is its vCPU's offset before
	records | awk '$11 != "snapshot" && ($5 in last) && last[$5] != $7 { bad = 1 }
		       { last[$5] = $8 } END { exit bad }'
}

ktap_header 6
modprobe kvm_amd
insmod "$KO"
l2_start u /tests/host_idle.sh --cpus 2 --ports 0 --ctl none --timeout 200
for ((i = 0; i < 600; i++)); do
	grep -q "vtg: booted" "$VTRACE_OUT/u/console.log" 2>/dev/null && break
	sleep 0.2
done
sleep 3
qpid=$(cat "$VTRACE_OUT/u/qemu.pid")
vm=$(cd "$KD" && ls -d "$qpid"-* | head -1)

n=$(records | wc -l)
ktap_diag "$n records since load, $(stat_of dropped) dropped," \
	"host TSC span of the kept ones: $(records | awk 'NR == 1 { f = $2 } { l = $2 } END { printf "%.0f", l - f }')"
[ "$n" -gt 100 ] && [ "$(stat_of anomalies)" = 0 ] &&
	[ -z "$(records | awk -v vm="$vm" '$4 != vm')" ]
ktap_result $? "many_writes_recorded_for_the_vm"

chain_ok
ktap_result $? "offset_chain_unbroken_under_load"

rc=0
for ((i = 0; i < 10; i++)); do
	rmmod vtrace_host && insmod "$KO" || rc=1
	sleep 0.3
done
ktap_result $rc "unload_reload_while_offsets_are_written"

kill -STOP "$qpid"
sleep 2
want=$(for f in "$KD/$vm"/vcpu*/tsc-offset; do
	id=${f%/tsc-offset}; echo "${id##*/vcpu} $(cat "$f")"; done | sort -n)
got=$(records | awk '{ last[$5] = $8 } END { for (v in last) print v, last[v] }' | sort -n)
ktap_diag "KVM: $(echo $want)" "module: $(echo $got)" "records since last load: $(records | wc -l)"
[ -n "$want" ] && [ "$want" = "$got" ]
ktap_result $? "offsets_equal_kvm_once_vm_stopped"
chain_ok
ktap_result $? "offset_chain_unbroken_after_reload"
kill -CONT "$qpid"
kill "$qpid"
l2_wait
rmmod vtrace_host

save_dmesg l1-dmesg
"$VTRACE_PROJ/testbed/splat-check.sh" "$VTRACE_OUT"/l1-dmesg.log "$VTRACE_OUT"/u/console.log
ktap_result $? "no_kernel_splat"
ktap_finish
