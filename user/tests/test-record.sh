#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test-record.sh: "vtrace record" without a VM (fake-guest.py for the guests'
# control ports, fake-trace-cmd.sh for trace-cmd, fake /sys and debugfs
# folders), and vtrace-merge / vtrace dat taking a capture folder.  The real
# one, with QEMU and KVM, is the test bed's "record" suite.
here=$PWD
V=${VTRACE_BINDIR:-..}/vtrace
M=${VTRACE_BINDIR:-..}/vtrace-merge
T=$(mktemp -d /tmp/vtrace-test-record.XXXXXX)
trap 'for p in $(jobs -p); do kill "$p"; done 2> /dev/null; rm -rf "$T"' EXIT
echo "KTAP version 1"
. "$here/ktap.sh"

# the host: vtrace_host "loaded", a tracefs trace-cmd turns on, vtrace_host's files
mkdir -p "$T/sys/vtrace_host" "$T/tracefs" "$T/dbg" "$T/nosys"
echo 2596131 > "$T/dbg/tsc_khz"
printf '# vtrace_host tsc_offsets v1\n' > "$T/dbg/tsc_offsets"
export VTRACE_TRACE_CMD=$here/fake-trace-cmd.sh FAKE_TC_LOG=$T/tc.log VTRACE_TRACEFS=$T/tracefs
export VTRACE_SYS_MODULE=$T/sys VTRACE_HOST_DEBUGFS=$T/dbg VTRACE_RECORD_NOT_ROOT_OK=1

guest() {	# guest NAME [silent]: a fake guest on $T/NAME.sock, its data port files in $T/NAME
	mkdir -p "$T/$1"
	printf 'OLD-SESSION' > "$T/$1/cpu0"
	: > "$T/$1/cpu1"
	python3 "$here/fake-guest.py" "$T/$1.sock" "$T/$1.log" ${2:-} &
	echo $! > "$T/$1.pid"
	for i in $(seq 50); do
		[ -e "$T/$1.sock.ready" ] && break
		sleep 0.1
	done
}
rec() {	# rec ARGS...: vtrace record, output in $T/out, exit status in $rc
	timeout 60 "$V" record "$@" > "$T/out" 2>&1
	rc=$?
}

# argument errors: exit 2, what is wrong said
rec --qemu 1
[ $rc -eq 2 ] && grep -q -- "-o DIR is needed" "$T/out"
ok $? record_needs_output_dir "$(head -3 "$T/out")"
rec -o "$T/x" -s "$T/a.sock"
[ $rc -eq 2 ] && grep -q "one --out GDIR per --socket" "$T/out"
ok $? record_socket_needs_out "$(head -3 "$T/out")"
rec -o "$T/x" -b 12
[ $rc -eq 2 ] && grep -q "^vtrace record: -b 12: expected KB" "$T/out"
ok $? record_bad_buffer_size "$(head -3 "$T/out")"
rec -o "$T/x" --qemu abc
[ $rc -eq 2 ] && grep -q "^vtrace record: --qemu abc: expected a process id" "$T/out"
ok $? record_bad_pid "$(head -3 "$T/out")"

# the checks before anything is recorded
VTRACE_SYS_MODULE=$T/nosys rec -o "$T/x" -s "$T/a.sock" --out "$T/a"
[ $rc -eq 1 ] && grep -q "vtrace_host is not loaded.*modprobe vtrace_host" "$T/out" && [ ! -e "$T/x" ]
ok $? record_refuses_without_vtrace_host "$(cat "$T/out")"
VTRACE_TRACE_CMD=$T/no-trace-cmd rec -o "$T/x" -s "$T/a.sock" --out "$T/a"
[ $rc -eq 1 ] && grep -q "no-trace-cmd not found: install trace-cmd" "$T/out"
ok $? record_refuses_without_trace_cmd "$(cat "$T/out")"
mkdir -p "$T/full" && touch "$T/full/x"
guest g0
rec -o "$T/full" -s "$T/g0.sock" --out "$T/g0"
[ $rc -eq 1 ] && grep -q "exists and is not empty" "$T/out"
ok $? record_refuses_a_folder_not_empty "$(cat "$T/out")"
rec -o "$T/x" -s "$T/nothere.sock" --out "$T/g0"
[ $rc -eq 1 ] && grep -q "nothere.sock: No such file" "$T/out" && [ ! -e "$T/x/manifest" ]
ok $? record_refuses_a_socket_not_there "$(cat "$T/out")"
kill "$(cat "$T/g0.pid")" 2> /dev/null
wait 2> /dev/null

# a guest whose port answers nothing: no vtrace_guest loaded
guest gs silent
rec -o "$T/silent" -s "$T/gs.sock" --out "$T/gs"
[ $rc -eq 1 ] && grep -q "guest gs.*no vtrace_guest answering on its control port: load it in the guest (modprobe vtrace_guest)" "$T/out" &&
	[ ! -e "$T/silent/manifest" ] && [ ! -e "$FAKE_TC_LOG" ]
ok $? record_guest_without_vtrace_guest "$(cat "$T/out")"
wait 2> /dev/null

# a real QEMU, paused before its guest runs (so no vtrace_guest can answer),
# started as a kernel developer types it: no -name, no -pidfile, paths
# relative to its folder; found by pid, its socket found from its command line
if command -v qemu-system-x86_64 > /dev/null; then
	mkdir -p "$T/q/data"
	(cd "$T/q" && exec qemu-system-x86_64 -S -display none -nodefaults -machine pc -m 32 \
		-device virtio-serial-pci,id=vs \
		-chardev socket,path=q.sock,server=on,wait=off,id=c \
		-device virtserialport,chardev=c,name=vtrace.ctl \
		-chardev file,id=d0,path=data/cpu0 -device virtserialport,bus=vs.0,chardev=d0,name=vtrace.cpu0 \
		> "$T/q/qemu.log" 2>&1) &
	qpid=$!
	for i in $(seq 100); do
		[ -S "$T/q/q.sock" ] && break
		sleep 0.1
	done
	rec -o "$T/qcap" --qemu $qpid -- true
	[ $rc -eq 1 ] && grep -q "guest qemu-$qpid ($T/q/q.sock): failed: no vtrace_guest answering on its control port: load it in the guest (modprobe vtrace_guest)" "$T/out" &&
		[ ! -e "$T/qcap/manifest" ]
	ok $? record_plain_qemu_without_vtrace_guest "$(cat "$T/out" "$T/q/qemu.log")"
	kill $qpid
	wait $qpid 2> /dev/null
else
	skip record_plain_qemu_without_vtrace_guest "no qemu-system-x86_64"
fi

# a QEMU as libvirt starts it (-name guest=NAME; its data ports' files
# opened by libvirt and passed as fds: -add-fd, path=/dev/fdset/N; $HOME
# the domain's folder, ROOT/lib/qemu/domain-1-NAME for virt-qemu-run
# --root ROOT): found by pid, the files' paths from the domain's status XML
# in ROOT/run/qemu/ (what a real libvirt domain gives: the bed's record suite)
if command -v qemu-system-x86_64 > /dev/null; then
	R=$T/lvroot
	mkdir -p "$R/lib/qemu/domain-1-lvg" "$R/run/qemu" "$T/lvg"
	: > "$T/lvg/cpu0"
	: > "$T/lvg/cpu1"
	(cd "$T/lvg" && HOME=$R/lib/qemu/domain-1-lvg exec qemu-system-x86_64 \
		-name guest=lvg,debug-threads=on -S -display none -nodefaults -machine pc -m 32 \
		-add-fd set=1,fd=9,opaque=channel1-source -add-fd set=2,fd=10,opaque=channel2-source \
		-device virtio-serial-pci,id=vs \
		-chardev socket,path="$T/lvg.sock",server=on,wait=off,id=c \
		-device virtserialport,chardev=c,name=vtrace.ctl \
		-chardev file,id=d0,path=/dev/fdset/1,append=on \
		-device virtserialport,bus=vs.0,chardev=d0,name=vtrace.cpu0 \
		-chardev file,id=d1,path=/dev/fdset/2,append=on \
		-device virtserialport,bus=vs.0,chardev=d1,name=vtrace.cpu1 \
		9>> "$T/lvg/cpu0" 10>> "$T/lvg/cpu1" > "$T/lvg/qemu.log" 2>&1) &
	qpid=$!
	for i in $(seq 100); do
		[ -S "$T/lvg.sock" ] && break
		sleep 0.1
	done
	# its control port answered by a stand-in guest on the same path
	rm -f "$T/lvg.sock"
	guest lvg
	for k in 0 1; do
		echo "<channel type='file'><source path='$T/lvg/cpu$k'/><target type='virtio' name='vtrace.cpu$k'/></channel>"
	done > "$R/run/qemu/lvg.xml"
	rec -o "$T/lvcap" --qemu $qpid -- sh -c "printf LV0 >> $T/lvg/cpu0; printf LV1 >> $T/lvg/cpu1; sleep 1.2"
	wait "$(cat "$T/lvg.pid")"
	[ $rc -eq 0 ] && [ "$(cat "$T/lvcap/lvg/cpu0")" = LV0 ] && [ "$(cat "$T/lvcap/lvg/cpu1")" = LV1 ] &&
		grep -qx "guest-pid $qpid" "$T/lvcap/manifest"
	ok $? record_libvirt_qemu_by_pid "rc $rc; cpu0 $(cat "$T/lvcap/lvg/cpu0"); cpu1 $(cat "$T/lvcap/lvg/cpu1"); $(grep guest-pid "$T/lvcap/manifest"), pid $qpid"
	# without the status XML: said, with what to do
	rm "$R/run/qemu/lvg.xml"
	rec -o "$T/lvcap2" --qemu $qpid -- true
	[ $rc -eq 1 ] && grep -q "QEMU pid $qpid (libvirt qemu:///embed?root=$R): domain lvg: port vtrace.cpu0's file: $R/run/qemu/lvg.xml: " "$T/out" &&
		[ ! -e "$T/lvcap2/manifest" ]
	ok $? record_libvirt_qemu_without_status_xml "$(cat "$T/out")"
	kill $qpid
	wait $qpid 2> /dev/null
else
	skip record_libvirt_qemu_by_pid "no qemu-system-x86_64"
	skip record_libvirt_qemu_without_status_xml "no qemu-system-x86_64"
fi

# two guests for the length of a command that writes into their data ports
guest g1
guest g2
rec -o "$T/cap" -s "$T/g1.sock" --out "$T/g1" -s "$T/g2.sock" --out "$T/g2" -e "sched:*" \
	--host-events "irq:*,workqueue:*" -- sh -c "printf NEW0 >> $T/g1/cpu0; printf NEW1 >> $T/g1/cpu1; printf N2 >> $T/g2/cpu0; sleep 1.2"
wait
ok $rc record_two_guests_exit_0 "$(cat "$T/out")"
# the host recorded with x86-tsc, every event the merge reads, and the extra ones; stopped
tc="record -q -C x86-tsc -b 8192 -e vtrace_host -e sched:sched_switch -e sched:sched_wakeup -e kvm:kvm_entry -e kvm:kvm_exit -e irq_vectors:local_timer_entry -e irq:irq_handler_entry -e irq:irq_handler_exit -e irq:softirq_entry -e irq:softirq_exit -e timer:hrtimer_start -e timer:hrtimer_expire_entry -e irq:* -e workqueue:* -o $T/cap/host.dat"
[ "$(head -1 "$T/tc.log")" = "$tc" ] && [ "$(tail -1 "$T/tc.log")" = stopped ]
ok $? record_trace_cmd_command_line "$(cat "$T/tc.log")"
# each guest got HELLO, SET_EVENTS, START, then STATUS_REQs, STOP last
r=0
for g in g1 g2; do
	cmds=$(cut -d' ' -f1 "$T/$g.log" | tr '\n' ' ')
	[[ "$cmds" =~ ^1\ 18\ 16\ (20\ )*17\ $ ]] || r=1
done
ok $r record_guest_commands_in_order "$(cat "$T"/g1.log | tr '\n' '|')"
# the data ports' bytes of this recording only, not the session before it
[ "$(cat "$T/cap/g1/cpu0")" = NEW0 ] && [ "$(cat "$T/cap/g1/cpu1")" = NEW1 ] &&
	[ "$(cat "$T/cap/g2/cpu0")" = N2 ] && [ ! -s "$T/cap/g2/cpu1" ]
ok $? record_copies_this_recordings_bytes "$(cat "$T"/cap/g1/cpu0)"
# ctl: every byte the guest sent on the connection (HELLO, ACKs, STATUS, EOS)
[ "$(od -An -tx4 -N4 "$T/cap/g1/ctl" | tr -d ' ')" = 43525456 ] &&
	[ "$(stat -c %s "$T/cap/g1/ctl")" -ge 200 ]
ok $? record_keeps_ctl_stream "$(stat -c %s "$T/cap/g1/ctl") bytes"
[ "$(cat "$T/cap/tsc_khz")" = 2596131 ] && cmp -s "$T/dbg/tsc_offsets" "$T/cap/tsc_offsets"
ok $? record_copies_vtrace_host_files
m=$T/cap/manifest
[ "$(head -1 "$m")" = "vtrace-capture 1" ] && [ "$(tail -1 "$m")" = end ] &&
	grep -qx "status complete" "$m" && grep -qx "tsc-khz 2596131" "$m" &&
	grep -qx "guest-events sched:\*" "$m" && [ "$(grep -c "^guest-status complete$" "$m")" -eq 2 ] &&
	[ "$(grep -c "^guest-lost 7$" "$m")" -eq 2 ] && grep -qx "guest-bytes 8" "$m" &&
	grep -qx "offsets tsc_offsets" "$m" && [ ! -e "$m.tmp" ]
ok $? record_manifest "$(tr '\n' '|' < "$m")"
grep -q "merge it with: vtrace-merge $T/cap" "$T/out" &&
	grep -q "g1 0.0 MB (7 events lost" "$T/out"
ok $? record_summary_and_merge_command "$(cat "$T/out")"

# no command: until SIGINT (Ctrl-C), then stopped cleanly: guests, trace-cmd, manifest
guest g6
timeout 60 "$V" record -o "$T/int" -s "$T/g6.sock" --out "$T/g6" > "$T/out" 2>&1 &
rp=$!
for i in $(seq 100); do
	grep -q "Ctrl-C to stop" "$T/out" && break
	sleep 0.1
done
sleep 0.5
kill -INT $rp
wait $rp
rc=$?
wait
[ $rc -eq 0 ] && grep -qx "status complete" "$T/int/manifest" &&
	[ "$(tail -1 "$T/tc.log")" = stopped ] && [ "$(cut -d' ' -f1 "$T/g6.log" | tail -1)" = 17 ]
ok $? record_until_sigint "$(cat "$T/out")"

# a guest that dies during the recording: marked, the other kept, exit 1
rm -f "$FAKE_TC_LOG"
guest g3
guest g4
( sleep 1.5; kill "$(cat "$T/g4.pid")" ) &
rec -o "$T/died" -s "$T/g3.sock" --out "$T/g3" -s "$T/g4.sock" --out "$T/g4" -- sleep 3.5
wait
m=$T/died/manifest
[ $rc -eq 1 ] && grep -q "^status partial: guest g4 died" "$m" &&
	[ "$(sed -n '/^guest g3$/,/^guest g4$/p' "$m" | grep -c '^guest-status complete$')" -eq 1 ] &&
	grep -q "^guest-status died: QEMU closed its control port" "$m"
ok $? record_guest_died_marked_others_kept "$(tr '\n' '|' < "$m")"

# trace-cmd that cannot record: no capture
rm -rf "$T/tracefs"/*
guest g5
FAKE_TC_FAIL=1 rec -o "$T/tcfail" -s "$T/g5.sock" --out "$T/g5" -- sleep 1
wait
[ $rc -eq 1 ] && grep -q "trace-cmd record ended before it recorded" "$T/out" &&
	grep -q "no capture written" "$T/out" && [ ! -e "$T/tcfail/manifest" ]
ok $? record_trace_cmd_failure_no_capture "$(cat "$T/out")"

# a full disk while the guests' data is copied: no capture
mkdir -p "$T/small"
if mount -t tmpfs -o size=256k tmpfs "$T/small" 2> /dev/null; then
	guest g7
	rec -o "$T/small/cap" -s "$T/g7.sock" --out "$T/g7" -- \
		sh -c "head -c 1000000 /dev/zero >> $T/g7/cpu0"
	wait
	[ $rc -eq 1 ] && grep -q "copying $T/g7/cpu0 to $T/small/cap/g7/cpu0: No space left on device; no capture written" "$T/out" &&
		[ ! -e "$T/small/cap/manifest" ] && [ ! -e "$T/small/cap/manifest.tmp" ]
	ok $? record_disk_full_no_capture "$(cat "$T/out")"
	umount "$T/small"
else
	skip record_disk_full_no_capture "cannot mount a small tmpfs (not root?)"
fi

# vtrace-merge CAPTURE: the manifest's host trace, guests, offsets: the same
# output as the long command line (the real L2 fixture)
R=$here/fixtures/real-l2
C=$T/l2cap
mkdir -p "$C/l2"
cp "$R/host.dat" "$R/tsc_offsets" "$R/tsc_khz" "$C/"
cp "$R/cpu0" "$R/cpu1" "$R/ctl" "$C/l2/"
manifest() {	# manifest STATUS GUEST-STATUS [TID1]: the fixture's vCPU threads are 177 and 178
	printf 'vtrace-capture 1\nvtrace 0.1.0\nhost host.dat\noffsets tsc_offsets\nguest l2\nguest-dir l2\nguest-pid %s\nguest-vcpu 0 idx 0 tid 177\nguest-vcpu 1 idx 1 tid %s\nguest-status %s\nstatus %s\nend\n' \
		"$(cat "$R/qemu.pid")" "${3:-178}" "$2" "$1" > "$C/manifest"
}
manifest complete complete
"$M" "$C" > "$T/a.out" 2> "$T/a.err"
ra=$?
"$M" --host "$R/host.dat" --guest l2="$R" --offsets "$R/tsc_offsets" > "$T/b.out" 2> "$T/b.err"
[ $ra -eq 0 ] && cmp -s "$T/a.out" "$T/b.out" && cmp -s "$T/a.err" "$T/b.err" &&
	grep -q "verified$" "$T/a.err"
ok $? merge_capture_same_as_command_line "$(tail -2 "$T/a.err")"
"$M" "$C" --explain --worst 1 > "$T/a.out" 2> "$T/a.err"
ra=$?
"$M" --host "$R/host.dat" --guest l2="$R" --offsets "$R/tsc_offsets" --explain --worst 1 \
	> "$T/b.out" 2> "$T/b.err"
# the same, but for the offsets file's path
[ $ra -eq 0 ] && diff <(sed "s|$C/|R/|" "$T/a.out") <(sed "s|$R/|R/|" "$T/b.out") > /dev/null &&
	grep -q "^Late wake-ups" "$T/a.out"
ok $? merge_capture_explain "$(head -3 "$T/a.out")"
"$V" dat "$C" > "$T/d.out" 2>&1
[ $? -eq 0 ] && [ -s "$C/dat/l2.dat" ] && [ -s "$C/dat/host.dat" ]
ok $? dat_capture "$(cat "$T/d.out")"
# the manifest's vCPU threads, read while the VM ran, checked against the fit
manifest complete complete 999
"$M" "$C" > "$T/a.out" 2> "$T/a.err"
[ $? -eq 0 ] && [ "$(grep -c "manifest names" "$T/a.err")" -eq 1 ] &&
	grep -q "warning: self-check: guest l2 cpu 1: its events fit host tid 178, but the capture's manifest names tid 999" "$T/a.err"
ok $? merge_capture_manifest_thread_checked "$(cat "$T/a.err")"
manifest "partial: guest l2 died" "died: QEMU pid 131 ended during the recording"
"$M" "$C" > "$T/a.out" 2> "$T/a.err"
grep -q "warning: $C: guest l2 left out: died: QEMU pid 131 ended" "$T/a.err" &&
	! grep -q "^l2 " "$T/a.out"
ok $? merge_capture_leaves_out_a_dead_guest "$(head -3 "$T/a.err")"
"$M" "$C" --host "$R/host.dat" > "$T/a.out" 2> "$T/a.err"
[ $? -eq 2 ] && grep -q "names its host trace and guests itself" "$T/a.err"
ok $? merge_capture_with_host_is_a_usage_error "$(head -2 "$T/a.err")"
rm "$C/manifest"
"$M" "$C" > "$T/a.out" 2> "$T/a.err"
[ $? -eq 1 ] && grep -q "no manifest: not a capture of vtrace record, or its recording did not end" "$T/a.err"
ok $? merge_refuses_a_folder_without_manifest "$(cat "$T/a.err")"
head -n 5 "$T/cap/manifest" > "$C/manifest"
"$M" "$C" > "$T/a.out" 2> "$T/a.err"
[ $? -eq 1 ] && grep -q "cut short" "$T/a.err"
ok $? merge_refuses_a_manifest_cut_short "$(cat "$T/a.err")"
"$V" dat "$C" > "$T/d.out" 2>&1
[ $? -eq 1 ] && grep -q "cut short" "$T/d.out"
ok $? dat_refuses_a_manifest_cut_short "$(cat "$T/d.out")"
echo "1..$n"
