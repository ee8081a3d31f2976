#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vtrace-l1: --timeout 900
# "vtrace record" as a user runs it: two guests at once, each with vtrace
# ports whose control port is a socket (agent mode): g1 a QEMU on a plain
# command line (no -name ...,debug-threads=on: its vCPU threads keep QEMU's
# name), g2 a libvirt domain (libvirt's embedded QEMU driver, virt-qemu-run:
# no daemon; its ports "vtrace qemu-args --libvirt --agent"'s channels,
# their files and socket opened by libvirt and passed to QEMU as fds).
# "vtrace record -o DIR -- sleep N", no guest named, finds both, records the
# host and them, and writes the capture with its manifest (each guest's pid,
# vCPU ids, host threads).  A second recording names them (--qemu PID
# --libvirt NAME) and loses g2 half-way (its QEMU killed by the recorded
# command): marked, g1 kept, exit 1.
# vtrace record without vtrace_host loaded is refused first.  The merges of
# the captures run on L0 (l0/record.sh).
#
# libvirt probes QEMU's capabilities the first time (55 s in L1 under TCG,
# 2 s with them known): they are kept in build/libvirt-caps-l1/KVER/ for the
# next run.
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

# g2: a libvirt domain of type kvm, as Debian's libvirt runs one (QEMU as
# libvirt-qemu, /dev/kvm the kvm group's as udev leaves it), its files in
# LV's tmpfs (a unix socket's path has at most 107 bytes).  QEMU sees L1's
# /dev: the private one libvirt makes lacks /dev/kvm in L1, whose root is
# this machine's over 9p.
LV=/tmp/lv uri="qemu:///embed?root=/tmp/lv/root" caps=$VTRACE_PROJ/build/libvirt-caps-l1/$KVER
mkdir -p "$LV/root/etc" "$LV/root/cache/qemu/capabilities" "$out/g2"
printf 'stdio_handler = "file"\nnamespaces = [ ]\n' > "$LV/root/etc/qemu.conf"
cp "$caps"/*.xml "$LV/root/cache/qemu/capabilities/" 2> /dev/null
install -d -o libvirt-qemu "$LV/g2"
chgrp kvm /dev/kvm && chmod 0660 /dev/kvm
cp "/boot/vmlinuz-$L2_KVER" "$LV/vmlinuz"
cp "$L2_INITRD" "$LV/initrd"
cat > "$out/g2/domain.xml" <<XML
<domain type='kvm'>
  <name>g2</name>
  <memory unit='MiB'>512</memory>
  <vcpu>2</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>$LV/vmlinuz</kernel>
    <initrd>$LV/initrd</initrd>
    <cmdline>$L2_CMDLINE vtrace_run=/tests/record_guest.sh vtrace_arg=</cmdline>
  </os>
  <cpu mode='host-passthrough'><feature policy='disable' name='xsave'/></cpu>
  <features><acpi/></features>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>destroy</on_reboot>
  <devices>
    <emulator>$(command -v qemu-system-x86_64)</emulator>
    <serial type='file'><source path='$LV/g2/console.log'/><target port='0'/></serial>
    <controller type='usb' model='none'/>
    <memballoon model='none'/>
    <controller type='virtio-serial' index='0' ports='4'/>
$($VT qemu-args --libvirt --agent --cpus 2 --out "$LV/g2")
  </devices>
</domain>
XML
t0=$SECONDS
timeout -k 5 600 virt-qemu-run --root "$LV/root" "$out/g2/domain.xml" > "$out/g2/virt-qemu-run.log" 2>&1 &
vqr=$!
for ((i = 0; i < 600; i++)); do
	[ -s "$LV/root/run/qemu/g2.pid" ] && break
	kill -0 $vqr 2> /dev/null || break
	sleep 0.5
done
pid2=
if [ -s "$LV/root/run/qemu/g2.pid" ]; then
	pid2=$(cat "$LV/root/run/qemu/g2.pid")
	ktap_diag "libvirt domain g2: QEMU started after $((SECONDS - t0)) s"
else
	sed 's/^/# virt-qemu-run: /' "$out/g2/virt-qemu-run.log"
fi
# g2's QEMU gone by itself (before the second recording kills it), ended by
# libvirt ("shutting down, reason=shutdown", its QEMU told to end: libvirt
# has QEMU turn a reset into a shutdown for on_reboot destroy; or
# "reason=destroyed"), its init not ended, no kernel report in its console:
# the bed's reset, said as l2-watch.sh says it of g1 (testbed/bed-glitch.sh),
# in the boot or after "L2 up"
g2_reset_check() {
	local c=$LV/g2/console.log
	[ -n "$pid2" ] && ! kill -0 "$pid2" 2> /dev/null || return
	grep -q "^l2 " "$out/g2/qemu.log" 2> /dev/null && return
	sleep 1
	grep -qE "shutting down, reason=(shutdown|destroyed)" "$LV/root/log/qemu/g2.log" 2> /dev/null &&
		! grep -aq "vtrace-testbed: L2 script exit" "$c" &&
		"$VTRACE_PROJ/testbed/splat-check.sh" "$c" > /dev/null || return
	if grep -aq "vtrace-testbed: L2 up" "$c"; then
		echo "l2 guest reset: g2: libvirt ended it after \"L2 up\", with no poweroff by its init and no kernel message"
	else
		echo "l2 boot watchdog: g2: libvirt ended it in the guest's boot at $(stat -c %s "$c") console bytes, no kernel report: a reset"
	fi | tee -a "$out/g2/qemu.log" | sed 's/^/# /'
}
mkdir -p "$caps" && cp "$LV/root/cache/qemu/capabilities"/*.xml "$caps/" 2> /dev/null
ln -sf "$LV/g2/console.log" "$out/g2/console.log"
up=0
for g in g1 g2; do
	for ((i = 0; i < 300; i++)); do
		grep -q "vtg: ok 1 load" "$out/$g/console.log" 2> /dev/null && break
		[ $g = g1 ] || { kill -0 $vqr && kill -0 "$pid2"; } 2> /dev/null || break
		sleep 1
	done
	grep -q "vtg: ok 1 load" "$out/$g/console.log" 2> /dev/null || up=1
done
[ $up -eq 0 ] || g2_reset_check
ktap_result $up guests_up_with_vtrace_guest "$(tail -n 5 "$out"/g1/console.log "$out"/g2/console.log)"
ktap_diag "guests up after $((SECONDS - t0)) s"
pid1=$(cat "$out/g1/qemu.pid")

# one recording of both, the length of a command
t0=$SECONDS
$VT record -o /tmp/cap -- sleep 5 > "$out/record.out" 2>&1
rc=$?
ktap_diag "vtrace record took $((SECONDS - t0)) s"
sed 's/^/# /' "$out/record.out"
g2_reset_check
ktap_result $rc record_two_guests_exit_0
grep -q "found guest qemu-$pid1: QEMU pid $pid1, control port /run/vtrace-g1.sock, 2 data ports" "$out/record.out" &&
	grep -q "found guest g2: QEMU pid $pid2, control port $LV/g2/ctl.sock, 2 data ports" "$out/record.out"
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

# a second recording, the guests named; g2's QEMU dies half-way.  The
# recorded command kills it 3 s into the recording and ends 2 s after it is
# gone, or at the latest 12 s after the kill (vtrace record looks at its
# guests once a second)
$VT record -o /tmp/cap-died --qemu "$pid1" --libvirt g2 --connect "$uri" -- sh -c "sleep 3; kill -9 $pid2;
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
# virt-qemu-run 9.0 waits for one more event after its domain ended
kill "$vqr" 2> /dev/null
wait
rm "$out/g2/console.log" && cp "$LV/g2/console.log" "$out/g2/"
cp -r "$LV/root/log/qemu" "$out/g2/libvirt-log" 2> /dev/null
l2_ktap g1 | grep -q '^ok 2 session_1' && l2_ktap g1 | grep -q '^ok 3 session_2' &&
	l2_ktap g2 | grep -q '^ok 2 session_1'
ktap_result $? guest_sessions_both_ended "$(l2_ktap g1; l2_ktap g2)"
cp -r /tmp/cap /tmp/cap-died "$out/"
rmmod vtrace_host
save_dmesg l1-dmesg
"$VTRACE_PROJ/testbed/splat-check.sh" "$out"/l1-dmesg.log "$out"/g1/console.log "$out"/g2/console.log
ktap_result $? "no_kernel_splat"
ktap_finish
