#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where is a spinning L2 guest?  Asked by testbed/l2-watch.sh before it
kills a guest whose heartbeat stopped while its vCPUs ran ("l2 stuck busy"),
which says nothing of its own when it spins with interrupts off.

    l2-stack.py MONITOR_SOCKET KALLSYMS HEARTBEAT_LOG [WORDS]
    l2-stack.py --name KALLSYMS HEARTBEAT_LOG ADDR...

Reads every vCPU's registers from the guest's QEMU (its human monitor,
testbed/hmp.py) and WORDS (default 64) 8-byte words of each vCPU's stack
from its RSP on, and prints them, then per vCPU the kernel function RIP is
in and the kernel text addresses found on the stack, innermost first (a
scan, as the kernel's own "? " frames: a stale word names a function too).
The guest's init writes its kernel release and this boot's layout into the
heartbeat log ("kernel KVER", "text ADDR", "module NAME ADDR SIZE":
testbed/init-l2.sh); the names come from KALLSYMS, the copy L1's init keeps
of L1's /proc/kallsyms (testbed/ksyms.py), when L1 runs the same kernel.
The last line, "summary: ...", is the watchdog's finding.  --name: only
name the guest's addresses ADDR (hex), e.g. the RIP of an exit sample,
from a guest's heartbeat log kept beside its console.
"""
import os
import re
import sys

import hmp
import ksyms


def symbols(kallsyms, heartbeat):
    """(syms, why): the guest's symbols, or None and why there are none"""
    try:
        with open(heartbeat, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        return None, "no heartbeat log: %s" % e
    kver = [l.split()[1] for l in lines if l.startswith("kernel ") and len(l.split()) == 2]
    now = ksyms.layout(lines)
    if not kver or "" not in now:
        return None, "the guest wrote no layout into %s" % heartbeat
    # the copy's kernel: in its name (l1-kallsyms-KVER), else this one's
    name = os.path.basename(kallsyms)
    l1 = name[len("l1-kallsyms-"):] if name.startswith("l1-kallsyms-") else os.uname().release
    if kver[-1] != l1:
        return None, "the guest runs %s, %s is of %s" % (kver[-1], kallsyms, l1)
    try:
        return ksyms.load_symbols(kallsyms, now), None
    except (OSError, ValueError, KeyError) as e:
        return None, "no symbols in %s: %s" % (kallsyms, e)


def main():
    if len(sys.argv) < 4:
        print(__doc__.strip().split("\n")[4].strip(), file=sys.stderr)
        return 2
    if sys.argv[1] == "--name":
        syms, why = symbols(sys.argv[2], sys.argv[3])
        if why:
            print("l2-stack: %s" % why, file=sys.stderr)
            return 1
        for a in sys.argv[4:]:
            print("%s %s" % (a, ksyms.symbolize(syms, int(a, 16), "?")))
        return 0
    sockpath, kallsyms, heartbeat = sys.argv[1:4]
    words = int(sys.argv[4]) if len(sys.argv) > 4 else 64
    syms, why = symbols(kallsyms, heartbeat)
    if why:
        print("l2-stack: addresses only: %s" % why)
    try:
        mon = hmp.Hmp(sockpath)
        regs = mon.cmd("info registers -a")
        print(regs)
        cpus = []
        for cpu, block in re.findall(r"CPU#(\d+)\n(.*?)(?=CPU#|\Z)", regs, re.S):
            r = dict(re.findall(r"\b(RIP|RSP|CPL|HLT)=([0-9a-f]+)", block))
            if "RIP" not in r or "RSP" not in r:
                continue
            mon.cmd("cpu %s" % cpu)
            stack = mon.cmd("x /%dgx 0x%s" % (words, r["RSP"]))
            print("CPU#%s stack from RSP=%s:\n%s" % (cpu, r["RSP"], stack))
            vals = [int(v, 16) for l in stack.split("\n") if ":" in l
                    for v in re.findall(r"0x([0-9a-f]{16})", l.split(":", 1)[1])]
            cpus.append((cpu, int(r["RIP"], 16), r.get("CPL", "?"), r.get("HLT") == "1", vals))
    except (OSError, ValueError) as e:
        print("l2-stack: cannot ask the guest's QEMU (%s): %s" % (sockpath, e))
        return 1
    parts = []
    for cpu, rip, cpl, halted, vals in cpus:
        where = ksyms.symbolize(syms, rip, "0x%x" % rip) if syms else "0x%x" % rip
        trail = []
        for v in vals:
            s = ksyms.symbolize(syms, v, None) if syms else None
            if s and (not trail or trail[-1] != s):
                trail.append(s)
        print("cpu %s: rip %s cpl %s%s; on its stack: %s" % (
            cpu, where, cpl, " halted" if halted else "", " < ".join(trail) or "no kernel text"))
        parts.append("cpu %s %s%s (stack: %s)" % (cpu, where, " halted" if halted else "",
                                                   ", ".join(trail[:6]) or "-"))
    print("summary: " + "; ".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
