# SPDX-License-Identifier: GPL-2.0
# Alignment selftest, host side (sourced by l1/align*.sh inside L1).
#
# align_case NAME COUNT TSCWRITE...: run one guest per TSCWRITE argument, all at
# once, each emitting COUNT numbered marker pairs per vCPU around a
# hypercall (TSCWRITE 1: that guest adds 3e9 cycles to its vCPU 1's TSC
# half-way through, 0: its offsets never change); record
# the host's kvm_hypercall events with trace-cmd (-C x86-tsc), merge with
# vtrace-merge, and check every hypercall falls between its two markers.
# Prints two KTAP results, NAME and NAME-self-check; the checker's report
# (ordered %, slack, the start/end-sample comparison) and vtrace-merge's
# self-check summary go into the KTAP diagnostics.  The host also records
# sched_switch and kvm_entry/kvm_exit, so that vtrace-merge's self-check
# verifies every guest event against its vCPU's guest-mode windows: it must
# say "0 outside" and "verified", with every guest CPU checked.
#
# ALIGN_HISTORY=events (align_unstable): the way Documentation/workflow.rst
# tells a user to keep the offset history.  vtrace_host was loaded by the
# suite at L1's start with its default parameters and is not reloaded; the
# guest waits ALIGN_DELAY seconds after its boot before it traces, and the
# host starts "trace-cmd record -e vtrace_host ..." once the guest's VM
# exists (its creation records are then not in host.dat); vtrace-merge
# takes the history from host.dat (no --offsets).  Two more results:
# NAME-history-complete (host.dat holds a chained history of every vCPU of
# the guest, none of it a creation record) and NAME-old-way-incomplete (the
# module's tsc_offsets, default capacity, read after the same capture: its
# trailer says the guest's VM lost records and vtrace-merge --offsets
# refuses it: what this test failed on before).  On a host with a stable
# TSC (align.sh) the history in host.dat starts with the snapshot
# vtrace_host writes when trace-cmd enables its event, and the module's
# file of the same capture is complete: ALIGN_OLD_WAY=file makes the last
# result NAME-file-way-too instead (vtrace-merge --offsets tsc_offsets of
# the same capture orders every sample too).  In the events mode
# vtrace-merge gets no --tsc-khz and no tsc_khz file beside host.dat: the
# TSC frequency comes from host.dat's vtrace_host events.
#
# ALIGN_LATENCY=G (align.sh): guest gG also runs the late wake-up phases
# after its markers (l2/e2e_align.sh: timer task lat_hog, then lat_io beside
# a port I/O loop, on its CPU 1, tracing scheduling and timers): when its
# console says so, the host pins that vCPU's thread to host CPU 1 and runs
# e2e_hog there (ALIGN_HOG: bursts, burst us, period us), and two more
# results check what vtrace-merge --explain makes of the capture
# (causes_check.py): NAME-cause-host-hog (lat_hog's wake-ups the hog
# delayed, named with its count and delays), NAME-cause-exit-io and
# NAME-cause-exit-cpuid (lat_io's and lat_cpuid's late wake-ups went to io
# and cpuid exits).
#
# ALIGN_FULL_FIRST=1 (align_unstable, with ALIGN_HISTORY=events): the user of
# the issue, who loaded vtrace_host at boot and records later: trace-cmd starts
# only once each guest's VM has used up its share of the module's default
# array ("vm PID NAME kept K dropped N" in stats with N > 0), so every offset
# write of the recording is one the module's own file has already lost.  One
# more result, NAME-full-before-recording, says so from the stats read just
# before trace-cmd started; NAME-history-complete then also requires that
# host.dat lost no event on any CPU (vtrace-merge --stats, lost-page 0).

ALIGN_MERGE=$VTRACE_PROJ/user/vtrace-merge
ALIGN_CHECK=$VTRACE_PROJ/selftests/vtrace/align_check.py

align_case() {
	local name=$1 count=$2
	shift 2
	local tscwrites=("$@") guests=$#
	local dir=$VTRACE_OUT/$name g pids=() rc args=() hog=

	mkdir -p "$dir"
	# trace-cmd starts while the guests run: no text patch for its events
	l1_hold_events kvm/kvm_hypercall sched/sched_switch kvm/kvm_entry kvm/kvm_exit ||
		ktap_diag "$name: could not hold L1's events (text patches while the guests run)"
	if [ "${ALIGN_HISTORY:-file}" = events ]; then
		align_start_events "$name" "$count" "${tscwrites[@]}"
	else
		align_start_file "$name" "$count" "${tscwrites[@]}"
	fi || {
		ktap_result 1 "$name"
		ktap_result 1 "$name-self-check" "not run"
		if [ "${ALIGN_HISTORY:-file}" = events ]; then
			ktap_result 1 "$name-history-complete" "not run"
			[ -z "${ALIGN_FULL_FIRST:-}" ] ||
				ktap_result 1 "$name-full-before-recording" "not run"
			ktap_result 1 "$name-$(align_last_name)" "not run"
			[ "${ALIGN_OLD_WAY:-refused}" != file ] || [ "$guests" -lt 2 ] ||
				ktap_result 1 "$name-mispaired-refused" "not run"
		fi
		align_causes_not_run "$name" "not run"
		return
	}
	if [ -n "${ALIGN_LATENCY:-}" ]; then
		align_hog "$name-g$ALIGN_LATENCY" > "$dir/hog.txt" 2>&1 &
		hog=$!
	fi
	for ((g = 1; g <= guests; g++)); do
		wait "${pids[g - 1]}"
		echo $? > "$VTRACE_OUT/$name-g$g/exit"
	done
	[ -n "$hog" ] && wait "$hog"
	kill -INT "$ALIGN_TC"
	wait "$ALIGN_TC"
	cp "/tmp/$name-host.dat" "$dir/host.dat"
	cat /sys/kernel/debug/vtrace/tsc_offsets > "$dir/tsc_offsets"
	cat /sys/kernel/debug/vtrace/stats > "$dir/stats"
	cat /sys/kernel/debug/vtrace/tsc_khz > "$dir/khz"
	[ "${ALIGN_HISTORY:-file}" = events ] || rmmod vtrace_host

	for ((g = 1; g <= guests; g++)); do
		args+=(--guest "g$g=$VTRACE_OUT/$name-g$g")
		l2_ktap "$name-g$g" | grep -q '^ok 1 align_guest_done' || {
			ktap_diag "guest g$g did not finish (QEMU exit $(cat "$VTRACE_OUT/$name-g$g/exit" 2>/dev/null)); the end of $VTRACE_OUT/$name-g$g/console.log:"
			tail -n 25 "$VTRACE_OUT/$name-g$g/console.log" | tr -d '\r' | while IFS= read -r l; do
				ktap_diag "  $l"
			done
		}
	done
	local hist=(--offsets "$dir/tsc_offsets" --tsc-khz "$(cat "$dir/khz")") events=kvm_hypercall,print
	local chk=(--offsets "$dir/tsc_offsets")
	if [ "${ALIGN_HISTORY:-file}" = events ]; then	# the history and the TSC rate in host.dat
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
		if [ "${ALIGN_HISTORY:-file}" = events ]; then
			ktap_result 1 "$name-history-complete" "not run"
			[ -z "${ALIGN_FULL_FIRST:-}" ] || align_full_before "$name" "$guests"
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
	if [ "${ALIGN_HISTORY:-file}" = events ]; then
		local lost
		lost=$(align_host_lost "$dir")
		ktap_diag "$name: events host.dat lost (vtrace-merge --stats, lost-page, all CPUs): ${lost:-unknown}"
		align_write_rate "$dir"
		grep -q '^history: ' "$dir/check.txt" && ! grep -q '^history: .*FAIL' "$dir/check.txt" &&
			[ "$lost" = 0 ]
		ktap_result $? "$name-history-complete"
		[ -z "${ALIGN_FULL_FIRST:-}" ] || align_full_before "$name" "$guests"
		align_old_way "$name" "$dir" "$count" "$guests" "${args[@]}"
	fi
	align_causes "$name" "$dir" "${hist[@]}"
}

# ALIGN_HOG: the host's bursts on the vCPU's CPU (ALIGN_LATENCY): count, us each, period us
ALIGN_HOG=(5 40000 400000)

# align_hog GUESTDIR: pin the guest's vCPU 1 thread to host CPU 1 and start
# e2e_hog there (SCHED_FIFO 20) at once, waiting on a FIFO; once the
# guest's console says "vtg: # lat hog", tell it to hold that CPU in
# ALIGN_HOG's bursts.  The guest's lat_hog runs 12 s, the bursts take 2 (the
# host saw the console line 6 s late once); e2e_hog started that late ran
# 0.24 s as a normal task on the CPU before its first burst (exec, set-up),
# itself a cause the test did not mean.
align_hog() {
	local g=$1 tid i fifo=/tmp/$1-hog.fifo hog rc
	for ((i = 0; i < 300; i++)); do
		tid=$(l2_vcpu_tid "$g" 1) && break
		sleep 1
	done
	[ -n "$tid" ] || { echo "align_hog: no vCPU 1 thread in $g"; return 1; }
	taskset -pc 1 "$tid" || return 1
	rm -f "$fifo"
	mkfifo "$fifo" || return 1
	# read-write: opening it blocks neither e2e_hog nor the writer below
	"$VTRACE_PROJ/build/helpers/e2e_hog" 1 10 "${ALIGN_HOG[1]}" "${ALIGN_HOG[2]}" 20 \
		"${ALIGN_HOG[0]}" - <> "$fifo" &
	hog=$!
	for ((i = 0; i < 4000; i++)); do
		grep -q "vtg: # lat hog" "$VTRACE_OUT/$g/console.log" && break
		kill -0 $hog 2> /dev/null || break
		sleep 0.2
	done
	sleep 1	# the line comes before lat_hog starts: one burst came 0.1 s early
	echo go > "$fifo"
	[ $i -lt 4000 ] || echo "align_hog: no 'lat hog' from $g"
	wait $hog
	rc=$?
	rm -f "$fifo"
	return $rc
}

# align_causes_not_run NAME REASON: the two cause results, failed
align_causes_not_run() {
	[ -n "${ALIGN_LATENCY:-}" ] || return 0
	ktap_result 1 "$1-cause-host-hog" "$2"
	ktap_result 1 "$1-cause-exit-io" "$2"
	ktap_result 1 "$1-cause-exit-cpuid" "$2"
}

# align_causes NAME DIR HISTORYARGS...: vtrace-merge --explain of guest
# gALIGN_LATENCY's lat_hog and lat_io, checked by causes_check.py against
# what the host injected (hog.txt: e2e_hog's own count)
align_causes() {
	local name=$1 dir=$2 g=$name-g${ALIGN_LATENCY:-} t
	shift 2
	[ -n "${ALIGN_LATENCY:-}" ] || return 0
	sed 's/^/# /' "$dir/hog.txt"
	grep -a 'vtg: # e2e_lat' "$VTRACE_OUT/$g/console.log" | tr -d '\r' | sed 's/^vtg: //'
	for t in lat_hog lat_io lat_cpuid; do
		"$ALIGN_MERGE" --host "$dir/host.dat" "$@" --guest "g$ALIGN_LATENCY=$VTRACE_OUT/$g" \
			--explain --task $t --worst 100000 --format jsonl > "$dir/explain-$t.jsonl" \
			2> "$dir/explain-$t.err" || {
			align_causes_not_run "$name" "vtrace-merge --explain --task $t failed: $(head -3 "$dir/explain-$t.err")"
			return
		}
	done
	python3 "$VTRACE_PROJ/selftests/vtrace/causes_check.py" --hog "${ALIGN_HOG[*]}" \
		--hog-done "$dir/hog.txt" --exit io="$dir/explain-lat_io.jsonl" \
		--exit cpuid="$dir/explain-lat_cpuid.jsonl" "$dir/explain-lat_hog.jsonl" \
		> "$dir/causes.txt" 2>&1
	sed 's/^/# /' "$dir/causes.txt"
	grep -q '^host-hog: ok' "$dir/causes.txt"
	ktap_result $? "$name-cause-host-hog"
	grep -q '^exit-io: ok' "$dir/causes.txt"
	ktap_result $? "$name-cause-exit-io"
	grep -q '^exit-cpuid: ok' "$dir/causes.txt"
	ktap_result $? "$name-cause-exit-cpuid"
}

# align_pid_args NAME GUESTS: ALIGN_PIDARGS, align_check.py's --pid gN=PID of
# each guest, and --created-during gN for one whose boot the bed started
# again (testbed/l2-watch.sh): its VM was made during the recording
align_pid_args() {
	local g
	ALIGN_PIDARGS=()
	for ((g = 1; g <= $2; g++)); do
		ALIGN_PIDARGS+=(--pid "g$g=$(cat "$VTRACE_OUT/$1-g$g/qemu.pid")")
		! grep -q "^l2 boot watchdog: $VTRACE_OUT/$1-g$g:" "$VTRACE_OUT/l2-boot-watchdog.txt" \
			2> /dev/null || ALIGN_PIDARGS+=(--created-during "g$g")
	done
}

# the last result's name in the events mode
align_last_name() {
	[ "${ALIGN_OLD_WAY:-refused}" = file ] && echo file-way-too || echo old-way-incomplete
}

# align_start_file NAME COUNT TSCWRITE...: a fresh vtrace_host sized for the
# capture (an unstable TSC writes thousands of offsets a second: 1M
# records), trace-cmd, then the guests; sets ALIGN_TC and pids
align_start_file() {
	local name=$1 count=$2 g
	shift 2
	rmmod vtrace_host 2>/dev/null
	insmod "$VTRACE_HOST_KO" capacity=1048576 || return 1
	(cd /tmp && exec trace-cmd record -q -C x86-tsc -b 8192 -e kvm:kvm_hypercall \
		-e sched:sched_switch -e kvm:kvm_entry -e kvm:kvm_exit \
		-o "/tmp/$name-host.dat") > "$VTRACE_OUT/$name/trace-cmd.log" 2>&1 &
	ALIGN_TC=$!
	sleep 3
	for ((g = 1; g <= $#; g++)); do
		l2_start "$name-g$g" /tests/e2e_align.sh --cpus 2 --timeout 400 --vtrace-args \
			--arg "$count,$g,${!g},0,$([ "${ALIGN_LATENCY:-}" = $g ] && echo 1 || echo 0)"
		pids+=("$L2_PID")
	done
}

# align_start_events NAME COUNT TSCWRITE...: the guests first (they wait
# ALIGN_DELAY s before tracing), then, once their VMs exist, trace-cmd with
# -e vtrace_host; vtrace_host stays as the suite loaded it
align_start_events() {
	local name=$1 count=$2 g w vm
	shift 2
	grep -q '^vtrace_host ' /proc/modules || { ktap_diag "vtrace_host is not loaded"; return 1; }
	for ((g = 1; g <= $#; g++)); do
		l2_start "$name-g$g" /tests/e2e_align.sh --cpus 2 --timeout 400 --vtrace-args \
			--arg "$count,$g,${!g},${ALIGN_DELAY:-30},$([ "${ALIGN_LATENCY:-}" = $g ] && echo 1 || echo 0)"
		pids+=("$L2_PID")
	done
	for ((g = 1; g <= $#; g++)); do	# each guest's VM exists: KVM's debugfs PID-FD
		for ((w = 0; w < 600; w++)); do
			vm=$(cat "$VTRACE_OUT/$name-g$g/qemu.pid" 2>/dev/null)
			[ -n "$vm" ] && ls -d /sys/kernel/debug/kvm/"$vm"-* > /dev/null 2>&1 && break
			sleep 0.1
		done
	done
	[ -z "${ALIGN_FULL_FIRST:-}" ] || align_wait_full "$name" "$#"
	(cd /tmp && exec trace-cmd record -q -C x86-tsc -b 8192 -e vtrace_host -e kvm:kvm_hypercall \
		-e sched:sched_switch -e kvm:kvm_entry -e kvm:kvm_exit \
		-o "/tmp/$name-host.dat") > "$VTRACE_OUT/$name/trace-cmd.log" 2>&1 &
	ALIGN_TC=$!
	for ((w = 0; w < 600; w++)); do	# trace-cmd records once the events are enabled
		[ "$(cat /sys/kernel/tracing/events/vtrace_host/tsc_offset/enable)" = 1 ] && break
		sleep 0.1
	done
	ktap_diag "$name: the guests' VMs exist; trace-cmd recording $((w / 10)).$((w % 10)) s after its start"
}

# align_vm_dropped PID STATS: the records vtrace_host dropped for the VM of
# QEMU pid PID, from a copy of its stats ("vm PID NAME kept K dropped N")
align_vm_dropped() {
	awk -v p="$1" '$1 == "vm" && $2 == p { n = $7 } END { print n + 0 }' "$2"
}

# align_wait_full NAME GUESTS: wait (90 s at most) until every guest's VM has
# lost records in vtrace_host's array (its share is full); the stats of that
# moment go to NAME/stats-before
align_wait_full() {
	local name=$1 guests=$2 g w full pid
	for ((w = 0; w < 900; w++)); do
		cat /sys/kernel/debug/vtrace/stats > "$VTRACE_OUT/$name/stats-before"
		full=1
		for ((g = 1; g <= guests; g++)); do
			pid=$(cat "$VTRACE_OUT/$name-g$g/qemu.pid" 2>/dev/null)
			[ "$(align_vm_dropped "$pid" "$VTRACE_OUT/$name/stats-before")" -gt 0 ] || full=0
		done
		[ $full = 1 ] && break
		sleep 0.1
	done
	grep -E '^(kept|dropped|capacity|vm_share) |^vm ' "$VTRACE_OUT/$name/stats-before" |
		sed "s/^/# $name: stats before the recording: /"
	ktap_diag "$name: waited $((w / 10)).$((w % 10)) s for the guests' shares of the array to be full"
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
	align_refused "$dir/mis-vm.err" "$failed" "${base[@]}" --offsets "$dir/tsc_offsets" \
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

# align_self_check NAME MERGE_ERR: vtrace-merge's self-check said 0 outside, every CPU checked
align_self_check() {
	local name=$1 err=$2 n
	grep 'self-check: ' "$err" | sed 's/^/# /'
	n=$(sed -nE 's/^vtrace-merge: self-check: ([0-9]+) guest events checked, 0 outside .*: verified$/\1/p' "$err")
	[ "${n:-0}" -gt 0 ] && ! grep -q 'self-check: .*unverified' "$err"
	ktap_result $? "$name-self-check"
}
