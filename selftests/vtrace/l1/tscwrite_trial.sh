#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Manual trial: align's guest g1 at its TSC write, many times per L1 boot, vtrace_guest in two modes.
#   ARG: "SECONDS,PER_BOOT,PARAMS_A,PARAMS_B[,FIRST]" (default "1200,4,-,-,1"): guest
#        pairs are booted until SECONDS have passed; each pair runs trials
#        FIRST.. (PER_BOOT of them, numbering goes on from boot to boot),
#        alternating between mode A (vtrace_guest loaded with PARAMS_A) and
#        B (PARAMS_B; "+" for spaces, "-" for none), odd boots starting with
#        A, even ones with B: l2/tscwrite_trial.sh.
# vtrace-l1: --timeout 3600
# vtrace-l1-manual: a measurement of the bed (Documentation/testbed.rst, "Is vtrace_guest's busy drain (c73fdd0) behind the failures"), 20+ minutes
#
# As in align (l1/align.sh, align-lib.sh): vtrace_host loaded, L1's kvm
# events held, trace-cmd recording kvm_hypercall, sched_switch, kvm_entry
# and kvm_exit, and two 2-vCPU guests at once: g1 writes its CPU 1's TSC half-way
# through each trial's markers, g2 runs the same trials without the write.
# Every second, L1's uptime, the current trial and each guest VM's exit
# count (KVM's debugfs) go to OUT/exits.log.  A boot whose g1 ends before
# its last trial is done keeps its host trace (bN-host.dat).
# Run from L0:  testbed/build-l2.sh "$(testbed/default-kver.sh)" &&
#   /work/bin/vmslot testbed/run-l1.sh --out build/testbed/tsct --timeout 2400 --freeze-watch \
#     selftests/vtrace/l1/tscwrite_trial.sh 1200,4,-,dbg_busy_fill_ms=0
# then selftests/vtrace/tscwrite-trial-count.py build/testbed/tsct (Documentation/testbed.rst).
# Mode B there needed a debug patch (dbg_busy_fill_ms, not kept); the tree's module takes real parameters only.
. "$VTRACE_PROJ/testbed/lib.sh"

IFS=, read -r secs per pa pb first <<< "${1:-1200,4,-,-,1}"
secs=${secs:-1200} per=${per:-4} pa=${pa:--} pb=${pb:--} n=${first:-1}
end=$((SECONDS + secs))

# trial_vm_exits NAME: the exits of guest NAME's VM so far, or -
trial_vm_exits() {
	local pid f
	pid=$(cat "$VTRACE_OUT/$1/qemu.pid" 2>/dev/null) || { echo -; return; }
	for f in /sys/kernel/debug/kvm/"$pid"-*/exits; do
		[ -r "$f" ] && { cat "$f"; return; }
	done
	echo -
}

# trial_boot B FIRST LAST: one pair of guests; prints the last trial g1
# started and the last it finished (0 for none); notes to OUT/boots.log
trial_boot() {
	local b=$1 lo=$2 hi=$3 g1=b$1-g1 g2=b$1-g2 p1 p2 tc cur done_n start_n order=AB

	[ $((b % 2)) = 1 ] || order=BA
	(cd /tmp && exec trace-cmd record -q -C x86-tsc -b 8192 -e kvm:kvm_hypercall \
		-e sched:sched_switch -e kvm:kvm_entry -e kvm:kvm_exit -o /tmp/trial-host.dat) \
		> "$VTRACE_OUT/b$b-trace-cmd.log" 2>&1 &
	tc=$!
	sleep 3
	l2_start "$g1" /tests/tscwrite_trial.sh --cpus 2 --timeout 400 --vtrace-args \
		--arg "$lo,$hi,1,$pa,$pb,$order"
	p1=$L2_PID
	l2_start "$g2" /tests/tscwrite_trial.sh --cpus 2 --timeout 400 --vtrace-args \
		--arg "$lo,$hi,0,$pa,$pb,$order"
	p2=$L2_PID
	while kill -0 "$p1" 2>/dev/null; do
		cur=$(grep -a '^trial ' "$VTRACE_OUT/$g1/console.log" 2>/dev/null | tail -n 1 | tr -d '\r')
		echo "$(cut -d' ' -f1 /proc/uptime) b$b g1 $(trial_vm_exits "$g1")" \
			"g2 $(trial_vm_exits "$g2") | ${cur:-boot}" >> "$VTRACE_OUT/exits.log"
		sleep 1
	done
	# g1 is over: g2 goes too (its trials only load the bed)
	kill "$(cat "$VTRACE_OUT/$g2/qemu.pid" 2>/dev/null)" 2>/dev/null
	wait "$p1" "$p2"
	kill -INT "$tc" 2>/dev/null
	wait "$tc"
	done_n=$(grep -a '^trial [0-9]* mode . done' "$VTRACE_OUT/$g1/console.log" | tail -n 1 |
		awk '{ print $2 }')
	start_n=$(grep -a '^trial [0-9]* mode . start' "$VTRACE_OUT/$g1/console.log" | tail -n 1 |
		awk '{ print $2 }')
	if [ "${done_n:-0}" != "$hi" ]; then
		cp /tmp/trial-host.dat "$VTRACE_OUT/b$b-host.dat"
		{
			echo "# b$b: g1 ended in trial ${start_n:-none} (done: ${done_n:-none}) of $lo..$hi; its console's end:"
			tail -n 30 "$VTRACE_OUT/$g1/console.log" | tr -d '\r' | sed 's/^/# | /'
			sed 's/^/# qemu: /' "$VTRACE_OUT/$g1/qemu.log"
		} >> "$VTRACE_OUT/boots.log"
	fi
	rm -f /tmp/trial-host.dat
	echo "${start_n:-0} ${done_n:-0}"
}

modprobe kvm_amd
insmod "$VTRACE_HOST_KO"
l1_hold_events kvm/kvm_hypercall sched/sched_switch kvm/kvm_entry kvm/kvm_exit ||
	echo "# could not hold L1's events"
b=0
while [ $SECONDS -lt $end ]; do
	b=$((b + 1))
	echo "# b$b: trials $n..$((n + per - 1)) at $(cut -d' ' -f1 /proc/uptime)" |
		tee -a "$VTRACE_OUT/boots.log"
	read -r started finished < <(trial_boot "$b" "$n" $((n + per - 1)))
	echo "# b$b: started up to ${started}, finished up to ${finished}" | tee -a "$VTRACE_OUT/boots.log"
	# a failed trial is not run again (the next boot goes on after it); a
	# boot that started none starts the same ones again
	[ "$started" -gt 0 ] && n=$((started + 1))
done
rmmod vtrace_host
save_dmesg l1-dmesg
"$VTRACE_PROJ/testbed/splat-check.sh" "$VTRACE_OUT"/l1-dmesg.log "$VTRACE_OUT"/*/console.log
echo "# trials: $((n - 1)) in $b boots; splat check rc $?"
