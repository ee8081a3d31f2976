# SPDX-License-Identifier: GPL-2.0
# ticks.sh: the CPU time a QEMU uses, and the slow-boot rule the bed's boot
# watchdogs share (sourced by run-l1.sh for L1 and l2-watch.sh for L2).

threads() {	# threads PID [COMM]: the thread ids of PID's threads (named COMM, a glob)
	local t
	for t in /proc/"$1"/task/*; do
		[ -z "${2:-}" ] || [[ $(cat "$t/comm" 2>/dev/null) == $2 ]] || continue
		echo "${t##*/}"
	done
}

ticks() {	# ticks PID [COMM]: user + system clock ticks of PID's threads (named COMM, a glob)
	local t sum=0 f
	for t in $(threads "$@"); do
		# comm may hold spaces: count the fields from the end of "(comm)"
		read -ra f <<< "$(sed 's/^.*) //' "/proc/$1/task/$t/stat" 2>/dev/null)"
		[ ${#f[@]} -gt 12 ] || continue
		sum=$((sum + f[11] + f[12]))
	done
	echo $sum
}

# slow_boot SILENT BOUND MS: true when a console silent for SILENT seconds,
# past its watchdog's BOUND, belongs to a boot that is slow, not hung: its
# QEMU used MS ms of CPU meanwhile, 5 % of a CPU or more (a hung boot's
# lost wake-ups leave its CPUs idle), and the silence is under 3 x BOUND.
# A loaded machine makes a boot that slow: firmware and the kernel's first
# steps took 144 s in a nested L2 at load average 10, and L1's kernel
# decompressor alone over 20 s at load average 12 to 15 (2026-12-02).
slow_boot() {
	[ "$1" -lt $((3 * $2)) ] && [ "$3" -ge $(($1 * 50)) ]
}
