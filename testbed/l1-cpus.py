#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where are L1's CPUs?  Asked of a stalled L1 before run-l1.sh kills it.

    l1-cpus.py QMP_SOCKET KALLSYMS HEARTBEAT_LOG [SAMPLES]

Connects to L1's QEMU (QMP, a unix socket), reads every vCPU's registers
SAMPLES times (default 5) a second apart (the monitor's "info registers -a")
and prints, per sample and CPU, RIP with the L1 kernel symbol it falls in,
the privilege level, CR3 (the page-table root: a vCPU in guest mode shows
the nested guest's) and whether the CPU is halted, named with the heartbeat
log's layout and KALLSYMS (testbed/ksyms.py).  A RIP outside L1's kernel
is an L2 guest's (a vCPU in guest mode shows the nested guest's registers
under TCG) or user space.
"""
import json
import re
import socket
import sys
import time

import ksyms


class Qmp:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(10)
        self.sock.connect(path)
        self.buf = b""
        self.reply()  # the greeting
        self.call("qmp_capabilities")

    def reply(self):
        while True:
            while b"\n" not in self.buf:
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise OSError("QMP connection closed")
                self.buf += chunk
            line, self.buf = self.buf.split(b"\n", 1)
            msg = json.loads(line)
            if "event" not in msg:
                return msg

    def call(self, cmd, **args):
        self.sock.sendall(json.dumps({"execute": cmd, "arguments": args}).encode() + b"\n")
        msg = self.reply()
        if "error" in msg:
            raise OSError(msg["error"].get("desc", "QMP error"))
        return msg["return"]


def symbolize(syms, rip):
    return ksyms.symbolize(syms, rip, "(not L1's kernel: an L2 guest or user space)")


def main():
    if len(sys.argv) < 4:
        print(__doc__.strip().split("\n")[2].strip(), file=sys.stderr)
        return 2
    sockpath, kallsyms, heartbeat = sys.argv[1:4]
    samples = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    try:
        with open(heartbeat) as f:
            now = ksyms.layout(f.read().splitlines())
        syms = ksyms.load_symbols(kallsyms, now)
    except (OSError, ValueError) as e:
        print("l1-cpus: no symbols (%s): %s" % (kallsyms, e))
        syms = None
    seen = {}
    try:
        qmp = Qmp(sockpath)
        for n in range(samples):
            regs = qmp.call("human-monitor-command", **{"command-line": "info registers -a"})
            regs = regs.replace("\r", "")
            for cpu, block in re.findall(r"CPU#(\d+)\n(.*?)(?=CPU#|\Z)", regs, re.S):
                rip = re.search(r"RIP=([0-9a-f]+)", block)
                cpl = re.search(r"CPL=(\d)", block)
                hlt = re.search(r"HLT=(\d)", block)
                cr3 = re.search(r"CR3=([0-9a-f]+)", block)
                rip = int(rip.group(1), 16) if rip else 0
                halted = bool(hlt and hlt.group(1) == "1")
                where = symbolize(syms, rip).split("+")[0]
                seen.setdefault(cpu, []).append(where + (" halted" if halted else ""))
                print("sample %d cpu %s: rip %016x %s cpl %s cr3 %s%s" % (
                    n, cpu, rip, symbolize(syms, rip), cpl.group(1) if cpl else "?",
                    cr3.group(1) if cr3 else "?", " halted" if halted else ""))
            if n + 1 < samples:
                time.sleep(1)
    except (OSError, ValueError) as e:
        print("l1-cpus: cannot ask L1's QEMU (%s): %s" % (sockpath, e))
        return 1
    # one line for the finding: each CPU's places, most seen first
    parts = []
    for cpu, places in sorted(seen.items()):
        counts = sorted({p: places.count(p) for p in places}.items(), key=lambda x: -x[1])
        parts.append("cpu %s %s" % (cpu, ", ".join("%s (%d/%d)" % (p, c, len(places))
                                                    for p, c in counts)))
    print("summary: " + "; ".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
