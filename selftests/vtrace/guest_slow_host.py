#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# A host that reads vtrace.ctl slowly: it sets buffer_size_kb (the guest's cue), then reads 32 KiB a second.
"""
Usage: guest_slow_host.py SOCKET OUTFILE SECONDS

Connects to QEMU's socket of the guest's vtrace.ctl, says HELLO, sends
SET_BUFFER_SIZE 1536 KiB (the guest script waits for that value), reads
until its ACK, then reads 1 KiB every 31 ms (about 32 KiB a second: one
32 KiB chunk of the guest's a second, just inside port_timeout_ms) for
SECONDS, and closes.  Prints what it got; exit status 1 if the guest did
not answer the HELLO and SET_BUFFER_SIZE.
"""
import socket
import struct
import sys
import time

from ctl_client import ACK, ERROR, HELLO, SET_BUFFER_SIZE, Guest


def main():
    g = Guest(sys.argv[1], sys.argv[2])
    secs = float(sys.argv[3])
    m, _ = g.msg(HELLO, struct.pack("<HHIQ", 1, 1, 0, 0))
    g.send(m)
    hello = g.wait_for(lambda t, q, p: t == HELLO, 20)
    for _ in range(20):                 # an ERROR -EAGAIN (rate limit): again a second later
        m, s = g.msg(SET_BUFFER_SIZE, struct.pack("<II", 1536, 0))
        g.send(m)
        ack = g.wait_for(lambda t, q, p: t in (ACK, ERROR) and
                         struct.unpack_from("<Q", p)[0] == s, 20)
        if ack is None or ack[0] == ACK:
            break
        ack = None
        time.sleep(1)
    print("# slow host: HELLO %s, SET_BUFFER_SIZE ACK %s" % (hello is not None, ack is not None))
    n, start = 0, time.time()
    g.s.settimeout(0.01)
    while time.time() < start + secs:
        try:
            d = g.s.recv(1024)
            if not d:
                break
            g.out.write(d)
            n += len(d)
        except socket.timeout:
            pass
        time.sleep(0.031)
    print("# slow host: read %d bytes in %.0f s" % (n, time.time() - start))
    g.s.close()
    return 0 if hello is not None and ack is not None else 1


if __name__ == "__main__":
    sys.exit(main())
