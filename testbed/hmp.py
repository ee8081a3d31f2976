#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""An L2 QEMU's human monitor, over its unix socket (testbed/lib.sh's
l2_start --monitor, testbed/l2-watch.sh's own).

    hmp.py SOCKET COMMAND...

runs the commands in one session (so that "cpu N" holds for the next) and
prints each answer: what came before the next "(qemu) " prompt, at most 10 s
in all, without the monitor's echo of the command.
"""
import socket
import sys
import time


class Hmp:
    def __init__(self, path, secs=10):
        self.end = time.monotonic() + secs
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.upto_prompt()  # the banner

    def upto_prompt(self):
        got = b""
        while not got.endswith(b"(qemu) ") and time.monotonic() < self.end:
            self.sock.settimeout(max(self.end - time.monotonic(), 0.01))
            try:
                b = self.sock.recv(65536)
            except socket.timeout:
                break
            if not b:
                break
            got += b
        return got.decode(errors="replace").removesuffix("(qemu) ")

    def cmd(self, line):
        self.sock.sendall(line.encode() + b"\n")
        # the echo, drawn with cursor codes, is the answer's first line
        out = self.upto_prompt().replace("\r", "")
        return "\n".join(l for l in out.split("\n") if "\x1b" not in l)


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip().split("\n")[3].strip(), file=sys.stderr)
        return 2
    mon = Hmp(sys.argv[1])
    for line in sys.argv[2:]:
        print(mon.cmd(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
