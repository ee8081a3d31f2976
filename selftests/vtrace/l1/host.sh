#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vtrace_host in L1: its records are the offsets KVM applied, VM by VM, across unload and overflow.
# vtrace-l1: --timeout 900 --no-kvm-pin
#
# Two VMs run at once: A (2 vCPUs) writes IA32_TSC on vCPU 1, B (4 vCPUs)
# writes IA32_TSC_ADJUST on vCPU 3, each by +3e9 cycles; A runs with a
# TSC rate of its own, so KVM also writes its multipliers.  Every value the
# module reports is compared with KVM's own debugfs (tsc-offset), with
# QEMU's pid, and with host TSC readings taken around the guest writes.
# Then, with both VMs still running: unload and reload (snapshot records),
# a recording started after them (a snapshot event per vCPU at the enable),
# a tiny capacity (drops counted, kept records never overwritten), and an
# unload/reload loop while a third VM is being created.
. "$VTRACE_PROJ/testbed/lib.sh"

D=/sys/kernel/debug/vtrace
KD=/sys/kernel/debug/kvm
KO=$VTRACE_HOST_KO
RDTSC=$VTRACE_PROJ/build/helpers/host_rdtsc
TSCSET=$VTRACE_PROJ/build/helpers/bench_tscset
VMS=$VTRACE_PROJ/build/helpers/host_vms
# the version line and the header of tsc_offsets (the first "# seq" define is v1's)
HEADER="$(sed -n 's/^#define VTRACE_OFFSETS_VERSION\t"\(.*\)"$/\1/p' "$VTRACE_PROJ/include/uapi/linux/vtrace.h")
$(sed -n 's/^\t"\(# seq host_tsc .*\)"$/\1/p' "$VTRACE_PROJ/include/uapi/linux/vtrace.h" | head -1)"

declare -A before after qpid vmname

# ---- helpers -------------------------------------------------------------

# records [VM]: data lines of tsc_offsets (of one VM if given)
records() {
	grep -v '^#' "$D/tsc_offsets" | awk -v vm="${1:-}" 'vm == "" || $4 == vm'
}

stat_of() {	# stat_of NAME: one value of the stats file
	awk -v k="$1" '$1 == k { print $2 }' "$D/stats"
}

# kvm_offsets VM: "vcpu_id offset" per vCPU, from KVM's debugfs
kvm_offsets() {
	local f id
	for f in "$KD/$1"/vcpu*/tsc-offset; do
		id=${f%/tsc-offset}
		echo "${id##*/vcpu} $(cat "$f")"
	done | sort -n
}

# last_offsets VM: "vcpu_id offset" per vCPU, from the module's last records
last_offsets() {
	records "$1" | awk '{ last[$5] = $8 } END { for (v in last) print v, last[v] }' | sort -n
}

# chain_breaks: records whose prev_offset is not the offset of the VM's
# vCPU's record before (snapshots start a chain)
chain_breaks() {
	records | awk '$11 != "snapshot" && (($4 " " $5) in last) && last[$4 " " $5] != $7 { print }
		       { last[$4 " " $5] = $8 }'
}

console_has() {	# console_has GUEST PATTERN
	grep -q "$2" "$VTRACE_OUT/$1/console.log" 2>/dev/null
}

# send_go GUEST: the line "go" to the guest's ctl port (QEMU's socket)
send_go() {
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"go\n")
s.close()' "$VTRACE_OUT/$1/ctl.sock"
}

# poll_guests: take host TSC readings around each guest's write: "before"
# once it says armed, then tell it to write; "after" once it says written.
poll_guests() {
	local g i
	for ((i = 0; i < 1500; i++)); do
		for g in a b; do
			if [ -z "${before[$g]:-}" ] && console_has "$g" "vtg: armed"; then
				before[$g]=$("$RDTSC")
				send_go "$g" || ktap_diag "$g: could not send go"
			fi
			if [ -n "${before[$g]:-}" ] && [ -z "${after[$g]:-}" ] &&
			   console_has "$g" "vtg: writ"; then
				after[$g]=$("$RDTSC")
			fi
		done
		[ -n "${after[a]:-}" ] && [ -n "${after[b]:-}" ] && return 0
		sleep 0.2
	done
	return 1
}

# find_vm GUEST: QEMU pid and KVM debugfs dir name of a running guest
find_vm() {
	qpid[$1]=$(cat "$VTRACE_OUT/$1/qemu.pid")
	vmname[$1]=$(cd "$KD" && ls -d "${qpid[$1]}"-* 2>/dev/null | head -1)
}

stop_guest() {	# stop_guest GUEST
	local p
	p=$(cat "$VTRACE_OUT/$1/qemu.pid" 2>/dev/null) && kill "$p" 2>/dev/null
}

# ---- tests ---------------------------------------------------------------

t_load() {
	local mode
	insmod "$KO" || return 1
	mode=$(stat -c %a "$D/tsc_offsets" "$D/vms" "$D/stats" "$D/tsc_khz" | sort -u)
	[ "$mode" = 444 ] || { ktap_diag "modes: $mode"; return 1; }
	[ "$(echo "$HEADER" | wc -l)" = 2 ] && [ "$(head -2 "$D/tsc_offsets")" = "$HEADER" ] ||
		{ ktap_diag "header: $(head -2 "$D/tsc_offsets")"; return 1; }
	[ "$(stat_of kept)" = 0 ] && [ "$(stat_of capacity)" = 65536 ] &&
		[ "$(cat "$D/tsc_khz")" -gt 0 ]
}

# t_creation GUEST NCPUS: each vCPU's first record is its creation
# (prev_offset 0, kind write), and vms counts NCPUS vCPUs
t_creation() {
	local vm=${vmname[$1]} n
	n=$(records "$vm" | awk '!seen[$5]++ && $7 == 0 && $11 == "write" { n++ } END { print n + 0 }')
	[ "$n" = "$2" ] || { ktap_diag "$1: $n creation records, want $2"; return 1; }
	n=$(awk -v vm="$vm" '$2 == vm { print $3 }' "$D/vms")
	[ "$n" = "$2" ] || { ktap_diag "$1: vms says $n vCPUs"; return 1; }
	records "$vm" | awk '{ print $6 }' | sort -un | tr '\n' ' ' | grep -qx "$(seq -s ' ' 0 $(($2 - 1))) "
}

# t_identity GUEST: pid column is QEMU's pid, vm column its KVM debugfs dir
t_identity() {
	local vm=${vmname[$1]} pids
	[ -n "$vm" ] && [ -d "$KD/$vm" ] || { ktap_diag "$1: no KVM dir for ${qpid[$1]}"; return 1; }
	pids=$(records "$vm" | awk '{ print $3 }' | sort -u)
	[ "$pids" = "${qpid[$1]}" ] || { ktap_diag "$1: pids $pids, qemu ${qpid[$1]}"; return 1; }
	# and nothing of that pid under another name
	[ -z "$(records | awk -v p="${qpid[$1]}" -v vm="$vm" '$3 == p && $4 != vm')" ]
}

# t_match_kvm GUEST: the last offset of every vCPU is KVM's tsc-offset
t_match_kvm() {
	local vm=${vmname[$1]} want got
	want=$(kvm_offsets "$vm")
	got=$(last_offsets "$vm")
	[ -n "$want" ] && [ "$want" = "$got" ] && return 0
	ktap_diag "$1: KVM says $(echo "$want" | tr '\n' ' ')module says $(echo "$got" | tr '\n' ' ')"
	return 1
}

# t_guest_write GUEST VCPU tsc|adjust: inside [before, after] only records of
# VCPU, the first the guest's write; the last record of VCPU is KVM's value.  TSC_ADJUST += 3e9 moves the offset
# by exactly 3e9; IA32_TSC = rdtsc + 3e9 by 3e9 minus the time from the
# guest's rdtsc to KVM handling the write (seconds, on a loaded TCG host)
t_guest_write() {
	local g=$1 vm=${vmname[$1]} lines l kvm lo=-1e18
	if console_has "$g" "vtg: write failed"; then
		return 4
	fi
	lines=$(records "$vm" | awk -v b="${before[$g]}" -v a="${after[$g]}" '$2 >= b && $2 <= a')
	ktap_diag "$g: before ${before[$g]} after ${after[$g]}:"
	[ -z "$lines" ] || while read -r l; do ktap_diag "  $l"; done <<< "$lines"
	# the window holds the write of vCPU $2 and nothing of other vCPUs; a
	# guest kernel that checks TSC_ADJUST (6.12 here) may write the TSC
	# back right after it: then that is recorded too, as KVM applied it
	echo "$lines" | awk -v id="$2" '$5 != id { bad = 1 } END { exit bad }' || return 1
	kvm=$(cat "$KD/$vm/vcpu$2/tsc-offset")
	[ "$(records "$vm" | awk -v id="$2" '$5 == id { o = $8 } END { print o }')" = "$kvm" ] ||
		return 1
	[ "$3" = adjust ] && lo=3e9
	echo "$lines" | head -1 | awk -v lo="$lo" \
		'$11 == "write" && $8 != $7 && $8 - $7 >= lo && $8 - $7 <= 3e9 { ok = 1 }
		 END { exit !ok }'
}

# t_multiplier GUEST NCPUS: QEMU sets each vCPU's TSC rate (KVM_SET_TSC_KHZ)
# at reset, and KVM rewrites the multiplier (to 1.0 here: no TSC scaling,
# and A's rate of host + 100 kHz is within KVM's tolerance).  Every vCPU
# has "multiplier" records, all after its creation write, with the vCPU's
# offset unchanged and the multiplier 1 << frac_bits.
t_multiplier() {
	local counts
	[ "$(stat_of multiplier_hook)" = 1 ] || { ktap_diag "no multiplier kprobe"; return 4; }
	counts=$(records "${vmname[$1]}" | awk '$11 == "multiplier" { n[$5]++ }
		END { for (v in n) printf "vcpu%s:%d ", v, n[v] }')
	ktap_diag "$1: multiplier records $counts"
	records "${vmname[$1]}" | awk -v ncpus="$2" '
		$11 == "write" { created[$5] = 1 }
		$11 == "multiplier" { n[$5]++
			if (!($5 in created) || $9 != 2 ^ $10 || $7 != $8 || $5 != $6) bad = 1 }
		END { exit bad || length(n) != ncpus }'
}

# t_separated: two VMs, each record belongs to exactly one of them, and
# vms has one line per VM with the right record count
t_separated() {
	local g n want restarted
	# each L2 boot the bed's watchdog ended (testbed/l2-watch.sh: killed
	# silent, or reset in the boot; both then start the guest again) left a
	# VM with records too (ci17: guest a's first boot reset, 3 VMs, and the
	# check refused it when it counted only the killed ones)
	restarted=$(grep -c '^l2 boot watchdog: .*(attempt [0-9]*)' "$VTRACE_OUT/l2-boot-watchdog.txt" 2>/dev/null)
	[ "$(records | awk -v a="${qpid[a]}" -v b="${qpid[b]}" '$3 == a || $3 == b { print $3, $4 }' |
		sort -u | wc -l)" = 2 ] || return 1
	[ "$(stat_of anomalies)" = 0 ] || return 1
	[ "$(awk -v a="${qpid[a]}" -v b="${qpid[b]}" '$1 == a || $1 == b' "$D/vms" | wc -l)" = 2 ] &&
		[ "$(grep -vc '^#' "$D/vms")" -le $((2 + ${restarted:-0})) ] || {
		ktap_diag "vms lists $(grep -vc '^#' "$D/vms") VMs: want a's and b's, and at most ${restarted:-0} more (boots the watchdog restarted)"
		return 1
	}
	for g in a b; do
		want=$(records "${vmname[$g]}" | wc -l)
		n=$(awk -v vm="${vmname[$g]}" '$2 == vm && $1 == p && $4 <= $5 { print $6 }' \
			p="${qpid[$g]}" "$D/vms")
		[ "$n" = "$want" ] || { ktap_diag "$g: vms says $n records, want $want"; return 1; }
	done
}

t_chain() {
	local breaks
	breaks=$(chain_breaks)
	[ -z "$breaks" ] || { ktap_diag "prev_offset breaks:" "$breaks"; return 1; }
	# seq runs 0.. without gaps
	records | awk '$1 != NR - 1 { exit 1 }'
}

t_read_only() {
	local f
	for f in tsc_offsets vms stats tsc_khz; do
		if (echo 1 > "$D/$f") 2>/dev/null; then
			ktap_diag "write to $f succeeded"
			return 1
		fi
	done
	[ "$(head -2 "$D/tsc_offsets")" = "$HEADER" ]
}

# t_snapshot: reloaded while A and B run, one snapshot per vCPU equal to KVM
t_snapshot() {
	local g
	[ "$(stat_of snapshots)" = 6 ] && [ "$(records | wc -l)" = 6 ] || return 1
	[ -z "$(records | awk '$11 != "snapshot" || $7 != $8')" ] || return 1
	for g in a b; do
		t_match_kvm "$g" || return 1
		awk -v vm="${vmname[$g]}" '$2 == vm && $7 == "snapshot" { ok = 1 } END { exit !ok }' \
			"$D/vms" || return 1
	done
}

# t_enable_snapshot: A and B run before "trace-cmd record -e vtrace_host"
# starts (on this stable-TSC host they wrote their offsets long before): the
# trace has exactly one event per vCPU, a snapshot with KVM's tsc-offset,
# since (the enable) before its host_tsc, the host's tsc_khz; the array
# (tsc_offsets) is left as it was.  The module waits for an RCU Tasks grace
# period after the enable before it reads KVM's values: the recording lasts
# 3 s, and the diagnostics say how long after the enable the snapshot came.
t_enable_snapshot() {
	local dat=$VTRACE_OUT/host-enable.dat rep g want got n
	n=$(records | wc -l)
	trace-cmd record -q -C x86-tsc -e vtrace_host -o "$dat" sleep 3 > /dev/null 2>&1 || return 1
	rep=$(trace-cmd report "$dat" 2> /dev/null | grep ' tsc_offset: ')
	echo "$rep" | while read -r l; do ktap_diag "$l"; done
	ktap_diag "$(grep '^enable_' "$D/stats" | tr '\n' ' ')"
	# what trace-cmd counted at its stop: events left unread in the kernel's buffer (ci38)
	ktap_diag "trace-cmd --stat: $(trace-cmd report --stat "$dat" 2> /dev/null |
		grep -E '^(CPU|entries|read events):' | tr '\n' ' ')"
	ktap_diag "$(echo "$rep" | awk -v khz="$khz" '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		if (f["host_tsc"] > last) last = f["host_tsc"]; since = f["since"] }
		END { if (since) printf "last snapshot %.1f ms after the enable", (last - since) / khz }')"
	[ "$(echo "$rep" | grep -c .)" = 6 ] && [ "$(echo "$rep" | grep -c 'kind=snapshot ')" = 6 ] ||
		return 1
	# written from process context (a work item): the latency flags (trace-cmd report -l:
	# CPU, irqs-off, need-resched, hardirq/softirq/NMI, preempt depth) say irqs on, no
	# interrupt context; reserved preemptible, the context word underflowed and every
	# snapshot said irqs off, NMI and hardirq, preempt depth 15
	lat=$(trace-cmd report -l "$dat" 2> /dev/null | grep ' tsc_offset: .*kind=snapshot ' |
		awk '{ f = $2; sub(/^[0-9]+/, "", f); sub(/[0-9]+:?$/, "", f); print f }')
	ktap_diag "snapshot events' latency flags: $(echo "$lat" | sort | uniq -c | tr '\n' ' ')"
	[ "$(echo "$lat" | grep -c '^\.[.nNX][.]')" = 6 ] || return 1
	[ -z "$(echo "$rep" | awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
				  if (f["since"] < 1 || f["since"] > f["host_tsc"] ||
				      f["prev_offset"] != f["offset"]) print }')" ] || return 1
	for g in a b; do
		want=$(kvm_offsets "${vmname[$g]}")
		got=$(echo "$rep" | sed -n "s/.* vm=${vmname[$g]} vcpu_id=\([0-9]*\) .* offset=\([-0-9]*\) .* kind=snapshot since=[0-9]* tsc_khz=$khz cpu=[0-9]* serial=[1-9][0-9]*\$/\1 \2/p" |
			sort -n)
		[ "$want" = "$got" ] || { ktap_diag "$g: KVM: $want" "$g: host.dat: $got"; return 1; }
	done
	[ "$(stat_of enable_snapshots)" = 6 ] && [ "$(stat_of enable_snapshots_missed)" = 0 ] &&
		[ "$(records | wc -l)" = "$n" ]
}

# t_pid_filter: a buffer that filters events by pid (set_event_pid, which
# "trace-cmd record -P PID" writes) with A's QEMU as PID, recording on: the
# filter would drop the snapshot worker's events, and it drops the writes
# of every vCPU thread outside it, so the module gives the enable up at once
# (enable_snapshots_pid_filtered and _missed +1 within 5 s, not after 60 s)
# and the buffer gets no tsc_offset event.  Then, for the diagnostics only,
# trace-cmd record -P itself and what vtrace-merge says of its file.
t_pid_filter() {
	local tr=/sys/kernel/tracing missed filtered i n rc=0
	[ -d $tr/instances ] || tr=/sys/kernel/debug/tracing
	missed=$(stat_of enable_snapshots_missed)
	filtered=$(stat_of enable_snapshots_pid_filtered)
	rmdir $tr/instances/vthpid 2> /dev/null
	mkdir $tr/instances/vthpid && echo "${qpid[a]}" > $tr/instances/vthpid/set_event_pid &&
		echo 1 > $tr/instances/vthpid/events/vtrace_host/tsc_offset/enable || return 1
	for ((i = 0; i < 50; i++)); do
		[ "$(stat_of enable_snapshots_pid_filtered)" != "$filtered" ] && break
		sleep 0.1
	done
	n=$(grep -c ' tsc_offset: ' $tr/instances/vthpid/trace)
	ktap_diag "set_event_pid ${qpid[a]}: given up after $((i / 10)).$((i % 10)) s, $n tsc_offset events; $(grep '^enable_' "$D/stats" | tr '\n' ' ')"
	echo 0 > $tr/instances/vthpid/events/vtrace_host/tsc_offset/enable
	rmdir $tr/instances/vthpid
	[ "$n" = 0 ] && [ "$(stat_of enable_snapshots_pid_filtered)" = $((filtered + 1)) ] &&
		[ "$(stat_of enable_snapshots_missed)" = $((missed + 1)) ] || rc=1
	t_pid_filter_trace_cmd
	return $rc
}

# t_pid_filter_trace_cmd: trace-cmd record -P with A's QEMU pid, 4 s, for
# the diagnostics (its exit, its file's tsc_offset events, vtrace-merge's word)
t_pid_filter_trace_cmd() {
	local dat=$VTRACE_OUT/host-pid.dat tc i
	(cd /tmp && exec trace-cmd record -C x86-tsc -e vtrace_host -P "${qpid[a]}" -o "$dat") \
		> "$VTRACE_OUT/host-pid.log" 2>&1 &
	tc=$!
	sleep 4
	kill -INT $tc
	for ((i = 0; i < 100; i++)); do
		kill -0 $tc 2> /dev/null || break
		sleep 0.1
	done
	kill -KILL $tc 2> /dev/null
	wait $tc
	ktap_diag "trace-cmd record -P ${qpid[a]}: exit $?, $(trace-cmd report "$dat" 2> /dev/null |
		grep -c ' tsc_offset: ') tsc_offset events; $(grep '^enable_' "$D/stats" | tr '\n' ' ')"
	tail -n 5 "$VTRACE_OUT/host-pid.log" | while read -r l; do ktap_diag "trace-cmd: $l"; done
	[ -s "$dat" ] || return 0
	"$VTRACE_PROJ/user/vtrace-merge" --host "$dat" --guest "a=$VTRACE_OUT/a" --stats \
		> /dev/null 2> "$VTRACE_OUT/host-pid.merge"
	ktap_diag "vtrace-merge (exit $?): $(head -c 900 "$VTRACE_OUT/host-pid.merge")"
}

# t_overflow: capacity 4 with 6 vCPUs running: 4 kept, 2 dropped; then a
# third VM's creation writes are dropped too and the 4 kept stay as they were
t_overflow() {
	local saved i
	rmmod vtrace_host && insmod "$KO" capacity=4 vm_share=4 || return 1
	[ "$(stat_of kept)" = 4 ] && [ "$(stat_of dropped)" = 2 ] || return 1
	# records only: the "# dropped N" line at the end counts on
	saved=$(grep -v '^#' "$D/tsc_offsets")
	[ "$(echo "$saved" | grep -c .)" = 4 ] || return 1
	grep -qx "# dropped 2" "$D/tsc_offsets" || return 1
	tail -1 "$D/tsc_offsets" | grep -qx "# end host_tsc=[0-9]* records=4 dropped=2" || return 1
	l2_start c /tests/host_idle.sh --cpus 2 --ports 0 --ctl none --timeout 120
	for ((i = 0; i < 1200; i++)); do
		[ "$(stat_of dropped)" -ge 4 ] && break
		sleep 0.1
	done
	stop_guest c
	l2_wait
	ktap_diag "after VM c: $(tr '\n' ' ' < "$D/stats")"
	[ "$(stat_of dropped)" -ge 4 ] && [ "$(stat_of kept)" = 4 ] &&
		[ "$(grep -v '^#' "$D/tsc_offsets")" = "$saved" ] &&
		grep -qx "# dropped $(stat_of dropped)" "$D/tsc_offsets"
}

# vm_line PID NAME: "kept dropped" of that VM in stats
vm_line() {
	awk -v p="$1" '$1 == "vm" && $2 == p { print $5, $7 }' "$D/stats"
}

serial_of() {	# serial_of PID: the serial of the (last) VM of that pid in the stats file
	awk -v p="$1" '$1 == "vm" && $2 == p { s = $9 } END { print s }' "$D/stats"
}

share_of() {	# share_of PID: the share of the (last) VM of that pid in the stats file
	awk -v p="$1" '$1 == "vm" && $2 == p { s = $11 } END { print s }' "$D/stats"
}

# t_fair: capacity 64, 16 per VM; VM f writes IA32_TSC 2,200 times, then VM
# g 5 times (plus creation), under trace-cmd record -e vtrace_host: f keeps
# 16 and the rest of f is dropped and said so in the trailer, while the
# trace event (in a tracefs instance) has every one of f's writes; g's
# history is complete (nothing of g dropped, every record kept,
# prev_offset chained) and host.dat has it; A's and B's snapshots stay.
# A and B are paused meanwhile (QEMU "stop"): f and g have no in-kernel
# APIC, so their vCPUs switch KVM's kvm_has_noapic_vcpu key on and off, and
# under TCG a vCPU of A or B running svm_vcpu_load() through that patch can
# trap on its int3 for good (Documentation/testbed.rst); paused, none runs
t_fair() {
	pause_guests stop paused || return 1
	t_fair_run
	local rc=$?
	pause_guests cont running || return 1
	return $rc
}

# pause_guests COMMAND STATUS: COMMAND (stop, cont) to A's and B's QEMU,
# then both report STATUS (paused, running)
pause_guests() {
	local g
	for g in a b; do
		l2_monitor "/run/vtrace-$g.mon" "$1" > /dev/null
		l2_monitor "/run/vtrace-$g.mon" "info status" | grep -q "VM status: $2" ||
			{ ktap_diag "$g: not $2 after $1"; return 1; }
	done
}

t_fair_run() {
	local f g fvm gvm n ev tr=/sys/kernel/tracing dat=$VTRACE_OUT/host-g.dat
	[ -d $tr/instances ] || tr=/sys/kernel/debug/tracing
	rmmod vtrace_host && insmod "$KO" capacity=64 vm_share=16 || return 1
	rmdir $tr/instances/vth 2> /dev/null
	n=$(stat_of enable_snapshots)
	mkdir $tr/instances/vth && echo 1 > $tr/instances/vth/events/vtrace_host/tsc_offset/enable ||
		return 1
	# the instance's snapshot (A's and B's six vCPUs) first, after the module's grace period
	for ((ev = 0; ev < 100; ev++)); do
		[ "$(stat_of enable_snapshots)" -ge $((n + 6)) ] && break
		sleep 0.1
	done
	"$TSCSET" 2000 > /dev/null & f=$!
	wait $f || return 1
	echo 0 > $tr/instances/vth/events/vtrace_host/tsc_offset/enable
	ev=$(grep -c "tsc_offset: .* pid=$f " $tr/instances/vth/trace)
	rmdir $tr/instances/vth
	trace-cmd record -q -e vtrace_host -o "$dat" "$TSCSET" 5 > /dev/null 2>&1 || return 1
	g=$(awk '$1 == "vm" { p = $2 } END { print p }' "$D/stats")
	ktap_diag "stats: $(tr '\n' ' ' < "$D/stats")" "trace events of f: $ev"
	grep -v '^# seq' "$D/tsc_offsets" | grep '^#' | while read -r l; do ktap_diag "$l"; done
	trace-cmd report "$dat" 2> /dev/null | grep -v '^cpus=' | while read -r l; do ktap_diag "$l"; done
	fvm=$(records | awk -v p=$f '$3 == p { print $4; exit }')
	gvm=$(records | awk -v p="$g" '$3 == p { print $4; exit }')
	[ "$(vm_line $f)" = "16 $(awk -v p=$f '$1 == p { print $8 }' "$D/vms")" ] || return 1
	[ "$(vm_line $f | cut -d' ' -f2)" -ge 2000 ] || return 1
	[ "$ev" = $((16 + $(vm_line $f | cut -d' ' -f2))) ] || return 1
	n=$(records "$gvm" | wc -l)
	[ "$n" -ge 6 ] && [ "$(vm_line "$g")" = "$n 0" ] || return 1
	# g's records equal its write events (a snapshot of the enable may include g)
	[ "$(records "$gvm" | awk '{ print $2, $7, $8 }')" = "$(trace-cmd report "$dat" 2> /dev/null |
		grep -v ' kind=snapshot ' | sed -n "s/.* host_tsc=\([0-9]*\) pid=$g .* prev_offset=\([-0-9]*\) offset=\([-0-9]*\) .*/\1 \2 \3/p")" ] ||
		return 1
	[ "$(records | awk '$11 == "snapshot"' | wc -l)" = 6 ] || return 1
	grep -qx "# vm_dropped $f $fvm $(vm_line $f | cut -d' ' -f2) $(serial_of $f)" "$D/tsc_offsets" &&
		! grep -q "^# vm_dropped $g " "$D/tsc_offsets" &&
		! grep -q "^# dropped" "$D/tsc_offsets" &&
		[ -z "$(chain_breaks)" ] &&
		tail -1 "$D/tsc_offsets" | grep -qx "# end host_tsc=[0-9]* records=$((16 + n + 6)) dropped=[0-9]*"
}

# t_fields: every record has 14 fields, a host CPU that exists and, but for
# the unknown VM ("?"), a serial; the serials of the vms file are its records'
t_fields() {
	local cpus
	cpus=$(nproc --all)
	records | awk -v n="$cpus" 'NF != 14 || $12 >= n || ($4 != "?" && $13 < 1) { print; bad = 1 }
		END { exit bad }' | head -5 | while read -r l; do ktap_diag "bad record: $l"; done
	[ "${PIPESTATUS[1]}" = 0 ] || return 1
	[ "$(records | awk '$4 != "?" { print $3, $4, $13 }' | sort -u)" = \
	  "$(awk 'NR > 1 && $6 > 0 { print $1, $2, $9 }' "$D/vms" | sort -u)" ]
}

# t_writer_threads GUEST: the tid of each write and multiplier record of
# the guest's VM is the thread of its vCPU: a thread of its QEMU named
# "CPU N/KVM" with N its vcpu_idx (QEMU writes a vCPU's offset from it)
t_writer_threads() {
	local p=${qpid[$1]} n=0 bad=0 seq idx tid comm
	while read -r seq idx tid; do
		comm=$(cat "/proc/$p/task/$tid/comm" 2>/dev/null)
		n=$((n + 1))
		[ "$comm" = "CPU $idx/KVM" ] && continue
		ktap_diag "$1: seq $seq of vcpu_idx $idx written by tid $tid (\"$comm\")"
		bad=1
	done < <(records | awk -v p="$p" '$3 == p && $11 != "snapshot" && $6 >= 0 { print $1, $6, $14 }')
	ktap_diag "$1: $n records, each written by its vCPU's thread: $([ $bad = 0 ] && echo yes || echo no)"
	[ $n -gt 0 ] && [ $bad = 0 ]
}

# t_remake: a process makes a VM, closes it and makes another, which has
# the same descriptor, so the same name "PID-FD": two serials, two lines of
# the vms file, each VM its own records (creation and one IA32_TSC write)
t_remake() {
	local out name n
	out=$("$VMS" remake) || return 1
	ktap_diag "$out"
	name=$(echo "$out" | awk '{ print $2 }' | sort -u)
	[ "$(echo "$out" | wc -l)" = 2 ] && [ "$(echo "$name" | wc -l)" = 1 ] ||
		{ ktap_diag "the two VMs do not share a name"; return 1; }
	records "$name" | while read -r l; do ktap_diag "$l"; done
	grep " $name " "$D/vms" | while read -r l; do ktap_diag "vms: $l"; done
	n=$(records "$name" | awk '{ print $13 }' | sort -u | wc -l)
	[ "$n" = 2 ] &&
		[ "$(awk -v v="$name" '$2 == v { print $9 }' "$D/vms" | sort -u | wc -l)" = 2 ] &&
		[ "$(records "$name" | awk '{ print $13 }' | sort | uniq -c | awk '$1 < 2' | wc -l)" = 0 ]
}

# share_level: the level of the shares the stats file's numbers give (the
# free records, capacity - kept, spread over the live VMs and the untracked
# bucket so that each can reach it; those holding more keep theirs), the
# same rule as vth_fair_level()
share_level() {
	awk '$1 == "capacity" { c = $2 } $1 == "kept" { k = $2 }
	     $1 == "vm" && $NF != "retired" { h[n++] = $5 }
	     $1 == "untracked" { h[n++] = $3 }
	     END {
		for (i = 1; i < n; i++)		# insertion sort: mawk has no asort
			for (j = i; j > 0 && h[j - 1] > h[j]; j--) { t = h[j]; h[j] = h[j - 1]; h[j - 1] = t }
		s = c - k
		for (i = 0; i < n; i++)
			s += h[i]
		while (n > 1 && h[n - 1] > int(s / n))
			s -= h[--n]
		print int(s / n)
	     }' "$D/stats"
}

# shares_fair: vm_share is the level the numbers give, each live VM's and
# the bucket's share is max(level, kept), and the shares of the live VMs
# and the records of the others add up to the capacity at most
shares_fair() {
	local level
	level=$(share_level)
	ktap_diag "level of the shares from the stats: $level, vm_share $(stat_of vm_share)," \
		"live_vms $(stat_of live_vms)"
	[ "$level" = "$(stat_of vm_share)" ] &&
		awk -v l="$level" '$1 == "capacity" { c = $2 }
		     $1 == "vm" && $NF == "retired" { sum += $5; next }
		     $1 == "vm" { sum += $11; if ($11 != ($5 > l ? $5 : l)) bad = 1 }
		     $1 == "untracked" { sum += $7; if ($7 != ($3 > l ? $3 : l)) bad = 1 }
		     END { exit bad || sum > c }' "$D/stats"
}

# t_churn: 300 VMs made and closed since the load (more than the module's
# table of 256), then a quiet VM (20 writes) next to one that writes
# IA32_TSC 3,300 times: the quiet VM has its own share and its history is
# whole, the loud one loses what is beyond its share, and says so; the
# shares are what is left of the array divided among the live VMs
t_churn() {
	local q l qpid lpid qvm lvm qn
	rmmod vtrace_host && insmod "$KO" capacity=4096 || return 1
	"$VMS" churn 300 || return 1
	"$VMS" hold 20 20 > "$VTRACE_OUT/quiet.out" & q=$!
	"$TSCSET" 3000 > /dev/null & l=$!
	wait $q || return 1
	wait $l || return 1
	qvm=$(awk '{ print $2 }' "$VTRACE_OUT/quiet.out")
	qpid=${qvm%-*}
	lpid=$l
	lvm=$(records | awk -v p=$lpid '$3 == p { print $4; exit }')
	qn=$(records "$qvm" | wc -l)
	ktap_diag "stats: $(grep -v '^vm ' "$D/stats" | tr '\n' ' ')" \
		"vms seen: $(grep -c '^vm ' "$D/stats") lines, $(grep -c ' retired$' "$D/stats") retired" \
		"quiet $qvm: $qn records, $(vm_line "$qpid") kept/dropped, serial $(serial_of "$qpid")" \
		"loud $lvm: $(vm_line "$lpid") kept/dropped, serial $(serial_of "$lpid")"
	grep '^#' "$D/tsc_offsets" | tail -n +3 | while read -r l; do ktap_diag "$l"; done
	[ "$qn" -ge 21 ] && [ "$(vm_line "$qpid")" = "$qn 0" ] &&
		[ "$(serial_of "$qpid")" -gt 256 ] &&
		[ "$(vm_line "$lpid" | cut -d' ' -f1)" = "$(share_of "$lpid")" ] &&
		[ "$(vm_line "$lpid" | cut -d' ' -f2)" -gt 0 ] && shares_fair &&
		grep -qx "# vm_dropped $lpid $lvm [0-9]* $(serial_of "$lpid")" "$D/tsc_offsets" &&
		! grep -q "^# vm_dropped $qpid " "$D/tsc_offsets" &&
		! grep -q "^# dropped\|^# untracked_dropped" "$D/tsc_offsets"
}

# wait_line FILE LINE: until FILE has LINE (300 s at most)
wait_line() {
	local i
	for ((i = 0; i < 3000; i++)); do
		grep -qx "$2" "$1" 2> /dev/null && return 0
		sleep 0.1
	done
	ktap_diag "no \"$2\" in $1 after 300 s"
	return 1
}

# t_shares_grow: capacity 2048; 8 idle VMs (one IA32_TSC write each) and a
# loud one next to A and B: 11 live VMs and the untracked bucket, so each
# share is 2048 / 12 = 170 and the loud VM, writing 1,500 times, keeps 170.
# The 8 idle VMs end: 3 live VMs, and the loud VM, writing 3,000 times
# more, keeps its share of what is left, which the stats' numbers give;
# the idle VMs keep their records, which vms and tsc_offsets still show
t_shares_grow() {
	local i pids=() idle loud k1 k2 bad=0 name go fin=/tmp/vth-loud.in out=$VTRACE_OUT/loud.out
	rmmod vtrace_host && insmod "$KO" capacity=2048 || return 1
	for ((i = 0; i < 8; i++)); do
		"$VMS" hold 1 600000 > "$VTRACE_OUT/idle$i.out" & pids+=($!)
	done
	for ((i = 0; i < 8; i++)); do	# each idle VM made (its first records) before the loud one
		wait_line "$VTRACE_OUT/idle$i.out" "vm [0-9]*-[0-9]*" || bad=1
	done
	rm -f "$fin" && mkfifo "$fin" || return 1
	"$VMS" steps 1500 3000 < "$fin" > "$out" & loud=$!
	exec {go}> "$fin"
	wait_line "$out" "wrote 1500" || bad=1
	name=$(awk '$1 == "vm" { print $2 }' "$out")
	k1=$(vm_line $loud | cut -d' ' -f1)
	ktap_diag "11 live: $(grep -v '^vm \|^enable\|^has_\|^multi\|^snapshots\|^anom' "$D/stats" |
		tr '\n' ' ')" "loud $name: $(vm_line $loud) kept/dropped, share $(share_of $loud)"
	[ $bad = 0 ] && [ "$(stat_of live_vms)" = 11 ] && [ "$(stat_of vm_share)" = 170 ] &&
		[ "$k1" = 170 ] && [ "$(share_of $loud)" = 170 ] && shares_fair || bad=1
	kill "${pids[@]}"
	wait "${pids[@]}" 2> /dev/null
	sleep 1.2	# past the interval between two sweeps a full share asks for
	echo go >&$go
	exec {go}>&-
	wait_line "$out" "wrote 3000" || bad=1
	k2=$(vm_line $loud | cut -d' ' -f1)
	ktap_diag "3 live: $(grep -v '^vm \|^enable\|^has_\|^multi\|^snapshots\|^anom' "$D/stats" |
		tr '\n' ' ')" "loud $name: $(vm_line $loud) kept/dropped, share $(share_of $loud)"
	grep '^vm ' "$D/stats" | while read -r l; do ktap_diag "$l"; done
	wait $loud || bad=1
	[ $bad = 0 ] && [ "$(stat_of live_vms)" = 3 ] && [ "$k2" = "$(share_of $loud)" ] &&
		[ "$k2" -gt "$k1" ] && shares_fair || return 1
	! grep -q "^# dropped" "$D/tsc_offsets" || return 1
	# each idle VM: retired, nothing dropped, its records (creation, write) all there
	for ((i = 0; i < 8; i++)); do
		idle=$(awk '{ print $2 }' "$VTRACE_OUT/idle$i.out")
		[ "$(records "$idle" | wc -l)" -ge 2 ] &&
			[ "$(grep "^vm ${idle%-*} $idle " "$D/stats" | awk '{ print $5, $7, $NF }')" = \
			  "$(records "$idle" | wc -l) 0 retired" ] &&
			[ "$(awk -v v="$idle" '$2 == v { print $6, $8 }' "$D/vms")" = \
			  "$(records "$idle" | wc -l) 0" ] ||
			{ ktap_diag "idle $idle: $(grep " $idle " "$D/stats")"; return 1; }
	done
}

# t_unload_loop: unload/reload 20 times while VM d is being created and
# boots, then check that KVM's offsets of d are what the last load recorded
t_unload_loop() {
	local i pid_d
	rmmod vtrace_host || return 1
	l2_start d /tests/host_idle.sh --cpus 2 --ports 0 --ctl none --timeout 400
	pid_d=$L2_PID
	for ((i = 0; i < 20; i++)); do
		insmod "$KO" && rmmod vtrace_host || { stop_guest d; l2_wait; return 1; }
	done
	insmod "$KO" || return 1
	# an RT guest on an RT host boots in over a minute on a loaded machine
	for ((i = 0; i < 600; i++)); do
		console_has d "vtg: booted" && break
		kill -0 "$pid_d" 2>/dev/null || break
		sleep 0.5
	done
	find_vm d
	vmname[d]=${vmname[d]:-none}
	t_match_kvm d
	local rc=$?
	stop_guest d
	l2_wait
	return $rc
}

# ---- main ----------------------------------------------------------------

ktap_header 25
modprobe kvm_amd
ktap_diag "kvm_amd tsc_scaling=$(cat /sys/module/kvm_amd/parameters/tsc_scaling)" \
	"kallsyms: $(grep -c ' kvm_vcpu_write_tsc_multiplier' /proc/kallsyms) kvm_vcpu_write_tsc_multiplier"

t_load
ktap_result $? "load_files_header"

khz=$(cat "$D/tsc_khz")
L2_CPU="host,xsave=off,tsc-frequency=$(((khz + 100) * 1000))" \
	l2_start a /tests/host_tsc.sh --cpus 2 --ports 0 --ctl socket --arg 1 --timeout 500 --monitor
pid_a=$L2_PID
l2_start b /tests/host_tsc.sh --cpus 4 --ports 0 --ctl socket --arg 3:adjust --timeout 500 --monitor
pid_b=$L2_PID
poll_guests || ktap_diag "guests did not write in time"
find_vm a
find_vm b
ktap_diag "A: ${vmname[a]} B: ${vmname[b]}; $(records | wc -l) records:"
records | sed 's/^/  /' | while read -r l; do ktap_diag "$l"; done
cat "$D/vms" | while read -r l; do ktap_diag "$l"; done

t_creation a 2
ktap_result $? "creation_records_2_vcpus"
t_creation b 4
ktap_result $? "creation_records_4_vcpus"
t_identity a && t_identity b
ktap_result $? "pid_and_vm_name_match_qemu_and_kvm"
t_writer_threads a && t_writer_threads b
ktap_result $? "writes_carry_the_vcpu_thread"
t_match_kvm a && t_match_kvm b
ktap_result $? "last_offsets_equal_kvm_tsc_offset"
t_guest_write a 1 tsc
ktap_result $? "guest_ia32_tsc_write_recorded"
t_guest_write b 3 adjust
rc=$?
if [ $rc -eq 4 ]; then
	ktap_skip "guest_tsc_adjust_write_recorded" "guest has no IA32_TSC_ADJUST"
else
	ktap_result $rc "guest_tsc_adjust_write_recorded"
fi
t_multiplier a 2 && t_multiplier b 4
rc=$?
if [ $rc -eq 4 ]; then
	ktap_skip "multiplier_writes_recorded" "kvm_vcpu_write_tsc_multiplier not probed"
else
	ktap_result $rc "multiplier_writes_recorded"
fi
t_separated
ktap_result $? "two_vms_kept_apart"
t_chain
ktap_result $? "offset_chain_and_seq_without_gaps"
t_read_only
ktap_result $? "read_only_files_refuse_writes"

rmmod vtrace_host && insmod "$KO"
ktap_result $? "unload_reload_with_vms_running"
t_snapshot
ktap_result $? "snapshot_of_running_vms_equals_kvm"
t_enable_snapshot
ktap_result $? "trace_enable_snapshot_per_vcpu_equals_kvm"
t_pid_filter
ktap_result $? "pid_filtered_recording_snapshot_given_up_and_counted"
t_overflow
ktap_result $? "capacity_overflow_counted_not_overwritten"
t_fair
ktap_result $? "flooding_vm_keeps_its_share_other_vm_complete"
t_fields
ktap_result $? "records_have_cpu_and_serial"
t_remake
ktap_result $? "vm_remade_on_same_fd_has_its_own_serial"
t_churn
ktap_result $? "after_300_vms_a_quiet_vm_keeps_its_share"
t_shares_grow
ktap_result $? "shares_grow_when_vms_go_away"

stop_guest a
stop_guest b
wait "$pid_a" "$pid_b" 2>/dev/null

t_unload_loop
ktap_result $? "unload_reload_loop_during_vm_start"
rmmod vtrace_host
ktap_result $? "final_unload"

save_dmesg l1-dmesg
"$VTRACE_PROJ/testbed/splat-check.sh" "$VTRACE_OUT"/l1-dmesg.log "$VTRACE_OUT"/*/console.log
ktap_result $? "no_kernel_splat"
ktap_finish
