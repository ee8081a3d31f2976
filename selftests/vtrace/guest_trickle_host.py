#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# A host that reads one data port slowly: RATE bytes a second from QEMU's socket of vtrace.cpuK.
"""
Usage: guest_trickle_host.py SOCKET OUTFILE [--rate B] [--seconds S]

Connects to QEMU's server socket of a guest's data port (waiting up to 60 s
for QEMU to create it), then reads at most RATE bytes a second (16 KiB at
a time, default 196608: a 64 KiB virtio buffer of the guest is taken
within a third of a second), writing what it reads to OUTFILE, until QEMU
closes the socket or SECONDS pass.  Prints what it read.
"""
import argparse
import os
import socket
import time


def connect(path):
    for _ in range(600):
        if os.path.exists(path):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(path)
                return s
            except OSError:
                s.close()
        time.sleep(0.1)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("socket")
    ap.add_argument("out")
    ap.add_argument("--rate", type=int, default=196608)
    ap.add_argument("--seconds", type=float, default=600)
    a = ap.parse_args()
    s = connect(a.socket)
    if s is None:
        print("# trickle host: no socket %s" % a.socket)
        return 1
    chunk = min(16384, a.rate)
    n, start = 0, time.time()
    with open(a.out, "wb") as out:
        while time.time() < start + a.seconds:
            d = s.recv(chunk)
            if not d:
                break
            out.write(d)
            n += len(d)
            # never faster than RATE, whatever the time spent waiting before
            time.sleep(len(d) / a.rate)
    print("# trickle host: read %d bytes in %.0f s at most %d bytes a second" %
          (n, time.time() - start, a.rate))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
