#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vtrace_guest stops and resources: a slow host cannot stretch a stop past its deadline (the rest counts as lost); a failed start arms nothing, a stop says what it could not turn off; maxcpus=64 costs what the ports need.
. "$VTRACE_PROJ/testbed/lib.sh"
. "$VTRACE_PROJ/selftests/vtrace/guest-lib.sh"

# l2_start_trickle NAME SCRIPT: 2 CPUs; vtrace.cpu0 is a QEMU server socket
# (on L1's /run: bind() fails on the 9p results folder) that
# guest_trickle_host.py reads slowly, vtrace.ctl and vtrace.cpu1 are files.
# No indirect descriptors: a 16-page buffer then takes 16 of the port's 128,
# so the virtqueue holds 512 KiB, not 8 MiB, and fills within the session.
l2_start_trickle() {
	local name=$1 script=$2 dir=$VTRACE_OUT/$1
	rm -rf "$dir" /run/vtrace-"$name"-*.sock
	mkdir -p "$dir"
	l2_exec 240 "$dir" -enable-kvm -cpu "${L2_CPU:-host,xsave=off}" \
		-smp 2 -m 512 -display none -no-reboot -monitor none \
		-serial "file:$dir/console.log" -pidfile "$dir/qemu.pid" \
		-kernel "/boot/vmlinuz-$L2_KVER" -initrd "$L2_INITRD" \
		-append "$L2_CMDLINE vtrace_run=$script" \
		-device virtio-serial-pci,id=vser0,max_ports=4,indirect_desc=off \
		-chardev "file,id=vtctl,path=$dir/ctl" \
		-device virtserialport,bus=vser0.0,chardev=vtctl,name=vtrace.ctl \
		-chardev "socket,id=vtc0,path=/run/vtrace-$name-cpu0.sock,server=on,wait=off" \
		-device virtserialport,bus=vser0.0,chardev=vtc0,name=vtrace.cpu0 \
		-chardev "file,id=vtc1,path=$dir/cpu1" \
		-device virtserialport,bus=vser0.0,chardev=vtc1,name=vtrace.cpu1
}

# l2_start_maxcpus NAME SCRIPT: -smp 2,maxcpus=64, files for vtrace.ctl,
# vtrace.cpu0, vtrace.cpu1 and vtrace.cpu63 (a CPU that never comes online)
l2_start_maxcpus() {
	local name=$1 script=$2 dir=$VTRACE_OUT/$1 k args=()
	rm -rf "$dir"
	mkdir -p "$dir"
	for k in ctl cpu0 cpu1 cpu63; do
		args+=(-chardev "file,id=vt$k,path=$dir/$k"
		       -device "virtserialport,bus=vser0.0,chardev=vt$k,name=vtrace.$k")
	done
	l2_exec 240 "$dir" -enable-kvm -cpu "${L2_CPU:-host,xsave=off}" \
		-smp 2,maxcpus=64 -m 512 -display none -no-reboot -monitor none \
		-serial "file:$dir/console.log" -pidfile "$dir/qemu.pid" \
		-kernel "/boot/vmlinuz-$L2_KVER" -initrd "$L2_INITRD" \
		-append "$L2_CMDLINE vtrace_run=$script" \
		-device virtio-serial-pci,id=vser0,max_ports=5 "${args[@]}"
}

# eos_agrees DIR: the EOS of session 1 holds the figures the guest's status
# showed after that stop ("vtg-status 1:"); session 2's (rmmod) counts every
# marker written ("vtg-gen 2: written=N") as sent or lost; the later EOS
# say what their stops could not turn off (flags)
eos_agrees() {
	python3 - "$1" "$VTRACE_PROJ/selftests/vtrace" <<'EOF2'
import re, sys
sys.path.insert(0, sys.argv[2])
from guest_check import STATUS, cpu_stats, parse_ctl
d = sys.argv[1]
msgs, _ = parse_ctl(open(d + "/ctl", "rb").read())
# EOS in order: the first load's sessions 1 and 2, then (with vtrace_failinj)
# the next loads': the session after the failed start, the stops whose
# tracing_on (1) and events/enable (2) could not be turned off, a clean stop
eos_list = [(STATUS.unpack_from(p, 0)[3], cpu_stats(p)) for t, q, p in msgs if t == 36]
eos = {i + 1: e[1] for i, e in enumerate(eos_list[:2])}
flags = [e[0] for e in eos_list]
skip = "# SKIP vtrace_failinj" in open(d + "/console.log", errors="replace").read()
want = [0, 0] if skip else [0, 0, 0, 1, 2, 0]
print("# EOS flags in order: %s, expected %s" % (flags, want))
cols = ("pages_sent", "bytes_sent", "events_sent", "fillers_sent", "pages_lost",
        "events_lost_port", "events_lost_ring", "port_errors")
status, gen = {}, {}
for line in open(d + "/console.log", errors="replace"):
    m = re.match(r"vtg-status 1: (\d+) +\S+ +\S+ +((?:\d+ *){8})$", line.rstrip("\r\n"))
    if m:
        status[int(m.group(1))] = dict(zip(cols, map(int, m.group(2).split())))
    m = re.match(r"vtg-gen (\d+): written=(\d+)", line)
    if m:
        gen[int(m.group(1))] = int(m.group(2))
bad = 0 if flags == want else 1
for s in (1, 2):
    if s not in eos:
        print("# no EOS for session %d" % s)
        bad += 1
for cpu in (0, 1):
    got = {k: eos.get(1, {}).get(cpu, {}).get(k) for k in cols}
    print("# session 1 cpu%d: EOS %s" % (cpu, got))
    if got != status.get(cpu):
        print("# session 1 cpu%d: status %s" % (cpu, status.get(cpu)))
        bad += 1
e = eos.get(2, {}).get(0, {})
total = e.get("events_sent", 0) + e.get("events_lost_port", 0) + e.get("events_lost_ring", 0)
print("# session 2 cpu0: EOS %s; written %s" % (e, gen.get(2)))
if total != gen.get(2) or not e.get("events_lost_ring"):
    bad += 1
sys.exit(1 if bad else 0)
EOF2
}

ktap_header 40
modprobe kvm_amd
name=gstop
dir=$VTRACE_OUT/$name
l2_start_trickle $name /tests/guest_stop.sh
python3 "$VTRACE_PROJ/selftests/vtrace/guest_trickle_host.py" "/run/vtrace-$name-cpu0.sock" \
	"$dir/cpu0" --seconds 300 > "$dir/trickle.out" 2>&1 &
reader=$!
l2_wait
ktap_result $? "stop_l2_runs"
wait $reader
cat "$dir/trickle.out"
l2_results $name stop
sed -n 's/\r$//; s/^vtg-\(perf\|gen [0-9]*\): /# \1: /p' "$dir/console.log"
out=$(eos_agrees "$dir" 2>&1)
ktap_result $? "stop_eos_equals_status_counts_every_marker_says_what_stayed_on"
echo "$out"

# resources sized by ports: 2 vCPUs of 64 possible
l2_start_maxcpus gmaxcpus /tests/guest_maxcpus.sh
l2_wait
ktap_result $? "maxcpus_l2_runs"
l2_results gmaxcpus maxcpus
sed -n 's/\r$//; s/^vtg-\(status\): /# \1: /p' "$VTRACE_OUT/gmaxcpus/console.log"
checker gmaxcpus maxcpus_host_side --markers 300 --cpus 0,1

save_dmesg l1-dmesg
"$VTRACE_PROJ/testbed/splat-check.sh" "$VTRACE_OUT"/*.log "$VTRACE_OUT"/*/console.log
ktap_result $? "no_kernel_splat"
ktap_finish
