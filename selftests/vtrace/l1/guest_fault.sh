#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vtrace_guest faults: unconnected host ends, fewer ports than CPUs, enable/disable loop, CPU hotplug, rmmod while streaming.
. "$VTRACE_PROJ/testbed/lib.sh"
. "$VTRACE_PROJ/selftests/vtrace/guest-lib.sh"

# l2_start_noconn NAME SCRIPT: 2 CPUs; vtrace.ctl and vtrace.cpu1 are QEMU
# server sockets nobody connects to (on L1's /run: bind() fails on the 9p
# results folder), vtrace.cpu0 a file.
l2_start_noconn() {
	local name=$1 script=$2 dir=$VTRACE_OUT/$1
	rm -rf "$dir" /run/vtrace-"$name"-*.sock
	mkdir -p "$dir"
	l2_exec 200 "$dir" -enable-kvm -cpu "${L2_CPU:-host,xsave=off}" \
		-smp 2 -m 512 -display none -no-reboot -monitor none \
		-serial "file:$dir/console.log" -pidfile "$dir/qemu.pid" \
		-kernel "/boot/vmlinuz-$L2_KVER" -initrd "$L2_INITRD" \
		-append "$L2_CMDLINE vtrace_run=$script vtrace_arg=300" \
		-device virtio-serial-pci,id=vser0,max_ports=4 \
		-chardev "socket,id=vtctl,path=/run/vtrace-$name-ctl.sock,server=on,wait=off" \
		-device virtserialport,bus=vser0.0,chardev=vtctl,name=vtrace.ctl \
		-chardev "file,id=vtc0,path=$dir/cpu0" \
		-device virtserialport,bus=vser0.0,chardev=vtc0,name=vtrace.cpu0 \
		-chardev "socket,id=vtc1,path=/run/vtrace-$name-cpu1.sock,server=on,wait=off" \
		-device virtserialport,bus=vser0.0,chardev=vtc1,name=vtrace.cpu1
}

# l2_start_unplug NAME SCRIPT: 2 CPUs, file ends, vtrace.cpu1 with id vtp1,
# vtrace.ctl with id vtpc, and a QEMU monitor socket (on /run) to hot-unplug them.
l2_start_unplug() {
	local name=$1 script=$2 dir=$VTRACE_OUT/$1
	rm -rf "$dir" "/run/vtrace-$name.mon"
	mkdir -p "$dir"
	l2_exec 200 "$dir" -enable-kvm -cpu "${L2_CPU:-host,xsave=off}" \
		-smp 2 -m 512 -display none -no-reboot \
		-monitor "unix:/run/vtrace-$name.mon,server=on,wait=off" \
		-serial "file:$dir/console.log" -pidfile "$dir/qemu.pid" \
		-kernel "/boot/vmlinuz-$L2_KVER" -initrd "$L2_INITRD" \
		-append "$L2_CMDLINE vtrace_run=$script" \
		-device virtio-serial-pci,id=vser0,max_ports=4 \
		-chardev "file,id=vtctl,path=$dir/ctl" \
		-device virtserialport,bus=vser0.0,chardev=vtctl,name=vtrace.ctl,id=vtpc \
		-chardev "file,id=vtc0,path=$dir/cpu0" \
		-device virtserialport,bus=vser0.0,chardev=vtc0,name=vtrace.cpu0 \
		-chardev "file,id=vtc1,path=$dir/cpu1" \
		-device virtserialport,bus=vser0.0,chardev=vtc1,name=vtrace.cpu1,id=vtp1
}

ktap_header 64
modprobe kvm_amd

l2_start_noconn gnoconn /tests/guest_noconn.sh
l2_wait
ktap_result $? "noconn_l2_runs"
l2_results gnoconn noconn
sed -n 's/\r$//; s/^vtg-\(status\|time\): /# \1: /p' "$VTRACE_OUT/gnoconn/console.log"
got=$(grep -ao 'vtg-mark cpu=0 seq=[0-9]*' "$VTRACE_OUT/gnoconn/cpu0" | sort -u | wc -l)
[ "$got" -eq 300 ]
ktap_result $? "noconn_cpu0_markers_all_arrived" "cpu0 file has $got of 300 markers"

l2_run gfault /tests/guest_fault.sh --cpus 3 --ports 2 --timeout 300
ktap_result $? "fault_l2_runs"
l2_results gfault fault
sed -n 's/\r$//; s/^vtg-\(status\|perf\): /# \1: /p' "$VTRACE_OUT/gfault/console.log"
out=$(python3 "$VTRACE_PROJ/selftests/vtrace/guest_check.py" "$VTRACE_OUT/gfault" \
	--ctl-only --sessions 57 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
ktap_result $rc "fault_ctl_stream_whole"
# session 51: cpu1 offline, online, then offline at the stop (read() flush)
out=$(python3 "$VTRACE_PROJ/selftests/vtrace/guest_check.py" "$VTRACE_OUT/gfault" \
	--sessions 57 --session 51 --cpus 0,1 --expect 0:0-899 --expect 1:0-299+600-999 2>&1)
rc=$?
echo "$out" | grep -v '^# ctl:' | sed 's/^/# /'
ktap_result $rc "fault_hotplug_session_markers_all_arrived"
# session 52: cpu1 offline at the start with older markers in its buffer
out=$(python3 "$VTRACE_PROJ/selftests/vtrace/guest_check.py" "$VTRACE_OUT/gfault" \
	--sessions 57 --session 52 --cpus 0,1 --expect 0:0-199 --expect 1:0-99 2>&1)
rc=$?
echo "$out" | grep -v '^# ctl:' | sed 's/^/# /'
ktap_result $rc "fault_offline_at_start_no_old_events"
# session 53: function tracer on during the stop; 54: a busy marker writer
out=$(python3 "$VTRACE_PROJ/selftests/vtrace/guest_check.py" "$VTRACE_OUT/gfault" \
	--sessions 57 --session 53 --cpus 0,1 --expect 0:0-299 --expect 1:0-299 2>&1)
rc=$?
echo "$out" | grep -v '^# ctl:' | sed 's/^/# /'
ktap_result $rc "fault_function_tracer_stop_markers_all_arrived"
busy=$(tr -d '\r' < "$VTRACE_OUT/gfault/console.log" |
	awk -F'[ =]' '/^vtg-busy: cpu=[01] / { printf "--expect %s:0-%d ", $3, $5 - 1 }')
# shellcheck disable=SC2086
out=$(python3 "$VTRACE_PROJ/selftests/vtrace/guest_check.py" "$VTRACE_OUT/gfault" \
	--sessions 57 --session 54 --cpus 0,1 $busy 2>&1)
rc=$?
echo "$out" | grep -v '^# ctl:' | sed 's/^/# /'
[ "$(echo "$busy" | wc -w)" = 4 ]
ktap_result $((rc | $?)) "fault_busy_writer_stop_markers_all_arrived" "$busy"

l2_start_unplug gunplug /tests/guest_unplug.sh
l2_wait_console gunplug '^vtg-phase: streaming' 200 && sleep 2
l2_monitor "/run/vtrace-gunplug.mon" "device_del vtp1" > "$VTRACE_OUT/gunplug/monitor.out"
ktap_diag "monitor: device_del vtp1 sent"
l2_wait_console gunplug '^vtg-phase: ctl-unplug' 200
l2_monitor "/run/vtrace-gunplug.mon" "device_del vtpc" >> "$VTRACE_OUT/gunplug/monitor.out"
ktap_diag "monitor: device_del vtpc sent"

l2_wait
ktap_result $? "unplug_l2_runs"
l2_results gunplug unplug
sed -n 's/\r$//; s/^vtg-\(status\): /# \1: /p' "$VTRACE_OUT/gunplug/console.log"

save_dmesg l1-dmesg
"$VTRACE_PROJ/testbed/splat-check.sh" "$VTRACE_OUT"/*.log "$VTRACE_OUT"/*/console.log
ktap_result $? "no_kernel_splat"
ktap_finish
