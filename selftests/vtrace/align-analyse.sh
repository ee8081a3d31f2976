# SPDX-License-Identifier: GPL-2.0
# Alignment selftest, the checks of a capture (sourced by l0/align*.sh,
# which run_vm_tests.sh runs on this machine once the suite's L1 has ended;
# align-lib.sh made the capture inside L1, in the shared VTRACE_OUT).
#
# align_analyse NAME: merge NAME's capture with vtrace-merge and check every
# hypercall falls between its two markers (align_check.py), for each guest
# apart.  Results NAME and NAME-self-check: the checker's report (ordered
# %, slack, the start/end-sample comparison) and vtrace-merge's self-check
# summary go into the KTAP diagnostics; the self-check verifies every guest
# event against its vCPU's guest-mode windows (the host recorded
# sched_switch and kvm_entry/kvm_exit): it must say "0 outside" and
# "verified", with every guest CPU checked.  The case's settings come from
# NAME/case.env (align-lib.sh, align_case_env):
#
# ALIGN_HISTORY=events: vtrace-merge takes the history and the TSC rate from
# host.dat (no --offsets, no --tsc-khz).  Two more results:
# NAME-history-complete (host.dat holds a chained history of every vCPU of
# the guest, and lost no event on any CPU) and NAME-old-way-incomplete (the
# module's tsc_offsets, default capacity, read after the same capture: its
# trailer says the guest's VM lost records and vtrace-merge --offsets
# refuses it).  On a host with a stable TSC (align.sh) the module's file of
# the same capture is complete: ALIGN_OLD_WAY=file makes the last result
# NAME-file-way-too instead (vtrace-merge --offsets tsc_offsets of the same
# capture orders every sample too), followed by NAME-mispaired-refused with
# two guests or more.
#
# ALIGN_PLAIN=G: NAME-vcpu-threads, the self-check told every guest CPU's
# vCPU thread, and each is a thread of that guest's own QEMU (qemu-tids,
# read in L1 while it ran): guest gG's, whose QEMU ran without
# debug-threads=on, by its kvm_entry events ("not named CPU N/KVM"), the
# others' by their names "CPU N/KVM" (the other VM has threads of the same
# vCPU ids, so each guest CPU had two candidates).
#
# ALIGN_FULL_FIRST=1: NAME-full-before-recording, every guest's VM had lost
# records in the module's array before trace-cmd started (NAME/stats-before).
#
# ALIGN_LATENCY=G: ten results check what vtrace-merge --explain makes of
# guest gG's late wake-up phases (causes_check.py): NAME-cause-host-hog
# (lat_hog's wake-ups the hog delayed, named with its count and delays),
# NAME-cause-exit-io, NAME-cause-exit-cpuid and NAME-cause-exit-msr
# (lat_io's, lat_cpuid's and lat_msr's late wake-ups went to io, cpuid and
# msr exits), NAME-cause-guest-task (lat_prio's wake-ups the guest's
# higher-priority e2e_burst delayed, with their count and delays),
# NAME-cause-host-softirq (lat_sirq's late windows that overlap e2e_sirq's
# flood of softirq work on the vCPU's host CPU, its span in host TSC from
# hog.txt: the host softirqs' share of them and the wake-ups under
# host_softirq, against the control's) and NAME-cause-host-not-running
# (lat_idle's wake-ups while L0 stopped the vCPU's host CPU,
# testbed/l0-freeze.py, its answer in hog.txt: the stops found among the
# host cpu's silences, host-lat_idle.jsonl, each with a late wake-up in it
# held one with host_not_running for the stop; the host records its local
# timer interrupts), and three the guest timer's path (the host recorded
# its hrtimers, the guest its local timer interrupts):
# NAME-cause-host-hog-path (lat_hog's wake-ups e2e_hog delayed: the vCPU
# thread off its host cpu for e2e_hog's part after the timer fired: mostly
# before the vCPU entered guest mode, now and then in it), NAME-cause-host-timer (lat_hirq's
# wake-ups whose timer fired as one of the host's irqs-off sections ended,
# vtrace_irqoff.ko in L1: late mostly in the host timer segment; none in
# lat_hog) and NAME-cause-guest-irq (lat_girq's wake-ups the guest's own
# irqs-off sections delayed: late in the guest irq segment).  Each cause is
# judged by its own part of the
# wake-ups' delays, not by the cause a wake-up is counted under: on a
# loaded bed L0 also stops L1 on its own, and those stops, host_not_running
# too, take wake-ups the injected cause delayed as well.

ALIGN_MERGE=$VTRACE_PROJ/user/vtrace-merge
ALIGN_CHECK=$VTRACE_PROJ/selftests/vtrace/align_check.py

# align_analyse_plan NAME: how many results align_analyse NAME prints (1 when
# L1 left no case.env: the capture never started)
align_analyse_plan() {
	local n=2 ALIGN_GUESTS ALIGN_HISTORY ALIGN_FULL_FIRST ALIGN_OLD_WAY ALIGN_LATENCY ALIGN_COUNT
	local ALIGN_PLAIN
	. "$VTRACE_OUT/$1/case.env" 2> /dev/null || { echo 1; return; }
	if [ "$ALIGN_HISTORY" = events ]; then
		n=$((n + 2))
		[ -z "$ALIGN_FULL_FIRST" ] || n=$((n + 1))
		[ "$ALIGN_OLD_WAY" != file ] || [ "$ALIGN_GUESTS" -lt 2 ] || n=$((n + 1))
	fi
	[ -z "$ALIGN_LATENCY" ] || n=$((n + 10))
	[ -z "$ALIGN_PLAIN" ] || n=$((n + 1))
	echo $n
}

align_analyse() {
	local name=$1 dir=$VTRACE_OUT/$1 g args=() rc
	local ALIGN_GUESTS ALIGN_HISTORY ALIGN_FULL_FIRST ALIGN_OLD_WAY ALIGN_LATENCY ALIGN_COUNT
	local ALIGN_PLAIN
	. "$dir/case.env" 2> /dev/null || {
		ktap_result 1 "$name" "no $dir/case.env: L1 did not start the capture (its l1-script.out says why)"
		return
	}
	local count=$ALIGN_COUNT guests=$ALIGN_GUESTS
	[ -s "$dir/host.dat" ] || {
		ktap_result 1 "$name" "no capture in $dir (host.dat): L1's l1-script.out says why"
		ktap_result 1 "$name-self-check" "not run"
		[ -z "$ALIGN_PLAIN" ] || ktap_result 1 "$name-vcpu-threads" "not run"
		if [ "$ALIGN_HISTORY" = events ]; then
			ktap_result 1 "$name-history-complete" "not run"
			[ -z "$ALIGN_FULL_FIRST" ] || ktap_result 1 "$name-full-before-recording" "not run"
			ktap_result 1 "$name-$(align_last_name)" "not run"
			[ "$ALIGN_OLD_WAY" != file ] || [ "$guests" -lt 2 ] ||
				ktap_result 1 "$name-mispaired-refused" "not run"
		fi
		align_causes_not_run "$name" "not run"
		return
	}
	for ((g = 1; g <= guests; g++)); do
		args+=(--guest "g$g=$VTRACE_OUT/$name-g$g")
	done
	local hist=(--offsets "$dir/tsc_offsets" --tsc-khz "$(cat "$dir/khz")") events=kvm_hypercall,print
	local chk=(--offsets "$dir/tsc_offsets")
	if [ "$ALIGN_HISTORY" = events ]; then	# the history and the TSC rate in host.dat
		hist=()
		events=$events,tsc_offset
		chk=(--offset-events)
	fi
	"$ALIGN_MERGE" --host "$dir/host.dat" "${hist[@]}" \
		"${args[@]}" --format jsonl --event $events \
		> "$dir/merged.jsonl" 2> "$dir/merge.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		ktap_result 1 "$name" "vtrace-merge failed ($rc):" "$(head -5 "$dir/merge.err")"
		align_self_check "$name" "$dir/merge.err"
		[ -z "$ALIGN_PLAIN" ] || align_vcpu_threads "$name" "$guests" "$dir/merge.err"
		if [ "$ALIGN_HISTORY" = events ]; then
			ktap_result 1 "$name-history-complete" "not run"
			[ -z "$ALIGN_FULL_FIRST" ] || align_full_before "$name" "$guests"
			align_old_way "$name" "$dir" "$count" "$guests" "${args[@]}"
		fi
		align_causes "$name" "$dir" "${hist[@]}"
		return
	fi
	align_pid_args "$name" "$guests"
	python3 "$ALIGN_CHECK" "${chk[@]}" --samples "$count" "${ALIGN_PIDARGS[@]}" \
		--khz "$(cat "$dir/khz")" \
		--guests "$guests" "$dir/merged.jsonl" > "$dir/check.txt" 2>&1
	rc=$?
	sed 's/^/# /' "$dir/check.txt"
	ktap_result $rc "$name"
	align_self_check "$name" "$dir/merge.err"
	[ -z "$ALIGN_PLAIN" ] || align_vcpu_threads "$name" "$guests" "$dir/merge.err"
	if [ "$ALIGN_HISTORY" = events ]; then
		local lost
		lost=$(align_host_lost "$dir")
		ktap_diag "$name: events host.dat lost (vtrace-merge --stats, lost-page, all CPUs): ${lost:-unknown}"
		align_write_rate "$dir"
		grep -q '^history: ' "$dir/check.txt" && ! grep -q '^history: .*FAIL' "$dir/check.txt" &&
			[ "$lost" = 0 ]
		ktap_result $? "$name-history-complete"
		[ -z "$ALIGN_FULL_FIRST" ] || align_full_before "$name" "$guests"
		align_old_way "$name" "$dir" "$count" "$guests" "${args[@]}"
	fi
	align_causes "$name" "$dir" "${hist[@]}"
}

# align_causes_not_run NAME REASON: the cause results, failed
align_causes_not_run() {
	[ -n "${ALIGN_LATENCY:-}" ] || return 0
	ktap_result 1 "$1-cause-host-hog" "$2"
	ktap_result 1 "$1-cause-exit-io" "$2"
	ktap_result 1 "$1-cause-exit-cpuid" "$2"
	ktap_result 1 "$1-cause-exit-msr" "$2"
	ktap_result 1 "$1-cause-guest-task" "$2"
	ktap_result 1 "$1-cause-host-softirq" "$2"
	ktap_result 1 "$1-cause-host-not-running" "$2"
	ktap_result 1 "$1-cause-host-hog-path" "$2"
	ktap_result 1 "$1-cause-host-timer" "$2"
	ktap_result 1 "$1-cause-guest-irq" "$2"
}

# align_causes NAME DIR HISTORYARGS...: vtrace-merge --explain of guest
# gALIGN_LATENCY's timer tasks, checked by causes_check.py against what the
# host and the guest injected (hog.txt: e2e_hog's and e2e_sirq's own
# counts; the guest's console: e2e_lat's)
align_causes() {
	local name=$1 dir=$2 g t
	g=$name-g${ALIGN_LATENCY:-}
	shift 2
	[ -n "${ALIGN_LATENCY:-}" ] || return 0
	sed 's/^/# /' "$dir/hog.txt"
	grep -a 'vtg: # e2e_lat' "$VTRACE_OUT/$g/console.log" | tr -d '\r' | sed 's/^vtg: //'
	for t in lat_hog lat_io lat_cpuid lat_msr lat_prio lat_sirq lat_hirq lat_girq lat_idle; do
		"$ALIGN_MERGE" --host "$dir/host.dat" "$@" --guest "g$ALIGN_LATENCY=$VTRACE_OUT/$g" \
			--explain --task $t --worst 100000 --format jsonl > "$dir/explain-$t.jsonl" \
			2> "$dir/explain-$t.err" || {
			align_causes_not_run "$name" "vtrace-merge --explain --task $t failed: $(head -3 "$dir/explain-$t.err")"
			return
		}
	done
	align_idle_host "$dir"
	python3 "$VTRACE_PROJ/selftests/vtrace/causes_check.py" --hog "${ALIGN_HOG[*]}" \
		--hog-done "$dir/hog.txt" --exit io="$dir/explain-lat_io.jsonl" \
		--exit cpuid="$dir/explain-lat_cpuid.jsonl" --exit-count msr="$dir/explain-lat_msr.jsonl" \
		--guest-burst "5 40000 400000" --burst-done "$VTRACE_OUT/$g/console.log" \
		--burst "$dir/explain-lat_prio.jsonl" --sirq "$dir/explain-lat_sirq.jsonl" \
		--sirq-done "$dir/hog.txt" --khz "$(cat "$dir/khz")" \
		--idle "$dir/explain-lat_idle.jsonl" --idle-done "$dir/hog.txt" \
		--idle-host "$dir/host-lat_idle.jsonl" --hirq "$dir/explain-lat_hirq.jsonl" \
		--hirq-done "$dir/hog.txt" --girq "$dir/explain-lat_girq.jsonl" \
		--girq-done "$VTRACE_OUT/$g/console.log" \
		"$dir/explain-lat_hog.jsonl" \
		> "$dir/causes.txt" 2>&1
	sed 's/^/# /' "$dir/causes.txt"
	grep -q '^host-hog: ok' "$dir/causes.txt"
	ktap_result $? "$name-cause-host-hog"
	grep -q '^exit-io: ok' "$dir/causes.txt"
	ktap_result $? "$name-cause-exit-io"
	grep -q '^exit-cpuid: ok' "$dir/causes.txt"
	ktap_result $? "$name-cause-exit-cpuid"
	grep -q '^exit-msr: ok' "$dir/causes.txt"
	ktap_result $? "$name-cause-exit-msr"
	grep -q '^guest-burst: ok' "$dir/causes.txt"
	ktap_result $? "$name-cause-guest-task"
	grep -q '^host-softirq: ok' "$dir/causes.txt"
	ktap_result $? "$name-cause-host-softirq"
	if grep -q '^host-not-running: unplaced' "$dir/causes.txt"; then
		ktap_skip "$name-cause-host-not-running" "L0's stops fit several of the host cpu's silences (causes.txt)"
	else
		grep -q '^host-not-running: ok' "$dir/causes.txt"
		ktap_result $? "$name-cause-host-not-running"
	fi
	grep -q '^host-hog-path: ok' "$dir/causes.txt"
	ktap_result $? "$name-cause-host-hog-path"
	grep -q '^host-timer: ok' "$dir/causes.txt"
	ktap_result $? "$name-cause-host-timer"
	grep -q '^guest-irq: ok' "$dir/causes.txt"
	ktap_result $? "$name-cause-guest-irq"
}

# align_idle_host DIR: the host's events over lat_idle's late
# wake-ups (explain-lat_idle.jsonl), from 0.5 s before the first to 2.5 s
# after the last (L0's stops can outlast lat_idle on a loaded bed: run of
# 06:00, 2026-12-02), in DIR/host-lat_idle.jsonl: causes_check.py finds L0's
# stops among the silences of the vCPU's host cpu
align_idle_host() {
	local dir=$1 span
	span=$(python3 -c 'import json, sys
w = [json.loads(l) for l in open(sys.argv[1])]
w = [x for x in w if x["type"] == "late"]
if w:
    print("%d %d" % (min(x["expected_ns"] for x in w) - 500000000,
                     max(x["running_ns"] for x in w) + 2500000000))' "$dir/explain-lat_idle.jsonl")
	[ -n "$span" ] || { : > "$dir/host-lat_idle.jsonl"; return; }
	set -- $span
	"$ALIGN_MERGE" --host "$dir/host.dat" --format jsonl --from "$1" --to "$2" \
		> "$dir/host-lat_idle.jsonl" 2> /dev/null
}

# align_pid_args NAME GUESTS: ALIGN_PIDARGS, align_check.py's --pid gN=PID of
# each guest, and, from the VMs align-lib.sh's align_vms listed before
# trace-cmd started (NAME/vms-before) and once it recorded
# (NAME/vms-recording): --created-during gN for a guest whose last VM was in
# neither (its boot began or the bed started it again during the
# recording: the history starts with its creation records), --created-around
# gN for one whose last VM came between the two (either form holds). Only
# the events mode makes the lists (the other starts trace-cmd first).
align_pid_args() {
	local g pid dir=$VTRACE_OUT/$1
	ALIGN_PIDARGS=()
	for ((g = 1; g <= $2; g++)); do
		pid=$(cat "$VTRACE_OUT/$1-g$g/qemu.pid")
		ALIGN_PIDARGS+=(--pid "g$g=$pid")
		if [ -f "$dir/vms-before" ]; then
			grep -qx "g$g $pid" "$dir/vms-before" && continue
			if grep -qx "g$g $pid" "$dir/vms-recording"; then
				ALIGN_PIDARGS+=(--created-around "g$g")
			else
				ALIGN_PIDARGS+=(--created-during "g$g")
			fi
		fi
	done
}

# the last result's name in the events mode
align_last_name() {
	[ "${ALIGN_OLD_WAY:-refused}" = file ] && echo file-way-too || echo old-way-incomplete
}

# align_full_before NAME GUESTS: NAME-full-before-recording: every guest's VM
# had lost records in the module's array before trace-cmd started
align_full_before() {
	local name=$1 guests=$2 g pid rc=0
	for ((g = 1; g <= guests; g++)); do
		pid=$(cat "$VTRACE_OUT/$name-g$g/qemu.pid")
		[ "$(align_vm_dropped "$pid" "$VTRACE_OUT/$name/stats-before")" -gt 0 ] || rc=1
	done
	ktap_result $rc "$name-full-before-recording"
}

# align_host_lost DIR: the events host.dat lost, all CPUs (vtrace-merge --stats'
# lost-page column of the host's rows); prints nothing when --stats fails
align_host_lost() {
	"$ALIGN_MERGE" --host "$1/host.dat" --stats 2> /dev/null |
		awk '$1 == "host" { n += $6; c++ } END { if (c) print n + 0 }'
}

# align_write_rate DIR: the offset writes host.dat holds (the history lines of
# check.txt), over the recording's length (vtrace-merge --stats' time range)
align_write_rate() {
	local n secs
	n=$(sed -nE 's/^history: .*: ([0-9]+) records in the host trace.*/\1/p' "$1/check.txt" |
		awk '{ n += $1 } END { print n + 0 }')
	secs=$("$ALIGN_MERGE" --host "$1/host.dat" --stats 2> /dev/null |
		awk '$1 == "host" { split($9, r, "-"); if (lo == "" || r[1] < lo) lo = r[1]
				    if (r[2] > hi) hi = r[2] } END { printf "%.1f", hi - lo }')
	awk -v n="$n" -v s="$secs" 'BEGIN { if (s > 0) printf "# the guest VM'"'"'s offset writes in host.dat: %d over %.1f s of recording, %.0f a second\n", n, s, n / s }'
}

# align_old_way NAME DIR COUNT GUESTS GUESTARGS...: the module's own file,
# default capacity, read after the capture: its trailer says the VM lost
# records, vtrace-merge --offsets refuses it (ALIGN_OLD_WAY=file: see
# align_file_way)
align_old_way() {
	local name=$1 dir=$2 pid
	[ "${ALIGN_OLD_WAY:-refused}" = file ] && { align_file_way "$@"; return; }
	shift 4
	pid=$(cat "$VTRACE_OUT/$name-g1/qemu.pid")
	grep -E '^(kept|dropped|capacity|vm_share) |^vm '"$pid " "$dir/stats" | sed 's/^/# tsc_offsets: /'
	grep -E '^# (end|vm_dropped|dropped) ' "$dir/tsc_offsets" | sed 's/^/# tsc_offsets: /'
	"$ALIGN_MERGE" --host "$dir/host.dat" --offsets "$dir/tsc_offsets" \
		--tsc-khz "$(cat "$dir/khz")" "$@" --format jsonl --event kvm_hypercall,print \
		> /dev/null 2> "$dir/merge-old.err"
	local rc=$?
	grep 'error: ' "$dir/merge-old.err" | head -1 | sed 's/^/# old way: /'
	[ $rc -eq 1 ] && grep -q "^# vm_dropped $pid " "$dir/tsc_offsets" &&
		grep -q "error: offset history of guest g1 cpu [0-9]* ends at host TSC [0-9]* (vtrace_host dropped the records after it)" "$dir/merge-old.err"
	ktap_result $? "$name-old-way-incomplete"
}

# align_file_way NAME DIR COUNT GUESTS GUESTARGS...: a stable TSC: the module's
# own file of the same capture is complete, and vtrace-merge --offsets orders
# every sample with it too
align_file_way() {
	local name=$1 dir=$2 count=$3 guests=$4 rc
	shift 4
	align_pid_args "$name" "$guests"
	"$ALIGN_MERGE" --host "$dir/host.dat" --offsets "$dir/tsc_offsets" \
		--tsc-khz "$(cat "$dir/khz")" "$@" --format jsonl --event kvm_hypercall,print \
		> "$dir/merged-file.jsonl" 2> "$dir/merge-file.err" &&
		python3 "$ALIGN_CHECK" --offsets "$dir/tsc_offsets" --samples "$count" \
			"${ALIGN_PIDARGS[@]}" --khz "$(cat "$dir/khz")" --guests "$guests" \
			"$dir/merged-file.jsonl" > "$dir/check-file.txt" 2>&1
	rc=$?
	grep -h 'error: \| ordered ' "$dir/merge-file.err" "$dir/check-file.txt" 2>/dev/null |
		grep -v 'start/end' | sed 's/^/# file way: /'
	ktap_result $rc "$name-file-way-too"
	[ "$guests" -lt 2 ] || align_mispaired "$name" "$dir"
}

# align_refused ERR PATTERN MERGE-ARGS...: vtrace-merge exits 1 and its
# standard error (kept in ERR) has a line matching PATTERN
align_refused() {
	local err=$1 pat=$2
	shift 2
	"$ALIGN_MERGE" "$@" > /dev/null 2> "$err"
	[ $? -eq 1 ] && grep -q "$pat" "$err"
}

# align_mispaired NAME DIR: the same capture paired wrongly on purpose, as a
# careless user could, is refused (exit 1) and says why: g1's dump with g2's
# QEMU pid (another VM), the offset history cut right before g1's mid-trace
# TSC write (a copy taken too early), and every offset 1 ms off (host times
# shifted); one result, each case's verdict as a diagnostic
align_mispaired() {
	local name=$1 dir=$2 g1=$VTRACE_OUT/$1-g1 g2=$VTRACE_OUT/$1-g2 khz bad=0
	khz=$(cat "$dir/khz")
	local base=(--host "$dir/host.dat" --tsc-khz "$khz" --event kvm_hypercall,print --format jsonl)
	python3 - "$dir/tsc_offsets" "$(cat "$g1/qemu.pid")" "$khz" "$dir" <<'PY'
import sys
path, pid, khz, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
lines = open(path).read().splitlines()
writes = [int(l.split()[0]) for l in lines
          if not l.startswith("#") and l.split()[2] == pid and l.split()[10] == "write"]
with open(out + "/tsc_offsets-cut", "w") as cut:
    for l in lines:
        if not l.startswith("#") and int(l.split()[0]) == max(writes):
            break
        cut.write(l + "\n")
with open(out + "/tsc_offsets-1ms", "w") as shifted:
    for l in lines:
        if not l.startswith("#"):
            f = l.split()
            f[6], f[7] = str(int(f[6]) + khz), str(int(f[7]) + khz)
            l = " ".join(f)
        shifted.write(l + "\n")
PY
	local failed='self-check: [0-9]* guest events checked, [1-9][0-9]* outside .*: FAILED$'
	# another VM's offsets: its self-check fails, or, when that VM was made
	# after g1's (the bed restarted g2's boot: ci12), g1's events map past
	# the end of its history
	align_refused "$dir/mis-vm.err" "$failed\|error: offset history of guest g1 cpu [01] ends at host TSC [0-9]* .* is later" \
		"${base[@]}" --offsets "$dir/tsc_offsets" \
		--guest "g1=$g1,pid=$(cat "$g2/qemu.pid")" || bad=1
	align_refused "$dir/mis-cut.err" \
		'error: offset history of guest g1 cpu [01] ends at host TSC [0-9]* (its last record: the copy has no "# end" line, it may have been cut)' \
		"${base[@]}" --offsets "$dir/tsc_offsets-cut" --guest "g1=$g1" --guest "g2=$g2" || bad=1
	align_refused "$dir/mis-1ms.err" "$failed" "${base[@]}" --offsets "$dir/tsc_offsets-1ms" \
		--guest "g1=$g1" --guest "g2=$g2" || bad=1
	grep -h 'self-check: [0-9]* guest events\|error: offset history' "$dir"/mis-{vm,cut,1ms}.err |
		cut -c1-200 | sed 's/^/# mis-paired: /'
	ktap_result $bad "$name-mispaired-refused"
}

# align_vcpu_threads NAME GUESTS MERGE_ERR: the self-check's line of every guest
# CPU names a thread of that guest's QEMU (NAME-gG/qemu-tids), told by its
# kvm_entry events for guest ALIGN_PLAIN, by its name for the others
align_vcpu_threads() {
	local name=$1 guests=$2 err=$3 g c line tid how rc=0
	for ((g = 1; g <= guests; g++)); do
		how='"CPU [0-9]+/KVM"'
		[ "$g" != "$ALIGN_PLAIN" ] || how="\(not named CPU N/KVM: its kvm_entry events' vcpu_id [0-9]+\)"
		for c in 0 1; do
			line=$(grep -E "^vtrace-merge: self-check: guest g$g cpu $c: .* of host tid [0-9]+ " "$err")
			tid=$(sed -nE 's/.* of host tid ([0-9]+) .*/\1/p' <<< "$line")
			if [ -z "$tid" ] || ! grep -qE " of host tid $tid $how" <<< "$line" ||
			   ! grep -qx "$tid" "$VTRACE_OUT/$name-g$g/qemu-tids" 2>/dev/null; then
				ktap_diag "$name: guest g$g cpu $c: thread ${tid:-none} is not told as expected ($how), or not of g$g's QEMU (threads: $(tr '\n' ' ' < "$VTRACE_OUT/$name-g$g/qemu-tids" 2>/dev/null | head -c 300))"
				rc=1
			else
				ktap_diag "$name: guest g$g cpu $c: host tid $tid, a thread of g$g's QEMU"
			fi
		done
	done
	ktap_result $rc "$name-vcpu-threads"
}

# align_self_check NAME MERGE_ERR: vtrace-merge's self-check said 0 outside,
# every CPU checked, and proved the time of every event but at most one in
# a thousand.  Those few are events of an unstable TSC's host (align_unstable)
# read while KVM had set the vCPU's offset back: their guest TSC maps into
# two offset intervals, and when both host times fall in the vCPU's
# guest-mode windows no record tells them apart.  vtrace-merge says so
# (verified except those N events) and marks them "time ambiguous"; 1 of
# 4000 in a bed run of 2026-12-01 22:31 (a loaded machine), none in ci11.
align_self_check() {
	local name=$1 err=$2 n amb
	grep 'self-check: ' "$err" | sed 's/^/# /'
	n=$(sed -nE 's/^vtrace-merge: self-check: ([0-9]+) guest events checked, 0 outside .*: verified( except those [0-9]+ events)?$/\1/p' "$err")
	amb=$(sed -nE 's/^vtrace-merge: self-check: .*: verified except those ([0-9]+) events$/\1/p' "$err")
	[ -z "$amb" ] || ktap_diag "$name: $amb of ${n:-?} events with an ambiguous time (allowed: 1 in 1000)"
	[ "${n:-0}" -gt 0 ] && ! grep -q 'self-check: .*unverified' "$err" &&
		[ $((${amb:-0} * 1000)) -le "$n" ]
	ktap_result $? "$name-self-check"
}
