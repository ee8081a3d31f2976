#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Recognize the nested bed's own failure in a run's logs.
#
#   bed-glitch.sh DIR     exit 0 and print what was found when the logs under
#                         DIR show it, 1 otherwise
#
# KVM nested under QEMU's TCG rarely loses a halted L2 vCPU's wake-ups: the
# guest's RCU then reports that its grace-period kthread's timer never fired
# ("rcu_preempt kthread timer wakeup didn't happen", the CPU idle, all
# quiescent states seen), IPIs to that CPU wait forever (soft lockups in
# smp_call_function_many_cond; the same loss in L1 shows as a soft lockup
# of an idle CPU, "[swapper/N:0]"), and L1 itself may die later with its KVM
# vCPU thread's stack overflowing in the exception entry code ("BUG: TASK
# stack guard page was hit" in "CPU n/KVM").  And TCG may run a stale copy
# of kernel text that another vCPU has just patched (static keys,
# tracepoints): a breakpoint of text_poke_bp() that is already gone
# ("Oops: int3").  None involves vtrace's code: a report whose RIP or
# stack names a vtrace module, or an int3 at vtrace_host's kprobe
# (kvm_vcpu_write_tsc_multiplier), is not this glitch.  A guest that hung or
# reset in its boot, before vtrace was loaded, was restarted by the L2 boot
# watchdog; a suite that counts its VMs then sees one more: that too.  So
# is a guest that reset by itself later, with no kernel message and no
# poweroff by its init (testbed/l2-watch.sh logs "l2 guest reset: ..."):
# seen right after a CPU hotplug and, likely, after a TSC write; a kernel
# bug would print a report first.  One such reset, caught with L1 tracing
# kvm_exit, was a triple fault (exit "shutdown") in the guest kernel's boot,
# before any vtrace code ran.  A guest whose heartbeat stopped with its
# vCPUs idle ("l2 stalled") lost its wake-ups; and L1 may reset by itself
# too ("l1 reset", testbed/run-l1.sh).  A guest that spins ("l2 stuck
# busy") is not the bed's unless its vCPUs loop on a nested page fault in
# a walk of page tables outside the guest's RAM (testbed/exit-loop.awk).
# Documentation/testbed.rst ("Known quirks of the nesting") says what the
# callers (run_vm_tests.sh, bench/check.sh) do with it.
dir=${1:?usage: bed-glitch.sh DIR}
rc=1

names_vtrace() {	# names_vtrace FILE PATTERN: the report from PATTERN on names a vtrace module
	sed -n "/$2/,/end trace\|Kernel panic/p" "$1" | grep -av 'Modules linked in' | grep -aq vtrace
}

ipi_lockup_without_vtrace() {	# FILE: its soft lockup reports all wait in smp_call_function_many_cond, no vtrace frame
	awk '/soft lockup - CPU#[0-9]* stuck/ { n++; inrep = 1; next }
	     inrep && /RIP: 0010:smp_call_function_many_cond/ { ipi++ }
	     inrep && !/Modules linked in/ && /vtrace/ { vt++ }
	     inrep && /<\/TASK>/ { inrep = 0 }
	     END { exit !(n > 0 && ipi == n && !vt) }' "$1"
}

while IFS= read -r -d '' f; do
	if grep -aq "kthread timer wakeup didn't happen" "$f"; then
		echo "${f#"$dir"/}: $(grep -am1 -o "rcu_[a-z]* kthread timer wakeup didn't happen.*" "$f")"
		rc=0
	fi
	# an idle CPU "stuck": its own timer interrupts are lost (seen in L1
	# itself, host_unstable, on a loaded machine: CPU#0 idle 44 s, RCU's
	# kthread starved on the other CPU)
	if grep -aq 'soft lockup - CPU#[0-9]* stuck for [0-9]*s! \[swapper/[0-9]*:0\]' "$f"; then
		echo "${f#"$dir"/}: $(grep -am1 -o 'soft lockup - CPU#[0-9]* stuck for [0-9]*s! \[swapper/[0-9]*:0\]' "$f") (an idle CPU)"
		rc=0
	fi
	# a CPU stuck waiting for a cross-CPU call another CPU never ran (the
	# IPI lost, the same family): a soft lockup at smp_call_function_many_cond
	# with no vtrace frame in its report, and, where run-l1.sh sampled L1's
	# CPUs before the kill (l1-cpus.txt), none of them in a vtrace module
	# (ci18 host_unstable: kvm_destroy_vm's on_each_cpu waited 53 s while
	# the other CPU ran __schedule and breakpoint traps)
	if ipi_lockup_without_vtrace "$f" &&
	   ! grep -aqs vtrace "$(dirname "$f")/l1-cpus.txt"; then
		echo "${f#"$dir"/}: $(grep -am1 -o 'soft lockup - CPU#[0-9]* stuck for [0-9]*s! \[[^]]*\]' "$f") waiting in smp_call_function_many_cond (a cross-CPU call never answered)"
		rc=0
	fi
	# L1's vCPU thread overflowing its stack, with no vtrace frame in the report
	if grep -aq 'stack guard page was hit' "$f" &&
	   grep -aA3 'stack guard page was hit' "$f" | grep -aq 'Comm: CPU [0-9]*/KVM' &&
	   ! names_vtrace "$f" 'stack guard page was hit'; then
		echo "${f#"$dir"/}: $(grep -am1 'stack guard page was hit' "$f" | sed 's/^\[[ 0-9.]*\] //') in a KVM vCPU thread"
		rc=0
	fi
	# the same, caught by the scheduler's check of the stack's end instead
	# of the guard page (validation run of 2026-12-01, host: in
	# shutdown_interception after a guest's triple fault)
	if grep -aq 'corrupted stack end detected inside scheduler' "$f" &&
	   grep -aA2 'corrupted stack end detected inside scheduler' "$f" | grep -aq 'Comm: CPU [0-9]*/KVM' &&
	   ! names_vtrace "$f" 'corrupted stack end detected inside scheduler'; then
		echo "${f#"$dir"/}: corrupted stack end detected inside scheduler in a KVM vCPU thread"
		rc=0
	fi
	# a nested guest's double fault taken by L1 itself: a KVM vCPU thread's
	# "double fault" at a RIP L1's kernel has no symbol for (the L2 guest's:
	# under TCG a vCPU in guest mode shows the guest's registers), no vtrace
	# frame in the report (ci19 align: g1's kernel overflowed its exception
	# stack in a page-fault loop right after its TSC write, and L1 reported
	# the double fault at g1's native_write_msr address)
	df=$(grep -aA4 'PANIC: double fault' "$f")
	if grep -aq 'Comm: CPU [0-9]*/KVM' <<< "$df" &&
	   grep -aqE 'RIP: 0010:0x[0-9a-f]+[[:space:]]*$' <<< "$df" &&
	   ! names_vtrace "$f" 'PANIC: double fault'; then
		echo "${f#"$dir"/}: double fault in a KVM vCPU thread at a guest's $(grep -aoE -m1 'RIP: 0010:0x[0-9a-f]+[[:space:]]*$' <<< "$df")"
		rc=0
	fi
	# a CPU ran a breakpoint that text patching (static keys, tracepoints)
	# had already taken out: TCG executing stale code of another vCPU's
	# patch.  vtrace_host's only breakpoint is its kprobe on
	# kvm_vcpu_write_tsc_multiplier: an int3 there is not the bed's
	if grep -aq 'Oops: int3' "$f" && ! names_vtrace "$f" 'Oops: int3' &&
	   ! grep -aA6 'Oops: int3' "$f" | grep -a 'RIP:' | grep -aq 'kvm_vcpu_write_tsc_multiplier'; then
		echo "${f#"$dir"/}: $(grep -am1 'Oops: int3' "$f" | sed 's/^\[[ 0-9.]*\] //') at $(grep -aA6 'Oops: int3' "$f" | grep -am1 -o 'RIP: .*')"
		rc=0
	fi
	# a guest the L2 watchdogs (testbed/l2-watch.sh) had to kill or start
	# again: the suite saw one more VM, or one late, than it planned; one
	# that stalled with its vCPUs idle (lost wake-ups); one that spun only
	# when l2-watch.sh's sample of its exits found the CPU faulting, again
	# and again, in a walk of page tables outside the guest's RAM
	# (exit-loop.awk: "a nested page fault loop"; ci25, 2026-12-02: 593,949
	# such faults at one RIP)
	l2='^l2 ((boot watchdog|guest reset|stalled): |stuck busy: .*: a nested page fault loop)'
	if grep -aqE "$l2" "$f"; then
		# the last: what ended the guest (a boot reset restarted before it is said too)
		grep -aE "$l2" "$f" | tail -1 | sed "s|^|${f#"$dir"/}: |"
		rc=0
	fi
	# L1 itself ended by itself while running its script, with no kernel
	# report in its console (testbed/run-l1.sh says "l1 reset")
	# or stopped as a whole (no heartbeat: "l1 stalled")
	if grep -aqE '^l1 (reset|stalled): ' "$f"; then
		grep -aE -m1 '^l1 (reset|stalled): ' "$f" | sed "s|^|${f#"$dir"/}: |"
		rc=0
	fi
	# L1 stuck in its own boot, before its init said "L1 up" and ran the
	# suite (which loads every vtrace module): soft lockups and RCU stalls
	# of CPUs in finish_task_switch at 2.8 s, then no output (run-l1.sh,
	# "after a kernel report": ci14's guest_agent, 2026-12-02 00:10)
	if [ "$(basename "$f")" = l1-killed.log ] &&
	   ! grep -aq 'vtrace-testbed: L1 up' "$(dirname "$f")/l1-console.log" 2>/dev/null; then
		echo "${f#"$dir"/}: L1 stuck in its boot, before its script (no \"L1 up\"): $(grep -am1 -oE 'soft lockup - CPU#[0-9]* stuck|rcu_[a-z]* detected stalls' "$(dirname "$f")/l1-console.log")"
		rc=0
	fi
done < <(find "$dir" -name '*.log' -print0 2>/dev/null)
exit $rc
