#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A stand-in for vtrace_guest's control port, for testing "vtrace agent" without a VM.

Listens on a unix socket like QEMU's -chardev socket,server=on; on connect
it says HELLO, then answers every host message with an ACK carrying its seq
and type (HELLO with a HELLO, STATUS_REQ with a STATUS first, STOP with an EOS
first); START is answered after 0.3 s.  With a third argument "silent" it
accepts the connection and answers nothing (a guest without vtrace_guest).  It logs
"TYPE seq=N t=MONOTONIC_NS" for each command it gets to LOG, and exits
after one client has come and gone.
"""
import os
import socket
import struct
import sys
import time

MAGIC = 0x43525456
HDR = "<IHHIIQ"          # magic version type flags len seq: 24 bytes


def msg(mtype, seq, payload=b""):
    return struct.pack(HDR, MAGIC, 1, mtype, 0, len(payload), seq) + payload


def status(state, lost):
    """STATUS/EOS payload: one CPU, @lost events lost by its ring"""
    return (struct.pack("<IIIIQQ", state, 1, 1, 0, 1, 0) +
            struct.pack("<II8Q", 0, 3, 1, 4096, 10, 0, 0, 0, lost, 0))


def main():
    path, log = sys.argv[1], sys.argv[2]
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    open(path + ".ready", "w").close()
    conn, _ = srv.accept()
    out = open(log, "w")
    if len(sys.argv) > 3 and sys.argv[3] == "silent":
        while conn.recv(65536):
            pass
        conn.close()
        os.unlink(path)
        return
    seq = 1
    conn.sendall(msg(1, seq, struct.pack("<HHIQ", 1, 1, 0, 0)))
    buf = b""
    while True:
        data = conn.recv(65536)
        if not data:
            break
        buf += data
        while len(buf) >= 24:
            magic, ver, mtype, flags, ln, hseq = struct.unpack_from(HDR, buf)
            if len(buf) < 24 + ln:
                break
            buf = buf[24 + ln:]
            out.write("%d seq=%d t=%d\n" % (mtype, hseq, time.monotonic_ns()))
            out.flush()
            if mtype == 16:
                # a slow START: a host that waited for each reply before
                # sending to the next guest would spread the STARTs out
                time.sleep(0.3)
            if mtype == 1:
                seq += 1
                conn.sendall(msg(1, seq, struct.pack("<HHIQ", 1, 1, 0, 0)))
            if mtype == 20:
                seq += 1
                conn.sendall(msg(32, seq, status(1, 3)))
            if mtype == 17:
                seq += 1
                conn.sendall(msg(36, seq, status(0, 7)))
            seq += 1
            conn.sendall(msg(2, seq, struct.pack("<QHHI", hseq, mtype, 0, 0)))
    conn.close()
    os.unlink(path)


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, ConnectionResetError):
        pass    # the host went away mid-reply
