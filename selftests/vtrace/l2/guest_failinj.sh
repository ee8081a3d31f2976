#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# L2: fault injection into vtrace_guest with the test-only vtrace_failinj.ko (kprobe override).
#   $1: most failure points tried per function (default 1000: all of them)
#
# Part A, the module's own calls: for each function of the list, fail its
# 1st, 2nd, ... call made from vtrace_guest's code (any task) during one
# whole life cycle: insmod, start, markers, stop, rmmod.  Each run must end
# cleanly: a failed insmod leaves nothing behind; a loaded module stops,
# unloads, leaves no thread, no debugfs folder, no tracefs instance.
# Part B, the kernel's calls in the module's threads (failslab's task
# filter): fail the Nth kmalloc of any code running in a "vtrace-" thread
# during start/markers/stop; every marker must still be sent or counted.
# Then one clean session, and the unreclaimable slab / vmalloc use before
# and after (drop_caches) are printed and compared.  Last, a process that
# loaded the module and lives on dies (killed, then OOM-killed and reaped):
# sessions go on.
MAX=${1:-1000}
KO=/lib/vtrace/vtrace_guest.ko
FI=/lib/vtrace/vtrace_failinj.ko
FP=/sys/module/vtrace_failinj/parameters
D=/sys/kernel/debug/vtrace
I=/sys/kernel/tracing/instances/vtrace
n=0
t() {	# t RC NAME
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "vtg: ok $n $2"; else echo "vtg: not ok $n $2"; fi
}
st() {	# the status text in /tmp/st (reading it can be an injected failure: retry)
	cat $D/status > /tmp/st 2> /dev/null || cat $D/status > /tmp/st 2> /dev/null ||
		cat $D/status > /tmp/st
}
col() {	# col CPU FIELD: a number of the status table read by st
	awk -v c="$1" -v f="$2" '$1 == c && NF == 11 { print $f }' /tmp/st
}
mem() {	# unreclaimable slab + vmalloc, KiB, after dropping caches
	sync
	echo 3 > /proc/sys/vm/drop_caches
	awk '/^SUnreclaim:|^VmallocUsed:/ { s += $2 } END { print s }' /proc/meminfo
}
gone() {	# nothing of vtrace_guest left
	! grep -q '^vtrace_guest ' /proc/modules && ! [ -d $D ] && ! [ -d $I ] &&
		! ps | grep -q '[v]trace-'
}
session() {	# a start, markers on both CPUs, a stop; every marker sent or counted
	echo 1 > $D/enable || return 0	# a refused start is a clean outcome
	guest_markers 200 0 1 > /dev/null
	# (the request to the control thread is allocated: an injected failure, retry)
	echo 0 > $D/enable 2> /dev/null || echo 0 > $D/enable || return 1
	st || return 1
	for c in 0 1; do	# (a port that failed at load is "no port": not streamed, said so)
		[ "$(col $c 2)" = no ] ||
			[ $(($(col $c 6) + $(col $c 9) + $(col $c 10))) -ge 200 ] || return 1
	done
}
P=/sys/module/vtrace_guest/parameters
port_dev() {	# port_dev NAME: /dev/vportNpM of the port named NAME
	for p in /sys/class/virtio-ports/*; do
		[ "$(cat "$p/name")" = "$1" ] && echo "/dev/${p##*/}" && return
	done
}

# Parameters out of bounds are refused (0 would make a thread busy-loop),
# at load and later through sysfs; the value stays.
! insmod $KO poll_ms=0 2> /dev/null && ! insmod $KO drain_ms=0 2> /dev/null &&
	! insmod $KO port_timeout_ms=600000 2> /dev/null && insmod $KO send_kallsyms=0 &&
	! echo 0 > $P/poll_ms 2> /dev/null && ! echo 0 > $P/drain_ms 2> /dev/null &&
	[ "$(cat $P/poll_ms) $(cat $P/drain_ms)" = "20 20" ] && echo 0 > $P/drain_max_ms &&
	echo 1000 > $P/drain_max_ms && rmmod vtrace_guest
t $? parameters_bounded
dmesg | grep 'refused: ' | sed 's/^/vtg-fi: /'

# The first session of this guest (the host checks its ctl file), with
# kptr_restrict=0 and perf_event_paranoid=2: an unprivileged reader sees no
# kernel address, so kallsyms' addresses must be zeros (the module, which
# has every capability, must not read them as root would) and
# printk_formats must not be sent.  The guest was booted
# with maxcpus=1: CPU 1 is possible but never online, so its APIC id must
# come from the kernel's map.  A port opened by path must be the port:
# /dev/null bind-mounted over cpu1's node is refused (cpu1 not streamed,
# which also keeps a drain thread off the never-online CPU); cpu0 is used.
echo 0 > /proc/sys/kernel/kptr_restrict
echo 2 > /proc/sys/kernel/perf_event_paranoid
c1=$(port_dev vtrace.cpu1)
mount -o bind /dev/null "$c1" && insmod $KO && st && echo 1 > $D/enable && echo 0 > $D/enable
r=$?
umount "$c1"
rmmod vtrace_guest
echo 1 > /proc/sys/kernel/perf_event_paranoid
t $r session_addresses_hidden
[ $r = 0 ] && [ "$(col 0 2) $(col 1 2)" = "yes no" ] && dmesg | grep -q 'vtrace.cpu1: .* not that port'
t $? port_is_verified
dmesg | grep 'not that port' | sed 's/^/vtg-fi: /'
echo 1 > /sys/devices/system/cpu/cpu1/online && [ "$(cat /sys/devices/system/cpu/online)" = 0-1 ]
t $? cpu1_online_late

[ -f $FI ] || { echo "vtg: ok 1 failinj # SKIP vtrace_failinj.ko not built for this kernel"; exit 0; }

# Any error looking the instance up (not only "no such instance") leaves
# a user's instance in place: the module's first file_open_root() fails.
mkdir $I && insmod $FI func=file_open_root ret=-12 gfp_arg=0 comm='*' caller=vtrace_guest nth=1 &&
	insmod $KO send_kallsyms=0 && inj=$(cat $FP/injected) && rmmod vtrace_guest
r=$?
rmmod vtrace_failinj
[ $r = 0 ] && [ "$inj" = 1 ] && [ -d $I ]
t $? user_instance_kept_after_lookup_error
rmdir $I

# sweep FUNC RET GFP_ARG: part A for one function
bad=0 points=0 kept=$(dmesg | grep -c 'kept at unload')
sweep() {
	k=1
	while [ $k -le "$MAX" ]; do
		insmod $FI func="$1" ret="$2" gfp_arg="$3" comm='*' caller=vtrace_guest nth=$k ||
			{ echo "vtg-fi: cannot probe $1"; bad=$((bad + 1)); return; }
		if insmod $KO send_kallsyms=0 2> /dev/null; then
			session || { echo "vtg-fi: $1 call $k: a marker neither sent nor counted"; bad=$((bad + 1)); }
			st && grep -q '^state: idle' /tmp/st || { echo "vtg-fi: $1 call $k: not idle"; bad=$((bad + 1)); }
			[ "$(cat /sys/module/vtrace_guest/refcnt)" = 0 ] || { echo "vtg-fi: $1 call $k: refcnt"; bad=$((bad + 1)); }
			rmmod vtrace_guest || { echo "vtg-fi: $1 call $k: rmmod failed"; bad=$((bad + 1)); }
		fi
		inj=$(cat $FP/injected) hits=$(cat $FP/hits)
		rmmod vtrace_failinj
		# a failed lookup of the instance: the module kept it, as a user's (right)
		k2=$(dmesg | grep -c 'kept at unload')
		[ "$k2" = "$kept" ] || rmdir $I 2> /dev/null
		kept=$k2
		gone || { echo "vtg-fi: $1 call $k: left behind"; bad=$((bad + 1)); rmmod vtrace_guest 2> /dev/null; }
		[ "$inj" -gt 0 ] || break
		points=$((points + 1))
		k=$((k + 1))
	done
	echo "vtg-fi: $1: $((k - 1)) of $hits calls failed in turn"
}

# ksym NAME: the allocator's name in this kernel: NAME, or since v6.10
# (allocation profiling) NAME_noprof or __NAME_noprof; kmalloc_trace() is
# __kmalloc_cache_noprof() since v6.11
ksym() {
	a=
	[ "$1" = kmalloc_trace ] && a=__kmalloc_cache_noprof
	for s in "$1" "$1_noprof" "__$1_noprof" $a; do
		grep -q " $s\$" /proc/kallsyms && echo "$s" && return
	done
	echo "$1"
}

m0=$(mem)
for spec in kmalloc_trace:0:2 __kmalloc:0:2 kvmalloc_node:0:2 kasprintf:0:1 kmemdup_nul:0:3 \
	    kthread_create_on_node:-12:0 vm_mmap:-12:0 file_open_root:-12:0 kernel_read:-5:0 \
	    splice_direct_to_actor:-12:0 kern_mount:-12:0 trace_array_get_by_name:0:0 \
	    get_task_mm:0:0; do
	f=$(ksym "${spec%%:*}") g=${spec##*:} r=${spec#*:}
	# __kvmalloc_node_noprof(size, buckets, gfp, node) with CONFIG_SLAB_BUCKETS
	[ "$f" = __kvmalloc_node_noprof ] && g=3
	sweep "$f" "${r%:*}" "$g"
done
echo "vtg-fi: part A: $points failure points, $bad problems"
[ $bad = 0 ] && [ $points -gt 0 ]
t $? module_calls_fail_cleanly

# part B: the kernel's own allocations in the module's threads
insmod $KO send_kallsyms=0
bad=0 points=0
for f in $(ksym kmalloc_trace) $(ksym __kmalloc); do
	insmod $FI func=$f ret=0 gfp_arg=2 comm=vtrace- nth=1000000
	k=1
	while [ $k -le "$MAX" ]; do
		echo 0 > $FP/hits
		echo 0 > $FP/injected
		echo $k > $FP/nth
		session || { echo "vtg-fi: task $f call $k: a marker neither sent nor counted"; bad=$((bad + 1)); }
		st && grep -q '^state: idle' /tmp/st || { echo "vtg-fi: task $f call $k: not idle"; bad=$((bad + 1)); }
		[ "$(cat $FP/injected)" -gt 0 ] || break
		points=$((points + 1))
		k=$((k + 1))
	done
	echo "vtg-fi: task $f: $((k - 1)) calls failed in turn (one session each)"
	rmmod vtrace_failinj
done
echo "vtg-fi: part B: $points failure points, $bad problems"
[ $bad = 0 ] && [ $points -gt 0 ]
t $? thread_allocations_fail_cleanly

# afterwards: a clean session still streams, and nothing grew
echo 1 > $D/enable && guest_markers 300 0 1 > /dev/null && echo 0 > $D/enable && st &&
	[ "$(col 0 6)" -ge 300 ] && [ "$(col 1 6)" -ge 300 ] && [ "$(col 0 8)" = 0 ]
t $? works_after_injection
rmmod vtrace_guest && gone
t $? unload_clean
m1=$(mem)
echo "vtg-fi: unreclaimable slab + vmalloc: $m0 KiB before, $m1 KiB after"
[ $((m1 - m0)) -lt 1024 ]
t $? no_memory_growth

# The loader's address space: the module keeps its buffers in the mm of the
# process that loaded it.  A loader that lives on (guest_loader loads the
# module itself, as a daemon using libkmod does) and then dies must not
# break the module.  Killed during a session: the stop and a new session
# work.  OOM-killed in a memory cgroup: 2 s later the OOM reaper empties
# the mm's private memory and marks it unstable (a later fault in a private
# mapping fails); sessions after that must work too, every marker sent.
loaded() {	# loaded: guest_loader has loaded the module
	i=0
	while [ $i -lt 100 ] && ! grep -q '^loaded' /tmp/loader.out; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q '^loaded' /tmp/loader.out
}
sent() {	# sent N: a session with N markers on cpu0, each one sent
	echo 1 > $D/enable && guest_markers "$1" 0 > /dev/null && echo 0 > $D/enable && st &&
		[ "$(col 0 6)" -ge "$1" ] && [ "$(col 0 8)" = 0 ] && [ "$(col 0 11)" = 0 ]
}
: > /tmp/loader.out
guest_loader $KO send_kallsyms=0 > /tmp/loader.out 2>&1 &
lp=$!
loaded && echo 1 > $D/enable && kill -KILL $lp && wait $lp
guest_markers 200 0 > /dev/null && echo 0 > $D/enable && st && [ "$(col 0 6)" -ge 200 ] &&
	sent 200
t $? loader_killed_sessions_go_on
rmmod vtrace_guest

CG=/sys/fs/cgroup
mount -t cgroup2 none $CG && echo +memory > $CG/cgroup.subtree_control && mkdir $CG/vtg &&
	echo 32M > $CG/vtg/memory.max
r=$?
: > /tmp/loader.out
guest_loader $KO send_kallsyms=0 > /tmp/loader.out 2>&1 &
lp=$!
# the OOM report's stack dump is wanted here: kept off the console (whose
# "Call Trace:" the bed takes for a splat), and dmesg is searched below
lvl=$(cut -f1 /proc/sys/kernel/printk)
if [ $r = 0 ] && loaded && echo $lp > $CG/vtg/cgroup.procs && sent 200; then
	echo 1 > /proc/sys/kernel/printk
	kill -USR1 $lp
	# (should the cgroup's OOM killer not come, the test fails, not hangs)
	(sleep 30; kill -KILL $lp 2> /dev/null) &
else
	kill -KILL $lp
fi
wait $lp
i=0
while [ $i -lt 100 ] && ! dmesg | grep -q "oom_reaper: reaped process $lp "; do
	sleep 0.1
	i=$((i + 1))
done
echo "$lvl" > /proc/sys/kernel/printk
dmesg | grep "Memory cgroup out of memory\|oom_reaper: reaped process $lp " | sed 's/^/vtg-fi: /'
dmesg | grep -q "oom_reaper: reaped process $lp " && sent 200 && sent 200 &&
	! dmesg | grep -E '\] WARNING:|BUG:|Oops|rcu: INFO:|blocked for more than'
r=$?
[ $r = 0 ] || { st; sed 's/^/vtg-fi: /' /tmp/st; dmesg | tail -5 | sed 's/^/vtg-fi: /'; }
t $r loader_oom_reaped_sessions_go_on
rmmod vtrace_guest && gone
t $? unload_after_loader_died
