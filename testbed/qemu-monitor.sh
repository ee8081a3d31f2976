# SPDX-License-Identifier: GPL-2.0
# Sourced by testbed/lib.sh and testbed/l2-watch.sh: talking to an L2 QEMU's
# human monitor.

vtrace_hmp=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/hmp.py

# l2_monitor SOCKET COMMAND...: human-monitor commands to an L2's QEMU
# (l2_start --monitor: /run/vtrace-NAME.mon), in one session; prints QEMU's
# answers, what came before each next "(qemu) " prompt (at most 10 s in
# all; testbed/hmp.py).  Fixed sleeps of 1.5 s a command, before, made the
# host suite's pauses take 12 s.
l2_monitor() {
	python3 "$vtrace_hmp" "$@"
}
