#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vtrace-l1: --timeout 900
# vtrace-l1-manual: two L2 boots and two recordings: 97 to 142 s in the nested bed, over the 20 s make check has left
# "vtrace record" as a user runs it: two guests at once, each a QEMU with
# vtrace ports whose control port is a socket (agent mode): g1 on a plain
# command line (no -name ...,debug-threads=on: its vCPU threads keep QEMU's
# name), g2 with the names.  "vtrace record -o DIR -- sleep N", no guest
# named, finds both, records the host and them, and writes the capture with
# its manifest (each guest's pid, vCPU ids, host threads).  A second
# recording loses g2 half-way (its QEMU killed by the recorded command):
# marked, g1 kept, exit 1.
# vtrace record without vtrace_host loaded is refused first.  The merges of
# the captures run on L0 (l0/record.sh).
. "$VTRACE_PROJ/testbed/lib.sh"

VT=$VTRACE_PROJ/user/vtrace
out=$VTRACE_OUT
ktap_header 13
modprobe kvm_amd

$VT record -o /tmp/cap-nohost -- true > "$out/nohost.out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "vtrace_host is not loaded.*modprobe vtrace_host" "$out/nohost.out" &&
	[ ! -e /tmp/cap-nohost ]
ktap_result $? record_refused_without_vtrace_host "$(cat "$out/nohost.out")"

insmod "$VTRACE_HOST_KO"
# trace-cmd starts while the guests run: no text patch for its events
l1_hold_events sched/sched_switch sched/sched_wakeup kvm/kvm_entry kvm/kvm_exit \
	irq_vectors/local_timer_entry irq/irq_handler_entry irq/irq_handler_exit \
	irq/softirq_entry irq/softirq_exit ||
	ktap_diag "could not hold L1's events (text patches while the guests run)"
L2_QEMU_PLAIN=1 l2_start g1 /tests/record_guest.sh --ctl socket --data-dir /tmp/g1 --timeout 600
l2_start g2 /tests/record_guest.sh --ctl socket --data-dir /tmp/g2 --timeout 600
up=0
for g in g1 g2; do
	for ((i = 0; i < 300; i++)); do
		grep -q "vtg: ok 1 load" "$out/$g/console.log" 2> /dev/null && break
		sleep 1
	done
	grep -q "vtg: ok 1 load" "$out/$g/console.log" 2> /dev/null || up=1
done
ktap_result $up guests_up_with_vtrace_guest "$(tail -n 5 "$out"/g1/console.log "$out"/g2/console.log)"
pid1=$(cat "$out/g1/qemu.pid") pid2=$(cat "$out/g2/qemu.pid")

# one recording of both, the length of a command
t0=$SECONDS
$VT record -o /tmp/cap -- sleep 5 > "$out/record.out" 2>&1
rc=$?
ktap_diag "vtrace record took $((SECONDS - t0)) s"
sed 's/^/# /' "$out/record.out"
ktap_result $rc record_two_guests_exit_0
grep -q "found guest qemu-$pid1: QEMU pid $pid1, control port /run/vtrace-g1.sock, 2 data ports" "$out/record.out" &&
	grep -q "found guest g2: QEMU pid $pid2, control port /run/vtrace-g2.sock, 2 data ports" "$out/record.out"
ktap_result $? record_finds_both_guests
m=/tmp/cap/manifest
cat "$m" | sed 's/^/# /'
grep -qx "status complete" "$m" && [ "$(grep -c '^guest-status complete$' "$m")" -eq 2 ] &&
	grep -qx "guest-pid $pid1" "$m" && grep -qx "guest-pid $pid2" "$m" && [ "$(tail -1 "$m")" = end ]
ktap_result $? record_manifest_complete
# each vCPU's host thread: a thread of its own QEMU; by its KVM_RUN's vcpu fd
# on the plain command line, and named "CPU N/KVM" with debug-threads
vcpus_ok() {	# vcpus_ok NAME PID NAMED
	local lines r=0 id idx tid
	lines=$(sed -n "/^guest $1\$/,/^guest-status/p" "$m" | grep '^guest-vcpu')
	[ "$(echo "$lines" | grep -c .)" -eq 2 ] || return 1
	while read -r _ id _ idx _ tid; do
		[ -d "/proc/$2/task/$tid" ] || r=1
		if [ "$3" = named ]; then
			[ "$(cat "/proc/$2/task/$tid/comm")" = "CPU $idx/KVM" ] || r=1
		else
			[ "$idx" = -1 ] || r=1
		fi
		echo "$id"
	done <<< "$lines" | sort | tr '\n' ' ' | grep -qx "0 1 " || r=1
	return $r
}
vcpus_ok "qemu-$pid1" "$pid1" plain
ktap_result $? record_plain_guest_vcpu_threads "$(grep guest-vcpu "$m")"
vcpus_ok g2 "$pid2" named
ktap_result $? record_named_guest_vcpu_threads "$(grep guest-vcpu "$m")"
r=0
for g in "qemu-$pid1" g2; do
	[ -s "/tmp/cap/$g/cpu0" ] && [ -s "/tmp/cap/$g/cpu1" ] && [ -s "/tmp/cap/$g/ctl" ] || r=1
done
[ -s /tmp/cap/host.dat ] && [ -s /tmp/cap/tsc_offsets ] && [ -s /tmp/cap/tsc_khz ] || r=1
ktap_result $r record_capture_files "$(ls -lR /tmp/cap)"
grep -q "merge it with: vtrace-merge /tmp/cap" "$out/record.out"
ktap_result $? record_says_how_to_merge

# a second recording; g2's QEMU dies half-way.  The recorded command kills
# it 3 s into the recording and ends 2 s after it is gone, or at the latest
# 12 s after the kill (vtrace record looks at its guests once a second)
$VT record -o /tmp/cap-died -- sh -c "sleep 3; kill -9 $pid2;
	for i in \$(seq 100); do kill -0 $pid2 2> /dev/null || break; sleep 0.1; done; sleep 2" \
	> "$out/record-died.out" 2>&1
rc=$?
sed 's/^/# /' "$out/record-died.out"
m=/tmp/cap-died/manifest
sed 's/^/# /' "$m"
[ $rc -eq 1 ] && grep -q "^status partial: guest g2 died" "$m" &&
	grep -q "^guest-status died: " "$m" && [ "$(grep -c '^guest-status complete$' "$m")" -eq 1 ]
ktap_result $? record_guest_died_marked_other_kept
[ "$(sed -n "/^guest qemu-$pid1\$/,/^guest-status/p" "$m" | tail -1)" = "guest-status complete" ]
ktap_result $? record_died_other_guest_complete

kill "$pid1" 2> /dev/null
wait
l2_ktap g1 | grep -q '^ok 2 session_1' && l2_ktap g1 | grep -q '^ok 3 session_2'
ktap_result $? guest_sessions_both_ended "$(l2_ktap g1)"
cp -r /tmp/cap /tmp/cap-died "$out/"
rmmod vtrace_host
save_dmesg l1-dmesg
"$VTRACE_PROJ/testbed/splat-check.sh" "$out"/l1-dmesg.log "$out"/g1/console.log
ktap_result $? "no_kernel_splat"
ktap_finish
