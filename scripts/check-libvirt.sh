#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check's "libvirt" part: libvirt itself runs a guest with vtrace's ports
# and vtrace drives it by the domain's name.  libvirt's embedded QEMU driver
# (virt-qemu-run --root ROOT: no daemon) starts a domain of type 'qemu' (TCG:
# no KVM needed) whose devices are "vtrace qemu-args --libvirt --agent"'s
# channels; it boots the test bed's guest kernel and image (the L2's:
# testbed/build-l2.sh), which runs selftests/vtrace/l2/libvirt_agent.sh.
# "vtrace agent --libvirt NAME --connect qemu:///embed?root=ROOT" starts a
# session, the guest writes markers on each CPU, the agent stops the session,
# "vtrace record --libvirt NAME" records a second session (the host side a
# stand-in), the guest powers off, and vtrace-merge of what libvirt's channels collected
# must show every marker once and in order per CPU.  vtrace-merge finds the
# guest's QEMU by the domain's name (--guest g=DIR,libvirt=NAME): while it
# runs from libvirt's pid file, after it stopped from the pid "vtrace
# agent --libvirt" or "vtrace libvirt-pid" kept in DIR, else it says what
# to do.  KTAP; without libvirt's
# tools, every test is skipped with the reason.  The files of the last run:
# build/libvirt/.
#
#   scripts/check-libvirt.sh       KVER/L2_KVER: the guest kernel (default: the bed's)
set -u
cd "$(dirname "$0")/.."
proj=$PWD
VT=$proj/user/vtrace
name=vtrace-lv
cpus=2
marks=500
tests=(domain_started libvirt_pid_kept agent_hello_by_name agent_start guest_markers_written
       agent_stop record_by_libvirt_name merge_by_name_while_running domain_powered_off
       guest_script_passed merge_markers_in_order merge_nothing_lost merge_by_name_after_stop
       no_kernel_splat)
# the bed's KTAP helpers and guest command line (testbed/lib.sh), for this kernel
kver=${L2_KVER:-${KVER:-$(testbed/default-kver.sh 2> /dev/null)}}
KVER=$kver L2_KVER=$kver
. testbed/lib.sh

ktap_header ${#tests[@]}
result() {	# result RC NAME [DIAGNOSTIC-FILE...]: the files' last lines when it failed
	local rc=$1 t=$2
	shift 2
	[ "$rc" -eq 0 ] || [ $# -eq 0 ] || tail -n 15 "$@" 2> /dev/null | sed 's/^/# /'
	ktap_result "$rc" "$t"
}
finish() {	# finish [WHY THE REST DID NOT RUN]; ktap_finish counts the tests not run as failed
	local rc
	[ -z "$1" ] || ktap_diag "stopped: $1"
	ktap_finish
	rc=$?
	echo "libvirt: $ktap_pass passed, $((ktap_fail + ktap_plan - ktap_n)) failed, $ktap_skip skipped"
	exit $rc
}
skip_all() {
	for t in "${tests[@]}"; do
		ktap_skip "$t" "$*"
	done
	echo "libvirt: 0 passed, 0 failed, ${#tests[@]} skipped"
	exit 0
}

command -v virt-qemu-run > /dev/null ||
	skip_all "no virt-qemu-run (apt-get install libvirt-daemon-driver-qemu)"
command -v qemu-system-x86_64 > /dev/null ||
	skip_all "no qemu-system-x86_64 (apt-get install qemu-system-x86)"
[ -r "/boot/vmlinuz-$kver" ] || skip_all "cannot read the guest kernel /boot/vmlinuz-$kver"
ko=kmod/guest/vtrace_guest.ko
[ -f "$ko" ] && [ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$kver" ] ||
	skip_all "$ko is not built for $kver (make modules)"
[ -x "$VT" ] && [ -x user/vtrace-merge ] || skip_all "user tools not built (make)"
testbed/build-l2.sh "$kver" "$proj/$ko" > /dev/null 2>&1 ||
	skip_all "cannot build the guest image (testbed/build-l2.sh $kver)"

# ROOT: the embedded driver's folder; G: the host ends of the guest's ports.
# A unix socket path has at most 107 bytes: both live under /tmp.
T=$(mktemp -d /tmp/vtrace-libvirt.XXXXXX)
VTRACE_OUT=$T	# a failure shows the last lines of G's console (ktap_finish)
root=$T/root G=$T/g uri="qemu:///embed?root=$T/root"
vpid=
cleanup() {
	[ -n "$vpid" ] && kill "$vpid" 2> /dev/null && wait "$vpid" 2> /dev/null
	rm -rf build/libvirt
	mkdir -p build/libvirt
	cp -r "$G" "$T"/*.out "$T"/*.log "$T/$name.xml" "$root/etc/qemu.conf" build/libvirt/ \
		2> /dev/null
	cp -r "$root/log/qemu" build/libvirt/libvirt-log 2> /dev/null
	rm -rf "$T"
}
trap cleanup EXIT

# libvirt as configured by Debian, with two differences in ROOT/etc/qemu.conf:
# QEMU's files are written by QEMU itself (stdio_handler "file"), not
# through the virtlogd daemon (which rotates its files at 2 MiB), and the
# capabilities QEMU was probed for last time are reused (a fresh ROOT probes
# QEMU again: 4-5 s here).  QEMU runs as libvirt-qemu, as from libvirtd:
# G is that user's (what workflow.rst tells users to do), and libvirt's DAC
# driver gives it the kernel and image for the run (copies: the originals
# are left alone).
mkdir -p "$root/etc" "$root/cache/qemu/capabilities"
echo 'stdio_handler = "file"' > "$root/etc/qemu.conf"
cp build/libvirt-caps/*.xml "$root/cache/qemu/capabilities/" 2> /dev/null
chmod 755 "$T"
if id libvirt-qemu > /dev/null 2>&1; then
	install -d -o libvirt-qemu "$G"
else
	# a libvirt built with another default user: root
	mkdir "$G"
	printf 'user = "+0"\ngroup = "+0"\n' >> "$root/etc/qemu.conf"
fi
cp "/boot/vmlinuz-$kver" "$T/vmlinuz"
cp "$L2_INITRD" "$T/initrd"
{
	echo "<domain type='qemu'>"
	echo "  <name>$name</name>"
	echo "  <memory unit='MiB'>256</memory>"
	echo "  <vcpu>$cpus</vcpu>"
	echo "  <os>"
	echo "    <type arch='x86_64' machine='pc'>hvm</type>"
	echo "    <kernel>$T/vmlinuz</kernel>"
	echo "    <initrd>$T/initrd</initrd>"
	echo "    <cmdline>$L2_CMDLINE vtrace_run=/tests/libvirt_agent.sh vtrace_arg=$marks</cmdline>"
	echo "  </os>"
	echo "  <features><acpi/></features>"
	echo "  <on_poweroff>destroy</on_poweroff>"
	echo "  <on_reboot>destroy</on_reboot>"
	echo "  <on_crash>destroy</on_crash>"
	echo "  <devices>"
	echo "    <emulator>$(command -v qemu-system-x86_64)</emulator>"
	echo "    <serial type='file'><source path='$G/console.log'/><target port='0'/></serial>"
	echo "    <controller type='usb' model='none'/>"
	echo "    <memballoon model='none'/>"
	# the ports the guest uses (port 0, ctl, a data port per CPU), not 31
	echo "    <controller type='virtio-serial' index='0' ports='$((cpus + 2))'/>"
	"$VT" qemu-args --libvirt --agent --cpus $cpus --out "$G" | sed 's/^/    /'
	echo "  </devices>"
	echo "</domain>"
} > "$T/$name.xml"

# running: virt-qemu-run has not ended (kill -0 is true for a zombie not yet waited for)
running() {
	local st
	st=$(ps -o stat= -p "$vpid" 2> /dev/null)
	[ -n "$st" ] && [ "${st#Z}" = "$st" ]
}
# waitfor SECONDS COMMAND...: poll COMMAND every 0.2 s while the domain runs
waitfor() {
	local i
	for ((i = 0; i < $1 * 5; i++)); do
		"${@:2}" && return 0
		running || return 1
		sleep 0.2
	done
	return 1
}
console_has() { grep -qa "$1" "$G/console.log" 2> /dev/null; }
agent() {	# agent OUTFILE COMMAND...: vtrace agent on the domain, by name
	"$VT" agent --libvirt $name --connect "$uri" --out "$G" -t 20 "${@:2}" > "$T/$1" 2>&1
}

t0=$SECONDS
timeout -k 5 240 virt-qemu-run --root "$root" "$T/$name.xml" > "$T/virt-qemu-run.log" 2>&1 &
vpid=$!
pidfile=$root/run/qemu/$name.pid
waitfor 30 test -s "$pidfile"
mkdir -p build/libvirt-caps
cp "$root"/cache/qemu/capabilities/*.xml build/libvirt-caps/ 2> /dev/null
qpid=$(cat "$pidfile" 2> /dev/null)
[ -n "$qpid" ] && kill -0 "$qpid" 2> /dev/null
result $? domain_started "$T/virt-qemu-run.log" "$root/log/qemu/$name.log"
[ $ktap_fail -eq 0 ] || finish "the domain did not start"
echo "# virt-qemu-run: domain $name, pid file $qpid, after $((SECONDS - t0)) s"
# a file-mode user keeps the pid for the merge while the domain runs
"$VT" libvirt-pid $name --connect "$uri" --out "$T/kept" > "$T/kept.out" 2>&1
[ "$(cat "$T/kept.out")" = "$qpid" ] && [ "$(cat "$T/kept/qemu.pid")" = "$qpid" ]
result $? libvirt_pid_kept "$T/kept.out"
echo "# vtrace libvirt-pid: $(cat "$T/kept.out"), kept: $(cat "$T/kept/qemu.pid" 2> /dev/null)"

# the guest answers once vtrace_guest is loaded
waitfor 120 console_has "vtg: ok 1 load"
for i in 1 2 3 4 5; do
	agent hello.out hello && break
	sleep 1
done
# the pid libvirt wrote is QEMU's, and vtrace agent copied it for vtrace-merge
grep -q '^HELLO: guest speaks' "$T/hello.out" && [ "$(cat "$G/qemu.pid")" = "$qpid" ] &&
	[ "$(cat "/proc/$qpid/comm")" = qemu-system-x86 ]
result $? agent_hello_by_name "$T/hello.out" "$G/console.log"
[ $ktap_fail -eq 0 ] || finish "the guest did not answer"
echo "# guest up and answering after $((SECONDS - t0)) s; QEMU runs as $(ps -o user= -p "$qpid")"
agent start.out start
grep -q '^STARTED: session 1,' "$T/start.out"
result $? agent_start "$T/start.out"
waitfor 60 console_has "vtg: [a-z ]*ok 3 markers_written"
console_has "vtg: ok 3 markers_written"
result $? guest_markers_written "$G/console.log"
agent stop.out stop
sed 's/^/# /' "$T/stop.out"
# EOS: idle, and per CPU at least the markers sent and nothing lost
awk -v cpus=$cpus -v m=$marks '
	/^EOS: state idle/ { eos = 1 }
	eos && $1 ~ /^[0-9]+$/ && NF == 9 { n++; if ($4 < m || $6 + $7 + $8 + $9) bad++ }
	END { exit !(eos && n == cpus && !bad) }' "$T/stop.out"
result $? agent_stop "$T/stop.out"

# vtrace record drives the same domain by its name: its ports from the
# command line libvirt gave QEMU (JSON -device, the control socket passed as
# an fd), a second session into a capture folder of its own.  The host side
# is a stand-in (a TCG domain: no KVM, no vtrace_host; user/tests'
# fake-trace-cmd.sh).  The data ports' files in G get the second session's
# pages: put back as they were for the checks below.
cp -a "$G" "$T/g.before"
mkdir -p "$T/fake/sys/vtrace_host" "$T/fake/tracefs" "$T/fake/dbg"
VTRACE_TRACE_CMD=$proj/user/tests/fake-trace-cmd.sh FAKE_TC_LOG=$T/fake/tc.log \
	VTRACE_TRACEFS=$T/fake/tracefs VTRACE_SYS_MODULE=$T/fake/sys \
	VTRACE_HOST_DEBUGFS=$T/fake/dbg VTRACE_RECORD_NOT_ROOT_OK=1 \
	timeout 120 "$VT" record -o "$T/rec" --libvirt $name --connect "$uri" -- sleep 2 \
	> "$T/record.out" 2>&1
rc=$?
sed 's/^/# /' "$T/record.out"
[ $rc -eq 0 ] && grep -qx "guest-pid $qpid" "$T/rec/manifest" &&
	grep -qx "status complete" "$T/rec/manifest" && [ -s "$T/rec/$name/ctl" ] &&
	[ -e "$T/rec/$name/cpu$((cpus - 1))" ]
result $? record_by_libvirt_name "$T/record.out" "$T/rec/manifest"
for f in "$T/g.before"/cpu*; do
	cat "$f" > "$G/${f##*/}"
done

# vtrace-merge by the domain's name while it runs, on a copy of the capture
# without the pid agent kept: libvirt's own pid file.  The domain is TCG (no
# KVM, no offset history: offset=0), so the pid shows as perfetto's process
byname() {	# byname DIR OUT: vtrace-merge of DIR, its guest named by the domain
	user/vtrace-merge -q --guest "g=$1,libvirt=$name,connect=$uri,offset=0" --raw-tsc \
		--format perfetto > "$T/$2" 2>> "$T/byname.log"
}
mkdir "$T/byname"
cp "$G/ctl" "$G"/cpu* "$T/byname/"
test -s "$pidfile" && byname "$T/byname" byname-running.json && test -s "$pidfile" &&
	grep -qF "\"g (guest, QEMU pid $qpid)\"" "$T/byname-running.json"
result $? merge_by_name_while_running "$T/byname.log"
echo "# by name while it runs: $(grep -o '"g (guest, QEMU pid [0-9]*)"' "$T/byname-running.json")"
# the guest powers off once the host selects other events (l2/libvirt_agent.sh)
agent done.out events sched:sched_process_exit

# The guest powers off once the session is over: libvirt stops the domain
# (on_poweroff), logs why and removes its pid file.  virt-qemu-run 9.0 itself
# then waits for one more event before it ends (its event loop looks at its
# quit flag before each wait, not after): SIGTERM is that event.
for ((i = 0; i < 300; i++)); do
	[ -e "$pidfile" ] || break
	running || break
	sleep 0.2
done
stopped=$(sed -n 's/.*shutting down, reason=//p' "$root/log/qemu/$name.log" 2> /dev/null)
kill "$vpid" 2> /dev/null
wait "$vpid"
rc=$?
vpid=
[ "$stopped" = shutdown ] && [ ! -e "$pidfile" ] && [ $rc -eq 0 ]
result $? domain_powered_off "$root/log/qemu/$name.log"
# who made the host ends: libvirt opens the files and binds the socket itself
stat -c '# %U:%G %a %s %n' "$G" "$G"/*
echo "# domain stopped by libvirt (reason=${stopped:-none}) after $((SECONDS - t0)) s, virt-qemu-run exit $rc"
sed -n 's/\r$//; s/^vtg: /# guest: /p' "$G/console.log"
[ "$(grep -ac '^vtg: ok ' "$G/console.log")" -eq 5 ] && ! grep -aq '^vtg: not ok' "$G/console.log" &&
	console_has "vtrace-testbed: L2 script exit 0"
result $? guest_script_passed "$G/console.log"

# every marker of each CPU once and in order, on its CPU
user/vtrace-merge -q --guest "g=$G,offset=0" --raw-tsc > "$T/merged.out" 2> "$T/merge.log"
python3 - "$T/merged.out" $cpus $marks <<'EOF' > "$T/markers.out"
import re, sys
seqs = {}
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"\[0*(\d+)\].*vtg-mark cpu=(\d+) seq=(\d+)", line)
    if m:
        seqs.setdefault(int(m.group(2)), []).append((int(m.group(1)), int(m.group(3))))
cpus, n = int(sys.argv[2]), int(sys.argv[3])
bad = [c for c in range(cpus) if seqs.get(c) != [(c, i) for i in range(n)]]
print("markers per CPU in the merged stream: %s%s" % (
    {c: len(s) for c, s in sorted(seqs.items())},
    ", CPU %s not 0..%d once each and in order" % (bad, n - 1) if bad else ""))
sys.exit(1 if bad or len(seqs) != cpus else 0)
EOF
result $? merge_markers_in_order "$T/merge.log"
sed 's/^/# /' "$T/markers.out"
user/vtrace-merge -q --guest "g=$G,offset=0" --stats > "$T/stats.out" 2>> "$T/merge.log"
[ "$(awk '$1 == "g" { n++; if ($6 + $7 + $8) bad++ } END { print n + 0, bad + 0 }' \
	"$T/stats.out")" = "$cpus 0" ]
result $? merge_nothing_lost "$T/stats.out" "$T/merge.log"
sed 's/^/# /' "$T/stats.out"

# after the domain stopped: the pid agent kept in G, and for the copy without
# it, what to do
byname "$G" byname-kept.json && ! byname "$T/byname" byname-stopped.json &&
	grep -qF "\"g (guest, QEMU pid $qpid)\"" "$T/byname-kept.json" &&
	grep -qF "vtrace-merge: error: guest g: domain $name is not running (no $pidfile) and $T/byname has no qemu.pid: give pid=PID" "$T/byname.log"
result $? merge_by_name_after_stop "$T/byname.log"
echo "# by name after the stop, G: $(grep -o '"g (guest, QEMU pid [0-9]*)"' "$T/byname-kept.json")"
grep -F 'error:' "$T/byname.log" | sed 's/^/# /'

testbed/splat-check.sh "$G/console.log" > "$T/splat.out"
result $? no_kernel_splat "$T/splat.out"
echo "# $((SECONDS - t0)) s from virt-qemu-run to the merged markers"
finish ""
