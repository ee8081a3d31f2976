#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vtrace_guest agent mode: "vtrace agent" starts, stops and sets events over QEMU's ctl socket; fuzzing gets errors.
. "$VTRACE_PROJ/testbed/lib.sh"
. "$VTRACE_PROJ/selftests/vtrace/guest-lib.sh"

VT=$VTRACE_PROJ/user/vtrace

# l2_start_sock NAME SCRIPT CPUS ARG SOCKET: l2_start with the ctl port's host
# end a QEMU server socket at SOCKET.  testbed/lib.sh's "--ctl socket" puts
# the socket in the results folder, on L1's 9p mount of the project, where
# bind() fails (ENXIO); SOCKET here is on L1's tmpfs (/run).
l2_start_sock() {
	local name=$1 script=$2 cpus=$3 arg=$4 sock=$5 k
	local dir=$VTRACE_OUT/$name
	rm -rf "$dir" "$sock"
	mkdir -p "$dir"
	local args=(-enable-kvm -cpu "${L2_CPU:-host,xsave=off}" -smp "$cpus" -m 512
		-display none -no-reboot -monitor none
		-serial "file:$dir/console.log" -pidfile "$dir/qemu.pid"
		-kernel "/boot/vmlinuz-$L2_KVER" -initrd "$L2_INITRD"
		-append "$L2_CMDLINE vtrace_run=$script vtrace_arg=$arg"
		-device "virtio-serial-pci,id=vser0,max_ports=$((cpus + 2))"
		-chardev "socket,id=vtctl,path=$sock,server=on,wait=off"
		-device "virtserialport,bus=vser0.0,chardev=vtctl,name=vtrace.ctl")
	for ((k = 0; k < cpus; k++)); do
		args+=(-chardev "file,id=vtc$k,path=$dir/cpu$k"
		       -device "virtserialport,bus=vser0.0,chardev=vtc$k,name=vtrace.cpu$k")
	done
	l2_exec 240 "$dir" "${args[@]}"
}
ktap_header 50
modprobe kvm_amd
name=gagent
dir=$VTRACE_OUT/$name
sock=/run/vtrace-$name.sock
l2_start_sock $name /tests/guest_agent.sh 2 500 "$sock"


# the guest is up once it answers HELLO
ok=1
for i in $(seq 1 200); do
	if [ -S "$sock" ] && $VT agent -s "$sock" -o "$dir" -t 2 hello > "$dir/agent-hello.out" 2>&1; then
		ok=0
		break
	fi
	kill -0 "$L2_PID" 2>/dev/null || break
	sleep 1
done
ktap_result $ok "agent_hello" "$(cat "$dir/agent-hello.out")"

agent() {	# agent TEST EXPECT COMMAND...: run vtrace agent, its output must match EXPECT
	local test=$1 expect=$2 out
	shift 2
	out=$($VT agent -s "$sock" -o "$dir" "$@" 2>&1)
	local rc=$?
	echo "$out" | sed 's/^/# /'
	[ $rc -eq 0 ] && echo "$out" | grep -q "$expect"
	ktap_result $? "$test"
}
agent agent_events "ACK: SET_EVENTS" events "sched:sched_switch"
agent agent_start "STARTED: session 1" start
sleep 4
agent agent_status_tracing "STATUS: state tracing" status
agent agent_stop "EOS: state idle" stop
python3 "$VTRACE_PROJ/selftests/vtrace/guest_agent_fuzz.py" "$sock" "$dir/fuzz.ctl" > "$dir/fuzz.out" 2>&1
fuzz_rc=$?
while read -r line; do
	case "$line" in
	"ok "*)		ktap_result 0 "fuzz_${line#ok * }" ;;
	"not ok "*)	ktap_result 1 "fuzz_${line#not ok * }" ;;
	"#"*)		echo "$line" ;;
	esac
done < "$dir/fuzz.out"
[ $fuzz_rc -eq 0 ] || ktap_diag "fuzz exit $fuzz_rc"
agent agent_buffer_size "ACK: SET_BUFFER_SIZE" buffer-size 2048
# two slow hosts in turn, each until the guest's console says its start is over
# (40 s at most): 32 KiB a second, then 1 byte a second
python3 "$VTRACE_PROJ/selftests/vtrace/guest_slow_host.py" "$sock" "$dir/slow.ctl" 40 \
	--until "$dir/console.log" status_readable_during_slow_host_start > "$dir/slow.out" 2>&1
ktap_result $? slow_host_ran
cat "$dir/slow.out"
python3 "$VTRACE_PROJ/selftests/vtrace/guest_slow_host.py" "$sock" "$dir/byte.ctl" 40 \
	--rate 1 --cue 1024 --until "$dir/console.log" status_readable_during_byte_host_start \
	> "$dir/byte.out" 2>&1
ktap_result $? byte_host_ran
cat "$dir/byte.out"
l2_wait
ktap_result $? "l2_runs"
l2_results $name guest
# (--session 1: the data files also hold the guest's own session with the slow host)
checker $name agent_ctl_and_pages --markers 500 --seq-gaps --session 1
sed -n 's/\r$//; s/^vtg-\(status\): /# \1: /p' "$dir/console.log"
save_dmesg l1-dmesg
"$VTRACE_PROJ/testbed/splat-check.sh" "$VTRACE_OUT"/*.log "$VTRACE_OUT"/*/console.log
ktap_result $? "no_kernel_splat"
ktap_finish
