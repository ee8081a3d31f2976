#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# bench/rss.py: run a command, print its wall and CPU seconds, peak RSS and peak anonymous RSS.
#
#   bench/rss.py OUT CMD...     (CMD's stdout and stderr as given; OUT gets one line:
#                                "wall cpu peak_rss_kib peak_anon_kib")
#
# Peak RSS is the kernel's own (wait4's ru_maxrss: file pages mapped and touched count).
# The kernel keeps no peak of the anonymous part alone (heap, stacks: what the program
# allocated), so it is sampled: RssAnon of /proc/PID/status every 2 ms, the largest
# value seen (a peak shorter than that can be missed; the merges' peaks last seconds).
import os
import sys
import time


def anon_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def main():
    out, cmd = sys.argv[1], sys.argv[2:]
    start = time.monotonic()
    # posix_spawn (vfork): no copy of this Python to sample before the exec
    pid = os.posix_spawnp(cmd[0], cmd, os.environ)
    peak = 0
    while True:
        done, status, ru = os.wait4(pid, os.WNOHANG)
        if done:
            break
        peak = max(peak, anon_kib(pid))
        time.sleep(0.002)
    wall = time.monotonic() - start
    with open(out, "w") as f:
        f.write(f"{wall:.3f} {ru.ru_utime + ru.ru_stime:.3f} {ru.ru_maxrss} {peak}\n")
    sys.exit(os.waitstatus_to_exitcode(status))


main()
