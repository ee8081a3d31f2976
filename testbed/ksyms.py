# SPDX-License-Identifier: GPL-2.0
"""Names for the kernel addresses of a bed's VM, for testbed/l1-cpus.py (L1's
CPUs) and testbed/l2-stack.py (an L2 guest's vCPUs).

A kernel and its modules are loaded at random addresses (KASLR).  The VM's
init writes this boot's layout into its heartbeat log: "text ADDR" (where
_text is) and "module NAME ADDR SIZE" per module (testbed/init-l1.sh,
testbed/init-l2.sh).  KALLSYMS is a copy of /proc/kallsyms of the same
kernel, taken by L1's init after the module lines of that boot
(build/testbed/l1-kallsyms-KVER); its symbols are moved by the difference.
Modules missing from the copy (vtrace's own, rebuilt often; a guest's that
L1 did not load) are named without their functions.
"""
import bisect


def layout(lines):
    """{"": (_text address, 0), NAME: (module address, size)} from the
    "text ADDR" and "module NAME ADDR SIZE" lines, the last line of a
    module or of an address counting"""
    where = {}
    for line in lines:
        p = line.split()
        if len(p) == 2 and p[0] == "text":
            where[""] = (int(p[1], 16), 0)
        elif len(p) == 4 and p[0] == "module":
            # a later line wins: a module loaded again, or another one at
            # the address of a module unloaded since
            addr = int(p[2], 16)
            where = {m: a for m, a in where.items() if m == "" or a[0] != addr}
            where[p[1]] = (addr, int(p[3]))
    return where


def load_symbols(kallsyms, now):
    """(addresses, names) of the copy's text symbols moved to the layout
    NOW; modules missing from the copy (or ours) as one name each"""
    with open(kallsyms) as f:
        lines = f.read().splitlines()
    then = layout(l for l in lines if l.startswith("module "))
    then = {m: a for m, a in then.items() if not m.startswith("vtrace_")}
    out = []
    for line in lines:
        p = line.split()
        if len(p) < 3 or p[1] not in ("t", "T"):
            continue
        mod = p[3].strip("[]") if len(p) > 3 else ""
        addr = int(p[0], 16)
        if mod == "" and p[2] == "_text":
            then[""] = (addr, 0)
        out.append((addr, p[2], mod))
    syms = [(a - then[m][0] + now[m][0], n + ("[%s]" % m if m else ""))
            for a, n, m in out if m in then and m in now]
    for m, (addr, size) in now.items():
        if m and m not in then:
            syms += [(addr, "[%s]" % m), (addr + size, "(after [%s])" % m)]
    syms.sort()
    return [a for a, _ in syms], [n for _, n in syms]


def symbolize(syms, addr, outside="?"):
    """"NAME+0xOFF" of ADDR, OUTSIDE when it is in no text SYMS know"""
    if not syms or not syms[0]:
        return "?"
    addrs, names = syms
    i = bisect.bisect_right(addrs, addr) - 1
    if i < 0 or addr - addrs[i] > 0x10000 or names[i].startswith("(after"):
        return outside
    return "%s+0x%x" % (names[i], addr - addrs[i])
