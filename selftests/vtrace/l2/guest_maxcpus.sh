#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# L2: 2 vCPUs of 64 possible (-smp 2,maxcpus=64), ports for cpu0, cpu1 and cpu63: resources follow the ports.
#   The module maps a sub-buffer's room per port, not per possible CPU, and
#   the drain thread of cpu63 (never online: no ring) does not wake every
#   drain_ms.
K=/sys/kernel/tracing
KP=$K/instances/vtg-kp/events/kprobes/vtg_mmap
. /tests/lib.sh

[ "$(cat /sys/devices/system/cpu/possible)" = 0-63 ] && [ "$(cat /sys/devices/system/cpu/online)" = 0-1 ]
t $? cpus_2_of_64_possible
# the control thread's vm_mmap()s at load, seen by a kprobe (len: 3rd argument)
echo "p:vtg_mmap vm_mmap len=%dx:u64" >> $K/kprobe_events && mkdir $K/instances/vtg-kp &&
	echo 'comm == "vtrace-ctl"' > $KP/filter && echo 1 > $KP/enable
t $? kprobe_on_vm_mmap
insmod /lib/vtrace/vtrace_guest.ko send_kallsyms=0
t $? load
echo 0 > $KP/enable
lens=$(sed -n 's/.*vtg_mmap: .*len=\([0-9]*\).*/\1/p' $K/instances/vtg-kp/trace)
total=0
for l in $lens; do total=$((total + l)); done
echo "vtg: # mapped at load: $(echo $lens) bytes, $total in all"
# the 128 KiB bounce buffer and 3 ports x 32 KiB (64 x 32 KiB before)
[ "$total" = $((128 * 1024 + 3 * 32 * 1024)) ]
t $? mapping_sized_by_ports
rmdir $K/instances/vtg-kp
echo "-:vtg_mmap" >> $K/kprobe_events
grep -q "^data ports: 3 of 64 CPUs" $D/status
t $? three_ports_of_64

echo 1 > $D/enable
t $? enable
pid=$(ps | awk '$NF == "[vtrace-cpu63]" { print $1 }')
sw() { awk '/^voluntary_ctxt_switches/ { print $2 }' /proc/$pid/status; }
s0=$(sw)
guest_markers 300 0 1 > /dev/null
t $? markers_written
sleep 3
s1=$(sw)
echo "vtg: # drain thread of cpu63 (pid ${pid:-none}): $((s1 - s0)) wake-ups in about 3 s"
[ -n "$pid" ] && [ $((s1 - s0)) -le 8 ]
t $? never_online_cpu_thread_sleeps
echo 0 > $D/enable
t $? disable
# the rows of CPUs 0, 1 and 63 only: 64 rows on the serial console, under
# the nested bed's TCG, held a 6.12 guest's printk long enough for an RCU
# stall report
awk 'NF != 11 || $1 == 0 || $1 == 1 || $1 == 63 { print "vtg-status: " $0 }' $D/status
[ "$(col 0 6)" -ge 300 ] && [ "$(col 1 6)" -ge 300 ] && [ "$(col 0 8)" = 0 ] &&
	[ "$(col 1 8)" = 0 ] && [ "$(col 63 4)" = 0 ] && [ "$(col 63 8)" = 0 ] &&
	[ "$(col 63 10)" = 0 ] && [ "$(col 63 11)" = 0 ] && [ "$(col 63 3)" = no ]
t $? cpus_0_1_streamed_cpu63_nothing
! dmesg | grep -q 'cpu63: reading trace_pipe_raw'
t $? no_read_warning_for_never_online_cpu
rmmod vtrace_guest
t $? unload
