#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# The host not running, for real: freeze one of L1's vCPUs from L0 on L1's request.
#
#   l0-freeze.py QPID OUTDIR
#
# Started by run-l1.sh --freeze-watch beside L1's QEMU (QPID: the process
# run-l1.sh started, QEMU itself or the "timeout" above it).  While QPID
# lives it looks every 0.1 s for OUTDIR/freeze-request, which a suite in L1
# writes (results folder, shared over 9p) as one line "CPU N BURST_US
# EVERY_US": L1's vCPU CPU, QEMU's MTTCG thread "CPU CPU/TCG", is stopped N
# times for BURST_US, one stop every EVERY_US, while L1's other vCPU runs
# on.  L1's TSC follows L0's (TCG reads the host's), so L1's trace shows a
# gap on that CPU: what an SMI or the hypervisor below does to a real host.
# What it did goes to OUTDIR/freeze-done, one line
# "l0-freeze: cpu CPU (tid T) stopped N times, ms: D1 D2 ... (every EVERY_US us),
# starting at ms: 0.0 S2 ..." (each stop's start after the first's, L0's
# monotonic clock, which runs with L1's TSC: what finds the stops in L1's
# trace) or "l0-freeze: FAIL why".  OUTDIR/freeze-watch (its pid) tells L1 that
# it listens.
#
# The thread is stopped with ptrace (PTRACE_SEIZE, PTRACE_INTERRUPT: that
# thread alone; SIGSTOP would stop the whole QEMU) and let go with
# PTRACE_DETACH.  A stopped thread is never left behind: the kernel detaches
# a tracer's tracees when it exits, killed or not.  Every wait is bounded.
import ctypes
import os
import sys
import time

PTRACE_DETACH = 17
PTRACE_SEIZE = 0x4206
PTRACE_INTERRUPT = 0x4207
WALL = 0x40000000               # __WALL: wait for a thread of another process too
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
libc.ptrace.restype = ctypes.c_long


def ptrace(req, tid):
    if libc.ptrace(req, tid, None, None) == -1:
        e = ctypes.get_errno()
        raise OSError(e, 'ptrace %#x of %d: %s' % (req, tid, os.strerror(e)))


def qemu_pids(qpid):
    """QPID and its descendants (QEMU under timeout)"""
    out, todo = [], [qpid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            with open('/proc/%d/task/%d/children' % (p, p)) as f:
                todo += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return out


def vcpu_tid(qpid, cpu):
    for p in qemu_pids(qpid):
        try:
            tids = os.listdir('/proc/%d/task' % p)
        except OSError:
            continue
        for t in tids:
            try:
                with open('/proc/%d/task/%s/comm' % (p, t)) as f:
                    if f.read().strip() == 'CPU %d/TCG' % cpu:
                        return int(t)
            except OSError:
                pass
    return None


def stop_once(tid, us):
    """stop @tid for @us: when it was seen stopped (monotonic s), and for how long (ms)"""
    ptrace(PTRACE_SEIZE, tid)
    try:
        ptrace(PTRACE_INTERRUPT, tid)
        for _ in range(1000):           # 1 s at most
            if os.waitpid(tid, os.WNOHANG | WALL)[0] == tid:
                break
            time.sleep(0.001)
        else:
            raise OSError('thread %d did not stop within 1 s' % tid)
        t0 = time.monotonic()
        time.sleep(us / 1e6)
        return t0, (time.monotonic() - t0) * 1e3
    finally:
        ptrace(PTRACE_DETACH, tid)


def freeze(qpid, req):
    cpu, n, us, every = (int(x) for x in req.split())
    tid = vcpu_tid(qpid, cpu)
    if tid is None:
        return "l0-freeze: FAIL no thread 'CPU %d/TCG' in QEMU (pid %d)" % (cpu, qpid)
    took = []
    start = time.monotonic()
    for i in range(n):
        time.sleep(max(0, start + i * every / 1e6 - time.monotonic()))
        took.append(stop_once(tid, us))
    return ('l0-freeze: cpu %d (tid %d) stopped %d times, ms: %s (every %d us), starting at '
            'ms: %s' % (cpu, tid, n, ' '.join('%.1f' % t[1] for t in took), every,
                        ' '.join('%.1f' % ((t[0] - took[0][0]) * 1e3) for t in took)))


def main():
    qpid, out = int(sys.argv[1]), sys.argv[2]
    req_path, done_path = out + '/freeze-request', out + '/freeze-done'
    with open(out + '/freeze-watch', 'w') as f:    # L1 knows someone listens
        f.write('%d\n' % os.getpid())
    while os.path.exists('/proc/%d' % qpid):
        try:
            with open(req_path) as f:
                req = f.read()
            os.unlink(req_path)
        except OSError:
            time.sleep(0.1)
            continue
        try:
            msg = freeze(qpid, req)
        except (OSError, ValueError) as e:
            msg = 'l0-freeze: FAIL %s' % e
        with open(done_path + '.tmp', 'w') as f:
            f.write(msg + '\n')
        os.rename(done_path + '.tmp', done_path)


main()
