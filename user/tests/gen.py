#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# gen.py: write host + guest vtrace dumps with known ground truth, and check merges.
#
#   gen.py make OUT SCENARIO [--events N] [--seed S] [--offset-events [--offset-events-from T]
#              [--lose-at FRAC]]
#   gen.py check OUT < vtrace-merge --format jsonl output   (KTAP on stdout)
#   gen.py ctl OUT/DIR [--omit KIND] ...    (rewrite a dump's ctl, for bad-input tests)
#
# Pages follow the kernel's ring-buffer layout (Debian 6.1 header_page in
# fixtures/): u64 page time stamp, u64 commit (bit 31 missed events, bit 30
# missed count stored after the data), then events: a u32 header of 5-bit
# type_len + 27-bit time delta (type 29 padding, 30 time extend, 31 absolute
# time stamp), data in 4-byte words.  Metadata are the real format files of
# fixtures/debian-6.1.
#
# The truth: every event gets a host TSC h first; a guest event's raw time
# stamp is KVM's guest_tsc = ((h * mult) >> frac) + offset with the offset
# record in force at h on its vCPU.  OUT/truth.jsonl lists the events in the
# order vtrace-merge must print them, with the exact host TSC (the first
# host cycle at which the guest TSC read that value).
import argparse
import json
import os
import random
import re
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, 'fixtures', 'debian-6.1')
PAGE = 4096
# The guests' ring-buffer unit: their sub-buffer size (make --guest-page-size)
GUEST_PAGE = PAGE
HDR = 16
MAGIC = 0x43525456
FILLER = b'vtrace-flush-filler'
M64 = (1 << 64) - 1

# message types and META_FILE kinds of include/uapi/linux/vtrace.h
HELLO, META_INFO, META_FILE, STARTED, EOS = 1, 33, 34, 35, 36
K_HEADER_PAGE, K_HEADER_EVENT, K_EVENT, K_FTRACE, K_CMDLINES, K_KALLSYMS, K_PRINTK = range(1, 8)

EVENTS = {  # name -> (system, format fixture)
    'print': ('ftrace', 'ftrace/print.format'),
    'function': ('ftrace', 'ftrace/function.format'),
    'kernel_stack': ('ftrace', 'ftrace/kernel_stack.format'),
    'sched_switch': ('sched', 'sched/sched_switch.format'),
    'sched_wakeup': ('sched', 'sched/sched_wakeup.format'),
    'kvm_write_tsc_offset': ('kvm', 'kvm/kvm_write_tsc_offset.format'),
    'tsc_offset': ('vtrace_host', 'vtrace_host/tsc_offset.format'),
    'kvm_entry': ('kvm', 'kvm/kvm_entry.format'),
    'kvm_exit': ('kvm', 'kvm/kvm_exit.format'),
    'hrtimer_start': ('timer', 'timer/hrtimer_start.format'),
    'hrtimer_expire_entry': ('timer', 'timer/hrtimer_expire_entry.format'),
    'local_timer_entry': ('irq_vectors', 'irq_vectors/local_timer_entry.format'),
}


def fixture(path):
    with open(os.path.join(FIX, path), 'rb') as f:
        return f.read()


def event_id(name):
    for line in fixture(EVENTS[name][1]).decode().splitlines():
        if line.startswith('ID:'):
            return int(line.split()[1])
    raise ValueError(name)


# scenario-only symbols (explain_timer: KVM's apic_timer_fn, a module's text)
EXTRA_SYMS = []
# the guests' kallsyms sent with every address 0, as vtrace_guest sends them to a reader
# the kernel does not show addresses (explain_hidden_syms)
GUEST_SYMS_HIDDEN = False
APIC_TIMER_FN = 0xffffffffc0a1c2d0


def kallsyms():
    syms = list(EXTRA_SYMS)
    for line in fixture('kallsyms').decode().splitlines():
        addr, _, name = line.split()[:3]
        syms.append((int(addr, 16), name))
    return syms


# ---- event payloads (common header: u16 type, u8 flags, u8 preempt, i32 pid)

def common(name, pid):
    return struct.pack('<HBBi', event_id(name), 1, 0, pid)


def ev_print(pid, text, ip=0xffffffffa4e00000):
    return common('print', pid) + struct.pack('<Q', ip) + text + b'\n\0'


def ev_function(pid, ip, parent):
    return common('function', pid) + struct.pack('<QQ', ip, parent)


def ev_switch(prev, prev_pid, nxt, nxt_pid, prev_prio=120, nxt_prio=120):
    return (common('sched_switch', prev_pid) + prev.ljust(16, b'\0') +
            struct.pack('<iiq', prev_pid, prev_prio, 1) + nxt.ljust(16, b'\0') +
            struct.pack('<ii', nxt_pid, nxt_prio))


def ev_kvm_entry(tid, vcpu):
    return common('kvm_entry', tid) + struct.pack('<IIQ?7x', vcpu, 0, 0xffffffff81000000, False)


def ev_kvm_exit(tid, vcpu, reason=1, isa=0):
    return common('kvm_exit', tid) + struct.pack('<IIQIIQQIII4x', reason, 0, 0xffffffff81000000,
                                                 isa, 0, 0, 0, 0, 0, vcpu)


def ev_tsc_offset(t, pid, vm, vcpu_id, idx, prev, offset, mult, frac, kind, snap=None, tid=None):
    """vtrace_host:tsc_offset (kmod/host/vtrace_host_trace.h): 78 bytes, or with @snap
    = (since, tsc_khz) the 90 bytes of a vtrace_host that snapshots at the enable
    (fixtures/debian-6.1/vtrace_host/tsc_offset-snap.format); written by thread @tid
    (default: @pid)"""
    kinds = {'write': 0, 'snapshot': 1, 'multiplier': 2}
    tid = pid if tid is None else tid
    if snap:
        return common('tsc_offset', tid) + struct.pack(
            '<QqqQQIiIiBB', t, s64(prev), s64(offset), mult, snap[0], snap[1], pid, vcpu_id,
            idx, frac, kinds[kind]) + vm.encode().ljust(24, b'\0')
    return common('tsc_offset', tid) + struct.pack('<QqqQiIiBB', t, s64(prev), s64(offset), mult,
                                                   pid, vcpu_id, idx, frac, kinds[kind]) + \
        vm.encode().ljust(24, b'\0')


def ev_wakeup(pid, comm, target_cpu, waker=0, prio=120):
    return common('sched_wakeup', waker) + comm.ljust(16, b'\0') + struct.pack('<iii', pid, prio,
                                                                           target_cpu)


def ev_hrtimer_start(pid, timer, func, expires):
    return common('hrtimer_start', pid) + struct.pack('<QQqqIB', timer, func, expires, expires,
                                                      0, 1)


def ev_hrtimer_entry(pid, timer, now, func):
    return common('hrtimer_expire_entry', pid) + struct.pack('<QqQ', timer, now, func)


def ev_tick(pid):
    return common('local_timer_entry', pid) + struct.pack('<i', 0xec)


def sym(name):
    return [a for a, n in kallsyms() if n == name][0]


# ---- ring-buffer pages

def rb_event(delta, data):
    """One data event (delta < 2^27); returns bytes."""
    n = len(data)
    if n <= 28 * 4:
        words = (n + 3) // 4
        return struct.pack('<I', words | (delta << 5)) + data.ljust(words * 4, b'\0')
    length = (n + 3) // 4 * 4
    return struct.pack('<II', 0 | (delta << 5), length + 4) + data.ljust(length, b'\0')


def rb_extend(delta, kind=30):
    return struct.pack('<II', kind | ((delta & ((1 << 27) - 1)) << 5), delta >> 27)


class PageWriter:
    """Packs (ts, payload) events into pages; ts must not decrease except via abs."""

    def __init__(self, abs_every=0, page=PAGE):
        self.page = page
        self.pages = []
        self.body = b''
        self.page_ts = None
        self.last = None
        self.missed = 0
        self.abs_every = abs_every
        self.count = 0
        self.events_in_page = 0
        self.page_events = []

    def _flush(self):
        if self.page_ts is None:
            return
        body = self.body
        commit = len(body)
        if self.missed:
            # as the kernel writes it: RB_MISSED_EVENTS is an int (1 << 31)
            # added to the 64-bit commit, so bits 32-63 are set too
            flags = 0xffffffff80000000 | ((1 << 30) if self.missed > 0 else 0)
            if self.missed > 0:
                body = body + struct.pack('<Q', self.missed)
        else:
            flags = 0
        room = self.page - HDR - len(body)
        page = struct.pack('<QQ', self.page_ts, commit | flags) + body
        if room >= 8 and not self.missed:
            # padding event up to the end, inside the commit like the kernel's
            pad = struct.pack('<II', 29, room - 4)
            page = struct.pack('<QQ', self.page_ts, commit + room) + body + pad
        page = page.ljust(self.page, b'\0')
        self.pages.append(page)
        self.page_events.append(self.events_in_page)
        self.body, self.page_ts, self.missed, self.events_in_page = b'', None, 0, 0

    def add(self, ts, data, missed_before=0):
        if missed_before and self.page_ts is not None:
            self._flush()
        for attempt in (0, 1):
            if self.page_ts is None:
                self.page_ts, self.last = ts, ts
                self.missed = missed_before
                missed_before = 0
            self.count += 1
            delta = ts - self.last
            chunk = b''
            if delta < 0 or (self.abs_every and self.count % self.abs_every == 0):
                chunk = rb_extend(ts, 31)
                delta = 0
            elif delta >= (1 << 27):
                chunk = rb_extend(delta)
                delta = 0
            chunk += rb_event(delta, data)
            limit = self.page - HDR - (8 if self.missed > 0 else 0)
            if len(self.body) + len(chunk) <= limit:
                self.body += chunk
                self.last = ts
                self.events_in_page += 1
                return
            self.count -= 1
            if missed_before:
                raise ValueError('missed events on a full page')
            self._flush()
        raise ValueError('event does not fit in a page')

    def finish(self):
        self._flush()
        return self.pages


# ---- KVM's TSC arithmetic (the truth)

def guest_of(iv, h):
    return (((h * iv['mult']) >> iv['frac']) + iv['offset']) & M64


def host_of(iv, g):
    x = (g - iv['offset']) & M64
    return -((-(x << iv['frac'])) // iv['mult'])


class VCpu:
    """One vCPU's offset history: list of intervals, oldest first."""

    def __init__(self, vcpu_id, idx, mult, frac):
        self.vcpu_id, self.idx, self.mult, self.frac = vcpu_id, idx, mult, frac
        self.iv = []
        self.writer = None      # (host cpu, tid) of its thread, where the host runs it

    def write(self, t, offset, kind='write', mult=None, hidden=False):
        if mult:
            self.mult = mult
        self.iv.append({'t': t, 'offset': offset & M64, 'mult': self.mult,
                        'frac': self.frac, 'kind': kind, 'hidden': hidden})

    def at(self, h):
        cur = self.iv[0]    # before the first record: its offset (--assume-constant-offset)
        for iv in self.iv:
            if iv['t'] <= h:
                cur = iv
        return cur

    def guest_now(self, h):
        return guest_of(self.at(h), h)


class Machine:
    def __init__(self, name, ncpu, apic_ids=None, pid=None, khz=2000000):
        self.name, self.ncpu, self.pid, self.khz = name, ncpu, pid, khz
        self.apic = apic_ids or list(range(ncpu))
        self.events = [[] for _ in range(ncpu)]   # (host_tsc, payload, text, missed)
        self.vcpus = []
        self.eos_extra_lost = [0] * ncpu
        self.fillers = [0] * ncpu


def s64(v):
    v &= M64
    return v - (1 << 64) if v >> 63 else v


# ---- scenarios: each fills machines with per-CPU host times + payloads

def add_markers(rng, m, cpu, t0, t1, n, runs=None, pid=1000):
    """n print events on [t0, t1) (within the run windows if given)."""
    times = sorted(rng.randrange(t0, t1) for _ in range(n))
    if runs:
        times = sorted(rng.choice([rng.randrange(a, b) for a, b in runs]) for _ in range(n))
    out = []
    for i, h in enumerate(times):
        text = ('%s-c%d-%d' % (m.name, cpu, len(m.events[cpu]) + i)).encode()
        out.append((h, ev_print(pid + cpu, text), text.decode(), 0))
    m.events[cpu].extend(out)


def scenario(name, rng, nev):
    host = Machine('host', 2, khz=2500000)
    machines = [host]
    base = 10_000_000_000
    span = 2_000_000_000
    for c in range(2):
        add_markers(rng, host, c, base, base + span, nev)

    def guest(gname, ncpu, apics, pid, mult=1 << 32, frac=32):
        g = Machine(gname, ncpu, apics, pid)
        for i, a in enumerate(apics):
            v = VCpu(a, i, mult, frac)
            t0 = base - 1_000_000_000
            v.write(t0, -(t0 * mult >> frac) + 12345 * (i + 1))
            g.vcpus.append(v)
        machines.append(g)
        return g

    def timer_wake(ev, fire, timer, wake, pid=500, cpu=1):
        """cyclictest's timer expires at @fire, wakes the task, the task runs: its time"""
        ev.append((fire, ev_hrtimer_entry(0, timer, mono(fire), wake), '', 0))
        ev.append((fire + tsc(5_000), ev_wakeup(pid, b'cyclictest', cpu), '', 0))
        run = fire + tsc(12_000)
        ev.append((run, ev_switch(b'swapper/%d' % cpu, 0, b'cyclictest', pid), '', 0))
        return run

    def task_runs(ev, run, hog_from=None):
        """cyclictest (pid 500) runs on guest cpu 1 at @run: from idle, or, with @hog_from,
        after the guest task rt-hog (600) that ran from @hog_from"""
        if hog_from is None:
            ev.append((run, ev_switch(b'swapper/1', 0, b'cyclictest', 500), '', 0))
            return
        ev.append((hog_from, ev_switch(b'swapper/1', 0, b'rt-hog', 600), '', 0))
        ev.append((run, ev_switch(b'rt-hog', 600, b'cyclictest', 500), '', 0))

    # the late wake-up scenarios: the host's TSC from ns, the guest's CLOCK_MONOTONIC
    # from the host's TSC, cyclictest's timer
    khz = host.khz
    tsc = lambda ns: ns * khz // 1000000
    ms = lambda n: tsc(int(n * 1_000_000))
    mono = lambda h: h * 1000000 // khz - 3_000_000_000
    wake, timer = sym('hrtimer_wakeup'), 0xff73fcb84039bc60

    def timer_sleep(ev, t):
        """cyclictest (pid 500, guest cpu 1) arms its timer 1 ms ahead at @t and sleeps:
        the timer's due time"""
        ev.append((t, ev_hrtimer_start(500, timer, wake, mono(t) + 1_000_000), '', 0))
        ev.append((t + 2, ev_switch(b'cyclictest', 500, b'swapper/1', 0), '', 0))
        return t + tsc(1_000_000)

    def explain_guest():
        """guest g1, its vCPUs 0 and 1 host threads 899 and 900 running on host cpus 0 and 1
        from the start, the host recording only what the scenario adds"""
        host.events = [[] for _ in range(2)]
        g = guest('g1', 2, [0, 1], 4252)
        host.events[1].append((base, ev_switch(b'swapper/1', 0, b'CPU 1/KVM', 900), '', 0))
        host.events[0].append((base, ev_switch(b'swapper/0', 0, b'CPU 0/KVM', 899), '', 0))
        return g

    if name == 'basic':
        g = guest('g1', 2, [0, 1], 4242)
        for c in range(2):
            add_markers(rng, g, c, base, base + span, nev)
    elif name == 'apic':
        g = guest('g1', 3, [4, 0, 9], 4243)
        for c in range(3):
            add_markers(rng, g, c, base, base + span, nev)
    elif name == 'jump':
        # vCPU 1 (APIC 2) writes IA32_TSC + 3e9 in the middle, vCPU 0 does not
        g = guest('g1', 2, [0, 2], 4244)
        v = g.vcpus[1]
        t = base + span // 2
        v.write(t, v.at(t)['offset'] + 3_000_000_000)
        for c in range(2):
            add_markers(rng, g, c, base, base + span, nev)
    elif name in ('unstable', 'unstable_sched'):
        # KVM on an unstable host: at each vCPU load the offset is recomputed so
        # the guest TSC continues where it stopped (offset steps backwards);
        # unstable_sched: a task "spin" (pid 600 + CPU) runs in each run window
        # too, switched in 1 us after it starts and out 1 us before it ends
        g = guest('g1', 2, [0, 1], 4245)
        for c in range(2):
            v = g.vcpus[c]
            runs, t = [], base
            while t < base + span:
                run = rng.randrange(2_000_000, 20_000_000)
                gap = rng.randrange(1_000_000, 30_000_000)
                runs.append((t + 1, t + run))
                last_guest = v.guest_now(t + run)
                t += run + gap
                v.write(t, last_guest - guest_of({'mult': v.mult, 'frac': v.frac,
                                                  'offset': 0}, t))
            add_markers(rng, g, c, 0, 1, nev, runs=runs)
            for a, b in runs if name == 'unstable_sched' else []:
                idle = b'swapper/%d' % c
                g.events[c].append((a + 2500, ev_switch(idle, 0, b'spin', 600 + c), '',
                                    0))
                g.events[c].append((b - 2500, ev_switch(b'spin', 600 + c, idle, 0), '',
                                    0))
    elif name == 'scaling':
        # TSC scaling: Intel-style 48 fraction bits (x1.5) and AMD-style 32 bits (x0.75)
        g = guest('g1', 2, [0, 1], 4246, mult=3 << 47, frac=48)
        g2 = guest('g2', 2, [0, 1], 4247, mult=3 << 30, frac=32)
        t = base + span // 3
        g.vcpus[0].write(t, g.vcpus[0].at(t)['offset'] + 777_777_777)
        # KVM_SET_TSC_KHZ on a running vCPU: a "multiplier" record, same offset
        v = g2.vcpus[1]
        v.write(base + span // 2, v.at(base)['offset'], 'multiplier', mult=7 << 29)
        for c in range(2):
            add_markers(rng, g, c, base, base + span, nev)
            add_markers(rng, g2, c, base, base + span, nev)
    elif name == 'multi':
        # three guests, lost events, fillers, absolute time stamps
        g1 = guest('g1', 2, [0, 1], 5001)
        g2 = guest('g2', 1, [3], 5002)
        g3 = guest('g3', 4, [6, 4, 2, 0], 5003)
        for g in (g1, g2, g3):
            for c in range(g.ncpu):
                add_markers(rng, g, c, base, base + span, nev)
        g1.events[1].sort()
        h, p, t, _ = g1.events[1][nev // 2]
        g1.events[1][nev // 2] = (h, p, t, 37)
        g1.eos_extra_lost[1] = 5
        g3.vcpus[2].write(base + span // 2, g3.vcpus[2].at(base)['offset'] + 10**9)
    elif name == 'lost_filler':
        # g1 cpu 1 loses 5 events before a flush filler that begins a page (its flag is on
        # the filler, never printed), then a number not recorded before the next page: both
        # come before the event that page begins with, g1-c1-N/2
        g = guest('g1', 2, [0, 1], 4242)
        for c in range(2):
            add_markers(rng, g, c, base, base + span, nev)
        evs = sorted(g.events[1])
        h, p, t, _ = evs[nev // 2]
        evs[nev // 2] = (h, p, t, -1)
        evs.insert(nev // 2, (h - 1, ev_print(0, FILLER), '', 5))
        g.events[1] = evs
    elif name == 'bench':
        # host 2 CPUs + one guest of 2 CPUs; half sched_switch, half print
        host.events = [[] for _ in range(2)]
        g = guest('g1', 2, [0, 1], 6001)
        g.vcpus[1].write(base + span // 2, g.vcpus[1].at(base)['offset'] + 10**9)
        for m in (host, g):
            for c in range(2):
                times = sorted(rng.randrange(base, base + span) for _ in range(nev))
                for i, h in enumerate(times):
                    if i % 2:
                        p = ev_switch(b'task-%d' % c, 1000 + c, b'swapper/%d' % c, 0)
                        m.events[c].append((h, p, '', 0))
                    else:
                        text = ('%s-c%d-%d' % (m.name, c, i)).encode()
                        m.events[c].append((h, ev_print(1000 + c, text), text.decode(), 0))
    elif name == 'explain_many':
        # as 'explain', but the one late wake-up (4 ms) waits while 70 host tasks
        # (task-0 .. task-69, pid 2000 + k) take host cpu 1 in turn for 50 us each
        # from its due time, then the vCPU thread runs again
        g = explain_guest()
        he = host.events[1]
        ev = g.events[1]
        t = base + tsc(1_000_000)
        for i in range(nev):
            due = timer_sleep(ev, t)
            fire = due + tsc(20_000)
            if i == nev // 2:
                prev, prev_pid = b'CPU 1/KVM', 900
                for k in range(70):
                    name = b'task-%d' % k
                    he.append((due + tsc(50_000 * k), ev_switch(prev, prev_pid, name, 2000 + k),
                               '', 0))
                    prev, prev_pid = name, 2000 + k
                he.append((due + tsc(3_500_000), ev_switch(prev, prev_pid, b'CPU 1/KVM', 900),
                           '', 0))
                fire = due + tsc(3_988_000)
            run = timer_wake(ev, fire, timer, wake)
            t = run + tsc(3_000)
        host.events[0].append((t, ev_switch(b'CPU 0/KVM', 899, b'swapper/0', 0), '', 0))
    elif name == 'bench_explain':
        # what --explain reads in a real capture, nev periods of 1 ms per CPU: guest cpu c
        # runs cyclictest (pid 500 + c: hrtimer_start, sched_switch out, the timer's
        # expiry, sched_wakeup, sched_switch in); its vCPU thread (tid 900 + c, host cpu
        # c) exits (hlt while the guest idles, then io, msr) and enters again; every 10th
        # period a host task holds the cpu for 0.3 ms from the expiry (a late wake-up); the
        # host's local timer interrupt every 4th period (the host-not-running rule applies);
        # the guest timer's path: the vCPU thread arms KVM's apic_timer_fn hrtimer at its
        # msr exit, the host fires it 15 us after the due time (idle, or in the hog), the
        # guest takes its local_timer_entry 1 us before the expiry
        EXTRA_SYMS.append((APIC_TIMER_FN, 'apic_timer_fn'))
        host.events = [[] for _ in range(2)]
        g = guest('g1', 2, [0, 1], 6002)
        for c in range(2):
            he, ev, tid, pid = host.events[c], g.events[c], 900 + c, 500 + c
            vcpu = b'CPU %d/KVM' % c
            he.append((base, ev_switch(b'swapper/%d' % c, 0, vcpu, tid), '', 0))
            he.append((base + 1, ev_kvm_entry(tid, c), '', 0))
            t = base + tsc(100_000)
            timer = 0xff73fcb84039bc60 + 64 * c
            apic = 0xff2b468c8191df10 + 0x1000 * c
            for i in range(nev):
                ev.append((t, ev_hrtimer_start(pid, timer, wake, mono(t) + 1_000_000), '', 0))
                ev.append((t + 2, ev_switch(b'cyclictest', pid, b'swapper/%d' % c, 0), '', 0))
                he.append((t + tsc(5_000), ev_kvm_exit(tid, c, 0x78, 2), '', 0))
                if i % 4 == 0:
                    he.append((t + tsc(6_000), ev_tick(tid), '', 0))
                due = t + tsc(1_000_000)
                he.append((t + tsc(5_000) + 1, ev_hrtimer_start(tid, apic, APIC_TIMER_FN,
                                                                mono(due)), '', 0))
                fire = due + tsc(20_000)
                host_pid = 0
                if i % 10 == 9:
                    he.append((due, ev_switch(vcpu, tid, b'hog', 777), '', 0))
                    he.append((due + tsc(300_000), ev_switch(b'hog', 777, vcpu, tid), '', 0))
                    fire = due + tsc(320_000)
                    host_pid = 777
                hfire = due + tsc(15_000)
                he.append((hfire, ev_hrtimer_entry(host_pid, apic, mono(hfire), APIC_TIMER_FN),
                           '', 0))
                he.append((fire - tsc(3_000), ev_kvm_entry(tid, c), '', 0))
                ev.append((fire - tsc(1_000), ev_tick(0), '', 0))
                run = timer_wake(ev, fire, timer, wake, pid, c)
                he.append((run + tsc(20_000), ev_kvm_exit(tid, c, 0x7b, 2), '', 0))
                he.append((run + tsc(30_000), ev_kvm_entry(tid, c), '', 0))
                he.append((run + tsc(40_000), ev_kvm_exit(tid, c, 0x7c, 2), '', 0))
                he.append((run + tsc(45_000), ev_kvm_entry(tid, c), '', 0))
                t = run + tsc(50_000)
    elif name == 'ties':
        # every CPU of every machine has an event at each of the same host TSCs:
        # the merge's order is then the tie-break alone (host, guests in
        # --guest order, CPU); 1:1 TSCs, so a guest event's host TSC is exact
        g1 = guest('g1', 2, [0, 1], 4254)
        g2 = guest('g2', 2, [1, 0], 4255)
        for m in (host, g1, g2):
            m.events = [[] for _ in range(m.ncpu)]
            for c in range(m.ncpu):
                for i in range(nev):
                    text = ('%s-c%d-%d' % (m.name, c, i)).encode()
                    m.events[c].append((base + 1000 * i, ev_print(1000 + c, text),
                                        text.decode(), 0))
    elif name == 'func':
        # function-tracer events at _text + the offsets given with --ips
        g = guest('g1', 1, [0], 4250)
        text = [a for a, n in kallsyms() if n == '_text'][0]
        for i, off in enumerate(IPS):
            h = base + 1000 * (i + 1)
            g.events[0].append((h, ev_function(1000, text + off, text + IPS[0]), '', 0))
    elif name == 'backward':
        # the guest sets vCPU 1's TSC back by 1e9 in the middle of dense events (a
        # look-ahead case), and KVM steps vCPU 0's offset back as on an unstable host
        g = guest('g1', 2, [0, 1], 4253)
        t = base + span // 2
        v = g.vcpus[1]
        v.write(t, v.at(t)['offset'] - 1_000_000_000)
        v = g.vcpus[0]
        last = v.guest_now(t - 5_000_000)
        v.write(t, last - (t * v.mult >> v.frac))
        add_markers(rng, g, 0, base, t - 5_000_000, nev // 2)
        add_markers(rng, g, 0, t + 1, base + span, nev // 2)
        add_markers(rng, g, 1, base, base + span, nev)
    elif name in ('explain', 'explain_hidden_syms', 'explain_not_running'):
        # cyclictest (pid 500) on guest cpu 1 wakes every ms; one wake-up is 5 ms
        # late because host task e2e_hog (pid 777) holds host cpu 1 under vCPU 1.
        # explain_hidden_syms: the guest's kallsyms without addresses (no function named);
        # the tick timer cyclictest's context arms also expires in it, 2 us after each
        # run, which wakes nothing: only the timers whose expiry wakes their task are its
        # sleeps.
        # explain_not_running: e2e_hog holds the cpu for 10 ms, then kworker/1:1 (pid
        # 778) for 0.5 ms; host cpu 1 takes its local timer interrupt every ms but none
        # from 42 to 46 ms (4 ms: the host cpu not running under e2e_hog)
        hidden = name == 'explain_hidden_syms'
        if hidden:
            global GUEST_SYMS_HIDDEN
            GUEST_SYMS_HIDDEN = True
        g = explain_guest()
        tick = sym('tick_sched_timer')
        hog_from, hog_to = base + tsc(40_000_000), base + tsc(45_000_000)
        if name == 'explain_not_running':
            hog_to = base + tsc(50_500_000)
            host.events[1].append((base + tsc(50_000_000),
                                   ev_switch(b'e2e_hog', 777, b'kworker/1:1', 778), '', 0))
            host.events[1] += [(base + tsc(k * 1_000_000 + 300_000), ev_tick(0), '', 0)
                               for k in range(1, 100) if not 42 < k < 46]
        host.events[1].append((hog_from, ev_switch(b'CPU 1/KVM', 900, b'e2e_hog', 777), '', 0))
        host.events[1].append((hog_to, ev_switch(b'kworker/1:1' if name == 'explain_not_running'
                                                  else b'e2e_hog', 777, b'CPU 1/KVM', 900),
                               '', 0))
        ev = g.events[1]
        t = base + tsc(1_000_000)
        for i in range(nev):
            expires = mono(t) + 1_000_000
            if hidden:
                ev.append((t, ev_hrtimer_start(500, timer + 8, tick, mono(t) - 500_000), '', 0))
                ev.append((t + 1, ev_hrtimer_start(500, timer, wake, expires), '', 0))
            else:
                ev.append((t, ev_hrtimer_start(500, timer, wake, expires), '', 0))
                ev.append((t + 1, ev_hrtimer_start(500, timer + 8, tick, expires + 5), '', 0))
            ev.append((t + 2, ev_switch(b'cyclictest', 500, b'swapper/1', 0), '', 0))
            due = t + tsc(1_000_000)
            fire = due + tsc(20_000) if not hog_from <= due < hog_to else hog_to + tsc(30_000)
            run = timer_wake(ev, fire, timer, wake)
            if hidden:
                tick_at = run + tsc(2_000)
                ev.append((tick_at, ev_hrtimer_entry(500, timer + 8, mono(tick_at), tick), '', 0))
            t = run + tsc(3_000)
    elif name in ('explain_two_vms', 'explain_two_vms_tie', 'explain_vms_20', 'explain_vms_70'):
        # as 'explain', with other VMs' "CPU 1/KVM" threads (tids 950.., not traced) on host
        # cpu 0 too.  explain_two_vms: one, running 0.3 ms of every ms, so g1's events fit
        # only tid 900; explain_vms_20 (_70): 20 (70) of them, one such 0.3 ms each ms in
        # turn; _tie: tid 950 runs from the start but for the hog's 5 ms, so both fit as well
        g = explain_guest()
        hog_from, hog_to = base + tsc(40_000_000), base + tsc(45_000_000)
        host.events[1].append((hog_from, ev_switch(b'CPU 1/KVM', 900, b'e2e_hog', 777), '', 0))
        host.events[1].append((hog_to, ev_switch(b'e2e_hog', 777, b'CPU 1/KVM', 900), '', 0))
        other = host.events[0]
        if name == 'explain_two_vms_tie':
            for t, a, b in ((base + 1, 899, 950), (hog_from, 950, 899), (hog_to, 899, 950)):
                other.append((t, ev_switch(b'CPU %d/KVM' % (a == 950), a,
                                           b'CPU %d/KVM' % (b == 950), b), '', 0))
        else:
            nvm = {'explain_two_vms': 1, 'explain_vms_20': 20, 'explain_vms_70': 70}[name]
            for k in range(150):
                t, tid = base + tsc(k * 1_000_000 + 500_000), 950 + k % nvm
                other.append((t, ev_switch(b'CPU 0/KVM', 899, b'CPU 1/KVM', tid), '', 0))
                other.append((t + tsc(300_000), ev_switch(b'CPU 1/KVM', tid, b'CPU 0/KVM', 899),
                              '', 0))
        ev = g.events[1]
        t = base + tsc(1_000_000)
        for i in range(nev):
            ev.append((t, ev_hrtimer_start(500, timer, wake, mono(t) + 1_000_000), '', 0))
            ev.append((t + 2, ev_switch(b'cyclictest', 500, b'swapper/1', 0), '', 0))
            due = t + tsc(1_000_000)
            fire = due + tsc(20_000) if not hog_from <= due < hog_to else hog_to + tsc(30_000)
            t = timer_wake(ev, fire, timer, wake) + tsc(3_000)
    elif name == 'explain_mix':
        # as 'explain', with a known mix of late wake-ups of cyclictest (pid 500,
        # guest cpu 1 = vCPU 1, host thread tid 900 on host cpu 1), the others
        # 37 us late (< 100 us):
        #   HOG:  host task e2e_hog (777) holds host cpu 1 for 2 ms from the expiry
        #   IDLE: host cpu 1 idle for 1 ms from the expiry (the vCPU thread slept)
        #   PRIO: the guest runs rt-hog (600) for 1.5 ms before cyclictest
        #   SIRQ: host ksoftirqd/1 (21) holds host cpu 1 for 0.5 ms from the expiry
        hog, idle, prio, sirq = (10, 20, 30, 40, 50), (15, 25, 35, 45), (60, 70, 80), (90,)
        g = explain_guest()
        he = host.events[1]
        ev = g.events[1]
        t = base + tsc(1_000_000)
        for i in range(nev):
            due = timer_sleep(ev, t)
            fire = due + tsc(20_000)
            if i in hog:
                he.append((due - tsc(1_000), ev_switch(b'CPU 1/KVM', 900, b'e2e_hog', 777), '', 0))
                he.append((due + tsc(2_000_000), ev_switch(b'e2e_hog', 777, b'CPU 1/KVM', 900),
                           '', 0))
                fire = due + tsc(2_030_000)
            elif i in sirq:
                he.append((due - tsc(1_000), ev_switch(b'CPU 1/KVM', 900, b'ksoftirqd/1', 21), '',
                           0))
                he.append((due + tsc(500_000), ev_switch(b'ksoftirqd/1', 21, b'CPU 1/KVM', 900),
                           '', 0))
                fire = due + tsc(530_000)
            elif i in idle:
                he.append((due - tsc(1_000), ev_switch(b'CPU 1/KVM', 900, b'swapper/1', 0), '', 0))
                he.append((due + tsc(1_000_000), ev_switch(b'swapper/1', 0, b'CPU 1/KVM', 900),
                           '', 0))
                fire = due + tsc(1_030_000)
            ev.append((fire, ev_hrtimer_entry(0, timer, mono(fire), wake), '', 0))
            ev.append((fire + tsc(5_000), ev_wakeup(500, b'cyclictest', 1), '', 0))
            if i in prio:
                run = fire + tsc(1_506_000)
                task_runs(ev, run, fire + tsc(6_000))
            else:
                run = fire + tsc(12_000)
                task_runs(ev, run)
            t = run + tsc(3_000)
        # the host trace covers the whole guest capture
        host.events[0].append((t, ev_switch(b'CPU 0/KVM', 899, b'swapper/0', 0), '', 0))
    elif name == 'explain_migrate':
        # as 'explain_mix' (cyclictest, pid 500, guest cpu 1 = vCPU 1, host thread tid 900
        # on host cpu 1; the others 37 us late), the vCPU thread unpinned (MIG: 3 late):
        #   e2e_hog (777) takes host cpu 1 from the expiry to +2 ms; the vCPU thread is
        #   switched in on host cpu 0 at +0.3 ms, where the guest runs rt-hog (600) until
        #   +1.5 ms, then cyclictest; the thread goes back to host cpu 1 at +2 ms
        # so each window is 0.3 ms of e2e_hog on host cpu 1, then 1.2 ms of the guest's
        # rt-hog on host cpu 0: its cause is the guest task, not the host task
        mig = (10, 30, 50)
        g = explain_guest()
        he, h0 = host.events[1], host.events[0]
        ev = g.events[1]
        t = base + tsc(1_000_000)
        for i in range(nev):
            due = timer_sleep(ev, t)
            fire = due + tsc(20_000)
            run = fire + tsc(12_000)
            if i in mig:
                he.append((due - tsc(1_000), ev_switch(b'CPU 1/KVM', 900, b'e2e_hog', 777), '', 0))
                h0.append((due + tsc(300_000), ev_switch(b'swapper/0', 0, b'CPU 1/KVM', 900), '',
                           0))
                ev.append((due + tsc(310_000), ev_switch(b'swapper/1', 0, b'rt-hog', 600), '', 0))
                fire = due + tsc(1_480_000)
                ev.append((fire, ev_hrtimer_entry(0, timer, mono(fire), wake), '', 0))
                ev.append((fire + tsc(5_000), ev_wakeup(500, b'cyclictest', 1), '', 0))
                run = due + tsc(1_500_000)
                ev.append((run, ev_switch(b'rt-hog', 600, b'cyclictest', 500), '', 0))
                back = due + tsc(2_000_000)
                h0.append((back, ev_switch(b'CPU 1/KVM', 900, b'swapper/0', 0), '', 0))
                he.append((back, ev_switch(b'e2e_hog', 777, b'CPU 1/KVM', 900), '', 0))
                t = back + tsc(3_000)
                continue
            ev.append((fire, ev_hrtimer_entry(0, timer, mono(fire), wake), '', 0))
            ev.append((fire + tsc(5_000), ev_wakeup(500, b'cyclictest', 1), '', 0))
            ev.append((run, ev_switch(b'swapper/1', 0, b'cyclictest', 500), '', 0))
            t = run + tsc(3_000)
        host.events[0].append((t, ev_switch(b'CPU 0/KVM', 899, b'swapper/0', 0), '', 0))
    elif name == 'explain_timer':
        # the guest timer's path (timerpath.c): cyclictest (pid 500, guest cpu 1) sleeps 1 ms
        # on its timer; its vCPU 1 (host thread 900 on host cpu 1) arms KVM's apic_timer_fn
        # hrtimer (APIC) for it, halts (kvm_exit, switched out), and the host timer fires:
        # the thread is woken and switched in, enters guest mode, the guest takes its
        # local_timer_entry, wakes cyclictest and runs it.  On time, each step is 2 us (the
        # fire 10 us after the due time): 26 us late.  The late ones (HOSTLATE is 3 of them):
        #   HOSTLATE: the host fires 300 us late, its cpu idle
        #   HOSTTASK: e2e_hog (777) on host cpu 1 from before the due time to +250 us: the
        #             timer fires in it at +200 us, the vCPU thread runs at +250 us
        #   WAIT:     fired on time; e2e_hog takes host cpu 1 at +11 us until +411 us
        #   GIRQ:     the guest's local_timer_entry 250 us after the entry
        #   GRUN:     the guest runs rt-hog (600) for 300 us before cyclictest
        hostlate, hosttask, wait, girq, grun = (10, 11, 12), 20, 30, 40, 50
        EXTRA_SYMS.append((APIC_TIMER_FN, 'apic_timer_fn'))
        g = explain_guest()
        he = host.events[1]
        ev = g.events[1]
        apic = 0xff2b468c8191df10
        us = lambda n: tsc(n * 1000)
        he.append((base + 1, ev_kvm_entry(900, 1), '', 0))
        t = base + tsc(1_000_000)
        for i in range(nev):
            due = timer_sleep(ev, t)
            he.append((t + 1, ev_hrtimer_start(900, apic, APIC_TIMER_FN, mono(due)), '', 0))
            he.append((t + 3, ev_kvm_exit(900, 1), '', 0))
            he.append((t + 4, ev_switch(b'CPU 1/KVM', 900, b'swapper/1', 0), '', 0))
            fire, in_at, fire_pid = due + us(10), None, 0
            if i in hostlate:
                fire = due + us(300)
            elif i == hosttask:
                he.append((due - us(1), ev_switch(b'swapper/1', 0, b'e2e_hog', 777), '', 0))
                fire, fire_pid = due + us(200), 777
                in_at = due + us(250)
                he.append((in_at, ev_switch(b'e2e_hog', 777, b'CPU 1/KVM', 900), '', 0))
            elif i == wait:
                he.append((due + us(11), ev_switch(b'swapper/1', 0, b'e2e_hog', 777), '', 0))
                in_at = due + us(411)
                he.append((in_at, ev_switch(b'e2e_hog', 777, b'CPU 1/KVM', 900), '', 0))
            he.append((fire, ev_hrtimer_entry(fire_pid, apic, mono(fire), APIC_TIMER_FN), '', 0))
            he.append((fire + us(2), ev_wakeup(900, b'CPU 1/KVM', 1, fire_pid), '', 0))
            if in_at is None:
                in_at = fire + us(4)
                he.append((in_at, ev_switch(b'swapper/1', 0, b'CPU 1/KVM', 900), '', 0))
            entry = in_at + us(2)
            he.append((entry, ev_kvm_entry(900, 1), '', 0))
            irq = entry + (us(250) if i == girq else us(2))
            ev.append((irq, ev_tick(0), '', 0))
            expire = irq + us(2)
            ev.append((expire, ev_hrtimer_entry(0, timer, mono(expire), wake), '', 0))
            ev.append((expire + us(2), ev_wakeup(500, b'cyclictest', 1), '', 0))
            if i == grun:
                run = expire + us(304)
                task_runs(ev, run, expire + us(4))
            else:
                run = expire + us(6)
                task_runs(ev, run)
            t = run + us(3)
        host.events[0].append((t, ev_switch(b'CPU 0/KVM', 899, b'swapper/0', 0), '', 0))
    elif name == 'explain_lost':
        # as 'explain_mix' (cyclictest, pid 500, guest cpu 1 = vCPU 1, tid 900 on host cpu 1;
        # the others 37 us late), where the traces lost events (a page's missed-events flag
        # on the first event recorded after them):
        #   HOG:   e2e_hog (777) holds host cpu 1 for 2 ms from the expiry, all recorded
        #   IDLE:  host cpu 1 idle for 1 ms from the expiry, all recorded
        #   PRIO:  the guest runs rt-hog (600) for 1.5 ms before cyclictest, all recorded
        #   HOPEN: e2e_hog takes host cpu 1 at the expiry, leaves it to idle at +0.2 ms, the
        #          vCPU runs again at +1.5 ms: these two switches lost, the flag (2) on host
        #          cpu 1's next event, at +1.6 ms (after the task ran at +1.542 ms)
        #   HLOST: e2e_hog from the expiry, the vCPU again at +0.3 ms, the vCPU thread
        #          sleeps at +0.4 ms (both lost), runs again at +1 ms: its switch carries
        #          the flag (2); the task runs at +1.042 ms
        #   GLOST: the guest runs rt-hog for 1.5 ms before cyclictest, rt-hog's switch in
        #          and a print of it lost: the flag (2) on the switch to cyclictest
        #   GMORE: 37 us late as the others, the guest's page flag without a count on its
        #          first event (hrtimer_start), meeting no late window
        hog, idle, prio, hopen, hlost, glost, gmore = 10, 20, 60, 30, 40, 50, 70
        g = explain_guest()
        he = host.events[1]
        ev = g.events[1]
        switch = lambda t, a, ap, b, bp, lost=0: he.append((t, ev_switch(a, ap, b, bp), '',
                                                               lost))
        t = base + tsc(1_000_000)
        for i in range(nev):
            if i == gmore:
                ev.append((t, ev_hrtimer_start(500, timer, wake, mono(t) + 1_000_000), '', -1))
                ev.append((t + 2, ev_switch(b'cyclictest', 500, b'swapper/1', 0), '', 0))
                due = t + tsc(1_000_000)
            else:
                due = timer_sleep(ev, t)
            fire = due + tsc(20_000)
            if i == hog:
                switch(due - tsc(1_000), b'CPU 1/KVM', 900, b'e2e_hog', 777)
                switch(due + tsc(2_000_000), b'e2e_hog', 777, b'CPU 1/KVM', 900)
                fire = due + tsc(2_030_000)
            elif i == idle:
                switch(due - tsc(1_000), b'CPU 1/KVM', 900, b'swapper/1', 0)
                switch(due + tsc(1_000_000), b'swapper/1', 0, b'CPU 1/KVM', 900)
                fire = due + tsc(1_030_000)
            elif i == hopen:
                switch(due - tsc(1_000), b'CPU 1/KVM', 900, b'e2e_hog', 777)
                # lost: e2e_hog -> swapper/1 at +0.2 ms, swapper/1 -> CPU 1/KVM at +1.5 ms
                switch(due + tsc(1_600_000), b'CPU 1/KVM', 900, b'kworker/1:1', 90, 2)
                switch(due + tsc(1_650_000), b'kworker/1:1', 90, b'CPU 1/KVM', 900)
                fire = due + tsc(1_530_000)
            elif i == hlost:
                switch(due - tsc(1_000), b'CPU 1/KVM', 900, b'e2e_hog', 777)
                # lost: e2e_hog -> CPU 1/KVM at +0.3 ms, CPU 1/KVM -> swapper/1 at +0.4 ms
                switch(due + tsc(1_000_000), b'swapper/1', 0, b'CPU 1/KVM', 900, 2)
                fire = due + tsc(1_030_000)
            ev.append((fire, ev_hrtimer_entry(0, timer, mono(fire), wake), '', 0))
            ev.append((fire + tsc(5_000), ev_wakeup(500, b'cyclictest', 1), '', 0))
            run = fire + tsc(12_000)
            if i in (prio, glost):
                if i == prio:
                    ev.append((fire + tsc(6_000), ev_switch(b'swapper/1', 0, b'rt-hog', 600), '',
                               0))
                # glost: that switch and a print of rt-hog lost
                run = fire + tsc(1_506_000)
                ev.append((run, ev_switch(b'rt-hog', 600, b'cyclictest', 500), '',
                           2 if i == glost else 0))
            else:
                ev.append((run, ev_switch(b'swapper/1', 0, b'cyclictest', 500), '', 0))
            t = run + tsc(3_000)
        host.events[0].append((t, ev_switch(b'CPU 0/KVM', 899, b'swapper/0', 0), '', 0))
    elif name in ('explain_rt', 'explain_rt_other', 'explain_rt_dl', 'explain_rt_sibling'):
        # cyclictest -t 2 -p 80 on guest cpu 1: its main thread (pid 129, SCHED_OTHER,
        # prio 120) sleeps on a timer every 10th period, its measuring threads 159 and 160
        # (SCHED_FIFO 80: prio 19; explain_rt_other: cyclictest without -p, prio 120;
        # explain_rt_dl: 160 a SCHED_DEADLINE thread, prio -1) take
        # the others in turn (159 the odd ones, 160 the even ones); wake-ups 37 us late, but
        # under host task e2e_hog (777) holding host cpu 1 from the due time:
        #   period 10 (129): 3 ms, 3.042 ms late   period 21 (159): 2 ms, 2.042 ms late
        #   period 32 (160): 1 ms, 1.042 ms late   period 41 (159): 1 ms, 1.042 ms late
        # explain_rt_sibling: in period 21, not e2e_hog but the main thread 129 itself
        # holds guest cpu 1 from 1 us before the due time for 2 ms (the vCPU running)
        rt = 120 if name == 'explain_rt_other' else 19
        hogs = {10: 3_000_000, 21: 2_000_000, 32: 1_000_000, 41: 1_000_000}
        g = explain_guest()
        he = host.events[1]
        ev = g.events[1]
        t = base + ms(1)
        for i in range(nev):
            pid, prio = (129, 120) if i % 10 == 0 else (159, rt) if i % 2 else (160, rt)
            prio = -1 if pid == 160 and name == 'explain_rt_dl' else prio
            tmr = timer + pid * 64
            ev.append((t, ev_hrtimer_start(pid, tmr, wake, mono(t) + 1_000_000), '', 0))
            ev.append((t + 2, ev_switch(b'cyclictest', pid, b'swapper/1', 0, prio, 120), '', 0))
            due = t + ms(1)
            fire = due + tsc(20_000)
            if i == 21 and name == 'explain_rt_sibling':
                ev.append((due - tsc(1_000), ev_switch(b'swapper/1', 0, b'cyclictest', 129), '',
                           0))
                ev.append((due + tsc(hogs[i]), ev_switch(b'cyclictest', 129, b'swapper/1', 0),
                           '', 0))
                fire = due + tsc(hogs[i] + 30_000)
            elif i in hogs:
                he.append((due - tsc(1_000), ev_switch(b'CPU 1/KVM', 900, b'e2e_hog', 777), '', 0))
                he.append((due + tsc(hogs[i]), ev_switch(b'e2e_hog', 777, b'CPU 1/KVM', 900),
                           '', 0))
                fire = due + tsc(hogs[i] + 30_000)
            ev.append((fire, ev_hrtimer_entry(0, tmr, mono(fire), wake), '', 0))
            ev.append((fire + tsc(5_000), ev_wakeup(pid, b'cyclictest', 1, 0, prio), '', 0))
            run = fire + tsc(12_000)
            ev.append((run, ev_switch(b'swapper/1', 0, b'cyclictest', pid, 120, prio), '', 0))
            t = run + tsc(3_000)
        host.events[0].append((t, ev_switch(b'CPU 0/KVM', 899, b'swapper/0', 0), '', 0))
    elif name in ('explain_quiet', 'explain_quiet_noticks'):
        # as 'explain_mix', the host recording its local timer interrupts
        # (irq_vectors:local_timer_entry) every 4 ms on both cpus (explain_quiet_noticks:
        # none), cyclictest's wake-ups later than 100 us (ms from the due time):
        #   STOP: host cpu 1 records nothing from -0.5 to +20 (stopped below the host), nor the
        #         guest's cpu 1; the tick at +20, the timer fires at +20.03
        #   IDLE: host cpu 1 idle from -1 to +15, its ticks on; fires at +15.03
        #   HOG:  e2e_hog (777) holds host cpu 1 from -1 to +15, its ticks on; fires at +15.03
        #   BUSY: host cpu 1 records nothing from -1 to +15 (a tickless host cpu), the guest
        #         runs rt-hog (600) from +0.026 to +15.05 and prints every 2 ms
        stop, idle, hog, busy = (10, 30, 50), (20, 40), (60,), (70, 80)
        g = explain_guest()
        he = host.events[1]
        switch = lambda t, a, ap, b, bp: he.append((t, ev_switch(a, ap, b, bp), '', 0))
        ev = g.events[1]
        quiet = []      # host cpu 1's stretches without ticks
        t = base + ms(1)
        for i in range(nev):
            due = timer_sleep(ev, t)
            fire = due + ms(0.02)
            run = None
            if i in stop:
                quiet.append((due - ms(0.5), due + ms(20)))
                if name == 'explain_quiet':
                    he.append((due + ms(20), ev_tick(900), '', 0))
                fire = due + ms(20.03)
            elif i in idle or i in hog:
                who, pid = (b'swapper/1', 0) if i in idle else (b'e2e_hog', 777)
                switch(due - ms(1), b'CPU 1/KVM', 900, who, pid)
                switch(due + ms(15), who, pid, b'CPU 1/KVM', 900)
                fire = due + ms(15.03)
            elif i in busy:
                quiet.append((due - ms(1), due + ms(15)))
            ev.append((fire, ev_hrtimer_entry(0, timer, mono(fire), wake), '', 0))
            ev.append((fire + ms(0.005), ev_wakeup(500, b'cyclictest', 1), '', 0))
            if i in busy:
                ev.append((fire + ms(0.006), ev_switch(b'swapper/1', 0, b'rt-hog', 600), '', 0))
                for k in range(1, 8):
                    ev.append((fire + ms(2 * k), ev_print(600, b'rt-hog %d' % k), '', 0))
                run = fire + ms(15.03)
                ev.append((run, ev_switch(b'rt-hog', 600, b'cyclictest', 500), '', 0))
            else:
                run = fire + ms(0.012)
                ev.append((run, ev_switch(b'swapper/1', 0, b'cyclictest', 500), '', 0))
            t = run + ms(0.003)
        host.events[0].append((t, ev_switch(b'CPU 0/KVM', 899, b'swapper/0', 0), '', 0))
        for k in range(1, (t - base) // ms(4) + 1) if name == 'explain_quiet' else ():
            tick = base + k * ms(4)
            host.events[0].append((tick, ev_tick(899), '', 0))
            if not any(a <= tick < b for a, b in quiet):
                he.append((tick, ev_tick(900), '', 0))
    elif name in ('explain_quiet_hz100', 'explain_quiet_cpu_noticks'):
        # as 'explain_quiet', the host's local timer interrupts every 10 ms on both cpus
        # (HZ 100; explain_quiet_cpu_noticks: every 4 ms on host cpu 0, none on host cpu 1),
        # cyclictest's wake-ups later than 100 us (ms from the due time):
        #   STOP: host cpu 1 and guest cpu 1 record nothing from -0.5 to +40 (4 ticks at HZ 100);
        #         the tick at +40, the timer fires at +40.03
        #   GAP:  host cpu 1 and guest cpu 1 record nothing from -1 to +20 (2 ticks at HZ 100,
        #         more than 12 ms); the timer fires at +20.03
        stop, gap = (10, 30), (20, 40)
        hz100 = name == 'explain_quiet_hz100'
        g = explain_guest()
        he = host.events[1]
        ev = g.events[1]
        quiet = []      # host cpu 1's stretches without ticks
        t = base + ms(1)
        for i in range(nev):
            due = timer_sleep(ev, t)
            fire = due + ms(0.02)
            if i in stop:
                quiet.append((due - ms(0.5), due + ms(40)))
                if hz100:
                    he.append((due + ms(40), ev_tick(900), '', 0))
                fire = due + ms(40.03)
            elif i in gap:
                quiet.append((due - ms(1), due + ms(20)))
                fire = due + ms(20.03)
            t = timer_wake(ev, fire, timer, wake) + ms(0.003)
        host.events[0].append((t, ev_switch(b'CPU 0/KVM', 899, b'swapper/0', 0), '', 0))
        period = 10 if hz100 else 4
        for k in range(1, (t - base) // ms(period) + 1):
            tick = base + k * ms(period)
            host.events[0].append((tick, ev_tick(899), '', 0))
            if hz100 and not any(a <= tick < b for a, b in quiet):
                he.append((tick, ev_tick(900), '', 0))
    elif name == 'explain_quiet_nohz':
        # host cpu 0 takes its tick every 4 ms; host cpu 1 is nohz_full-like: vCPU 1's thread
        # (tid 900) runs on it in guest mode all along (a kvm_entry at the start, the
        # kvm_exit at the end) and it takes a local timer interrupt every 20 ms only, none
        # in these stretches (ms from cyclictest's due time):
        #   SPIN: the guest runs spin (600) from -0.5, interrupts off, recording nothing; the
        #         timer fires at +30.03 and cyclictest preempts spin (host and guest cpu 1
        #         silent for 30 ms: the vCPU ran)
        spin = (10, 30, 50)
        g = explain_guest()
        he = host.events[1]
        he.append((base + 1, ev_kvm_entry(900, 1), '', 0))
        ev = g.events[1]
        quiet = []
        t = base + ms(1)
        for i in range(nev):
            due = timer_sleep(ev, t)
            if i not in spin:
                t = timer_wake(ev, due + ms(0.02), timer, wake) + ms(0.003)
                continue
            quiet.append((due - ms(0.5), due + ms(30.03)))
            ev.append((due - ms(0.5), ev_switch(b'swapper/1', 0, b'spin', 600), '', 0))
            fire = due + ms(30.03)
            ev.append((fire, ev_hrtimer_entry(0, timer, mono(fire), wake), '', 0))
            ev.append((fire + ms(0.005), ev_wakeup(500, b'cyclictest', 1), '', 0))
            run = fire + ms(0.012)
            ev.append((run, ev_switch(b'spin', 600, b'cyclictest', 500), '', 0))
            t = run + ms(0.003)
        he.append((t, ev_kvm_exit(900, 1, 0x78, 2), '', 0))
        host.events[0].append((t, ev_switch(b'CPU 0/KVM', 899, b'swapper/0', 0), '', 0))
        for k in range(1, (t - base) // ms(4) + 1):
            host.events[0].append((base + k * ms(4), ev_tick(899), '', 0))
        for k in range(1, (t - base) // ms(20) + 1):
            tick = base + k * ms(20)
            if not any(a <= tick < b for a, b in quiet):
                he.append((tick, ev_tick(900), '', 0))
    elif name == 'explain_stale':
        # cyclictest (pid 500, guest cpu 1) is woken each ms by a task on guest cpu 0 (waker,
        # pid 600), 20 us before it runs, and once 500 us: 1 late wake-up.  Before each sleep,
        # while it still runs, the waker wakes it too (a sched_wakeup of a running task,
        # ttwu_runnable: no sched_switch to it follows): not a wake-up of the next sleep
        g = explain_guest()
        ev, ew = g.events[1], g.events[0]
        t = base + tsc(1_000_000)
        for i in range(nev):
            ev.append((t, ev_switch(b'swapper/1', 0, b'cyclictest', 500), '', 0))
            ew.append((t + tsc(10_000), ev_wakeup(500, b'cyclictest', 1, 600), '', 0))
            ev.append((t + tsc(50_000), ev_switch(b'cyclictest', 500, b'swapper/1', 0, 120,
                                                   120), '', 0))
            wake = t + tsc(1_000_000)
            ew.append((wake, ev_wakeup(500, b'cyclictest', 1, 600), '', 0))
            t = wake + tsc(500_000 if i == nev // 2 else 20_000)
        ev.append((t, ev_switch(b'swapper/1', 0, b'cyclictest', 500), '', 0))
        for c in range(2):
            host.events[c].append((t + tsc(10_000), ev_switch(b'CPU %d/KVM' % c, 899 + c,
                                                              b'swapper/%d' % c, 0), '', 0))
    elif name == 'explain_self':
        # cyclictest (pid 500, guest cpu 1) wakes every ms; in some periods it has not slept
        # yet when its next period falls due: the timer it then arms, for a time already
        # past, fires into it at once (hrtimer_expire_entry and sched_wakeup in its own
        # context) and no sched_switch follows (ms from the due time):
        #   HOG:  e2e_hog (777) holds host cpu 1 from -0.5 to +2.5 while cyclictest runs in the
        #         guest; it arms its timer at +2.51, which fires at +2.52
        #   SELF: cyclictest runs on in the guest; it arms at +0.81, the timer fires at +0.82
        hog, own = (10, 30, 50), (20, 40)
        g = explain_guest()
        he = host.events[1]
        ev = g.events[1]
        t = base + ms(1)
        for i in range(nev):
            if i not in hog and i not in own:
                t = timer_wake(ev, timer_sleep(ev, t) + ms(0.02), timer, wake) + ms(0.003)
                continue
            due = t + ms(1)
            arm = due + ms(2.51 if i in hog else 0.81)
            if i in hog:
                he.append((due - ms(0.5), ev_switch(b'CPU 1/KVM', 900, b'e2e_hog', 777), '', 0))
                he.append((due + ms(2.5), ev_switch(b'e2e_hog', 777, b'CPU 1/KVM', 900), '', 0))
            ev.append((arm, ev_hrtimer_start(500, timer, wake, mono(due)), '', 0))
            fire = arm + ms(0.01)
            ev.append((fire, ev_hrtimer_entry(500, timer, mono(fire), wake), '', 0))
            ev.append((fire + ms(0.005), ev_wakeup(500, b'cyclictest', 1, waker=500), '', 0))
            t = fire + ms(0.008)
        host.events[0].append((t, ev_switch(b'CPU 0/KVM', 899, b'swapper/0', 0), '', 0))
    elif name in ('explain_exits', 'explain_exits_vmx'):
        # as 'explain_mix', the host recording kvm_entry/kvm_exit of tid 900 (vCPU 1, host
        # cpu 1), which is in guest mode but for these exits inside the late windows
        # (times from the due time, us; the wake-up runs 12 us after the timer fires):
        #   IO:  5 io exits of 200 us, every 220 us from +10; fires at +1120
        #   MSR: 8 msr exits of 100 us, every 125 us from +10; fires at +1000
        #   NPF: 1 npf exit from +10 to +1510, e2e_hog (777) holds the cpu +500..+1000;
        #        fires at +1530
        #   HOG: an interrupt exit at -2, e2e_hog holds the cpu -1..+2000, the entry at
        #        +2003; fires at +2030
        # SVM's reasons (isa 2), or VMX's (isa 1) for explain_exits_vmx
        io_, msr_, npf_, hog = (10, 20, 30, 40), (50, 60, 70), (80, 90), (5, 95)
        if name == 'explain_exits':
            isa, r_io, r_msr, r_npf, r_intr = 2, 0x7b, 0x7c, 0x400, 0x60
        else:
            isa, r_io, r_msr, r_npf, r_intr = 1, 30, 32, 48, 1
        g = explain_guest()
        he = host.events[1]
        entry = lambda t: he.append((t, ev_kvm_entry(900, 1), '', 0))
        kexit = lambda t, r: he.append((t, ev_kvm_exit(900, 1, r, isa), '', 0))
        switch = lambda t, a, ap, b, bp: he.append((t, ev_switch(a, ap, b, bp), '', 0))
        entry(base + 1)
        ev = g.events[1]
        t = base + tsc(1_000_000)
        us = lambda n: tsc(n * 1000)
        for i in range(nev):
            due = timer_sleep(ev, t)
            fire = due + us(20)
            if i in io_:
                for k in range(5):
                    kexit(due + us(10 + 220 * k), r_io)
                    entry(due + us(210 + 220 * k))
                fire = due + us(1120)
            elif i in msr_:
                for k in range(8):
                    kexit(due + us(10 + 125 * k), r_msr)
                    entry(due + us(110 + 125 * k))
                fire = due + us(1000)
            elif i in npf_:
                kexit(due + us(10), r_npf)
                switch(due + us(500), b'CPU 1/KVM', 900, b'e2e_hog', 777)
                switch(due + us(1000), b'e2e_hog', 777, b'CPU 1/KVM', 900)
                entry(due + us(1510))
                fire = due + us(1530)
            elif i in hog:
                kexit(due - us(2), r_intr)
                switch(due - us(1), b'CPU 1/KVM', 900, b'e2e_hog', 777)
                switch(due + us(2000), b'e2e_hog', 777, b'CPU 1/KVM', 900)
                entry(due + us(2003))
                fire = due + us(2030)
            run = timer_wake(ev, fire, timer, wake)
            t = run + tsc(3_000)
        host.events[0].append((t, ev_switch(b'CPU 0/KVM', 899, b'swapper/0', 0), '', 0))
    elif name in ('kvm', 'kvm_half', 'kvm_half_gone', 'kvm_lost', 'kvm_lost_moved'):
        # the host recorded its vCPU threads' kvm_entry/kvm_exit: every guest event is
        # 1 us after an entry or 1.2 us before the next exit of its vCPU (2.5 GHz);
        # kvm_half: vCPU 1's thread is "worker" on the host, told by its kvm_entry's
        # vcpu_id; kvm_half_gone: and it has no kvm_entry/kvm_exit: guest cpu 1 unverified;
        # kvm_lost_moved: kvm_lost, and vCPU 0's thread leaves host cpu 0 for 0.8 us while
        # cpu 1 loses events (it could have run there then)
        host.events = [[] for _ in range(2)]
        g = guest('g1', 2, [0, 1], 4253)
        for c in range(2):
            tid = 900 + c
            g.vcpus[c].writer = (c, tid)    # pinned: its offset writes are made there
            vcomm = b'worker' if name in ('kvm_half', 'kvm_half_gone') and c else b'CPU %d/KVM' % c
            host.events[c].append((base, ev_switch(b'swapper/%d' % c, 0, vcomm, tid), '', 0))
            t = base + 10_000
            for i in range(nev):
                if name != 'kvm_half_gone' or not c:
                    host.events[c].append((t, ev_kvm_entry(tid, c), '', 0))
                    host.events[c].append((t + 10_000, ev_kvm_exit(tid, c), '', 0))
                g.events[c].append((t + 2_500 + (i % 2) * 4_500, ev_print(0, b'in guest'), '', 0))
                t += 20_000
            host.events[c].append((t, ev_switch(vcomm, tid, b'swapper/%d' % c, 0), '', 0))
        if name in ('kvm_lost', 'kvm_lost_moved'):
            # host cpu 1's ring buffer overflowed: 20 of its kvm_entry/kvm_exit pairs from the
            # middle on are lost, the page after them says so (missed events 40): the guest
            # events of cpu 1 there have no window of their vCPU in the trace
            evs = sorted(host.events[1], key=lambda e: e[0])
            k = len(evs) // 2
            nxt = evs[k + 40]
            evs[k:k + 41] = [nxt[:3] + (40,)]
            host.events[1] = evs
        if name == 'kvm_lost_moved':
            gap_from, gap_to = evs[k - 1][0], evs[k][0]
            exit0 = next(e[0] for e in sorted(host.events[0], key=lambda e: e[0])
                         if gap_from < e[0] - 10_000 and e[0] + 4_000 < gap_to and
                         e[1] == ev_kvm_exit(900, 0))
            host.events[0] += [(exit0 + 2_000, ev_switch(b'CPU 0/KVM', 900, b'swapper/0', 0), '', 0),
                               (exit0 + 4_000, ev_switch(b'swapper/0', 0, b'CPU 0/KVM', 900), '', 0)]
    elif name in ('ambig', 'ambig_nokvm', 'ambig_run'):
        # the unstable host sets vCPU 0's offset back (w3, by its 8 ms off the CPU) with
        # no guest event since an earlier write (w1) that moved it forward: the first
        # event after w3 reads a guest TSC that w2's interval maps inside itself too
        # (3 ms after the vCPU's run 2 ended, where it was not in guest mode); the
        # host's kvm_entry/kvm_exit tell them apart (ambig_nokvm: the same without them;
        # ambig_run: without them, and the vCPU thread on its host CPU all along, as when
        # it returns to QEMU for its exits: one run span holds both host times)
        host.events = [[] for _ in range(2)]
        g = guest('g1', 1, [0], 4256)
        v, ms, tid = g.vcpus[0], 2_500_000, 900
        o0 = v.iv[0]['offset']
        runs = [(base, base + 5 * ms), (base + 10 * ms, base + 11 * ms),
                (base + 20 * ms, base + 22 * ms), (base + 30 * ms, base + 35 * ms)]
        v.write(runs[1][0], o0 + 100 * ms)      # w1: caught up (forward)
        v.write(runs[2][0], o0 + 5 * ms)        # w2: back, in its own run
        v.write(runs[3][0], o0 - 3 * ms)        # w3: back by the 8 ms off the CPU
        end = runs[3][1]
        if name == 'ambig_run':
            runs = [(base, end)]
        for a, b in runs:
            he = host.events[0]
            he.append((a, ev_switch(b'swapper/0', 0, b'CPU 0/KVM', tid), '', 0))
            if name == 'ambig':
                he.append((a + 1000, ev_kvm_entry(tid, 0), '', 0))
                he.append((b - 1000, ev_kvm_exit(tid, 0), '', 0))
            he.append((b, ev_switch(b'CPU 0/KVM', tid, b'swapper/0', 0), '', 0))
        host.events[1].append((base, ev_switch(b'swapper/1', 0, b'task-1', 1001), '', 0))
        host.events[1].append((end, ev_switch(b'task-1', 1001, b'swapper/1', 0), '', 0))
        add_markers(rng, g, 0, base + ms // 10, base + 49 * ms // 10, nev // 2)
        g.events[0].append((base + 31 * ms, ev_print(1000, b'g1-after-w3'), 'g1-after-w3', 0))
        add_markers(rng, g, 0, base + 31 * ms + 1, base + 349 * ms // 10, nev - nev // 2 - 1)
    elif name in ('two_vms', 'two_vms_tie', 'two_vms_offsets'):
        # two VMs whose vCPU threads share their names ("CPU 0/KVM": g1's tid 900, g2's
        # 950; "CPU 1/KVM": 901 and 951), all four in the host's saved cmdlines.
        # two_vms: on host cpu c the threads of vCPU c of g1 and g2 take turns, each
        # guest's events inside its own thread's kvm_entry..kvm_exit.  two_vms_tie: two
        # 1-CPU guests whose vCPU threads run all along, on host cpus 0 and 1: both fit.
        # two_vms_offsets: two_vms, g2's TSC offsets 30000 larger (12 us): g1's events
        # put on the host's TSC with g2's offsets fall between the windows
        host.events = [[] for _ in range(2)]
        tie = name == 'two_vms_tie'
        gs = [guest('g1', 1 if tie else 2, [0] if tie else [0, 1], 5101),
              guest('g2', 1 if tie else 2, [0] if tie else [0, 1], 5102)]
        for v in gs[1].vcpus if name == 'two_vms_offsets' else ():
            v.iv[0]['offset'] = (v.iv[0]['offset'] + 30_000) & M64
        host.cmdlines = ''.join('%d CPU %d/KVM\n' % (900 + 50 * k + c, c)
                                for k in range(2) for c in range(2))
        for c in range(2):
            he = host.events[c]
            if tie:
                he.append((base, ev_switch(b'swapper/%d' % c, 0, b'CPU 0/KVM', 900 + 50 * c),
                           '', 0))
                he.append((base + span, ev_switch(b'CPU 0/KVM', 900 + 50 * c,
                                                  b'swapper/%d' % c, 0), '', 0))
                add_markers(rng, gs[c], 0, base + 1000, base + span - 1000, nev)
                continue
            t = base + 10_000
            for i in range(2 * nev):
                g, tid = gs[i % 2], 900 + 50 * (i % 2) + c
                vcomm = b'CPU %d/KVM' % c
                he.append((t, ev_switch(b'swapper/%d' % c, 0, vcomm, tid), '', 0))
                he.append((t + 1_000, ev_kvm_entry(tid, c), '', 0))
                text = '%s-c%d-%d' % (g.name, c, i // 2)
                g.events[c].append((t + 5_000, ev_print(1000 + c, text.encode()), text, 0))
                he.append((t + 10_000, ev_kvm_exit(tid, c), '', 0))
                he.append((t + 11_000, ev_switch(vcomm, tid, b'swapper/%d' % c, 0), '', 0))
                t += 20_000
    elif name == 'snapshot':
        g = guest('g1', 1, [0], 4248)
        g.vcpus[0].iv[0]['kind'] = 'snapshot'
        g.vcpus[0].iv[0]['t'] = base + span // 4
        add_markers(rng, g, 0, base + span // 4, base + span, nev)
    elif name == 'prewrite':
        # the vCPU existed before vtrace_host loaded and has no snapshot: its first
        # record is a guest TSC write whose prev_offset held before it
        g = guest('g1', 1, [0], 4251)
        g.vcpus[0].iv[0]['hidden'] = True
        t = base + span // 2
        g.vcpus[0].write(t, g.vcpus[0].at(t)['offset'] + 10**9)
        add_markers(rng, g, 0, base, base + span, nev)
    elif name == 'early':
        # guest events before the first offset record of their vCPU
        g = guest('g1', 1, [0], 4249)
        g.vcpus[0].iv[0]['t'] = base + span // 2
        g.vcpus[0].iv[0]['kind'] = 'snapshot'
        add_markers(rng, g, 0, base, base + span, nev)
    else:
        raise SystemExit('unknown scenario ' + name)
    return machines


# ---- writing dumps

def msg(mtype, payload, seq):
    return struct.pack('<IHHIIQ', MAGIC, 1, mtype, 0, len(payload), seq) + payload


def meta_file(kind, name, data):
    nb = name.encode() + b'\0'
    nb = nb.ljust((len(nb) + 7) // 8 * 8, b'\0')
    return struct.pack('<IIQQ', kind, len(nb), len(data), 0) + nb + data


def header_page(page_size):
    """Debian 6.1's events/header_page, its data field sized for @page_size sub-buffers"""
    return fixture('header_page').replace(b'size:%d;' % (PAGE - HDR), b'size:%d;' % (page_size - HDR))


def ctl_messages(m, khz, cpu_stats, omit=(), page_size=PAGE, corrupt=(), eos=True,
                 data_size=None):
    msgs = []
    info = struct.pack('<QQQIIII', khz, 0, 1, m.ncpu, page_size, 8, 0)
    info += b''.ljust(40, b'\0') + b'6.1.0-57-amd64'.ljust(72, b'\0')
    info += m.name.encode().ljust(72, b'\0') + b'x86-tsc'.ljust(16, b'\0')
    for c in range(m.ncpu):
        info += struct.pack('<IIII', c, m.apic[c], 3, 0)
    msgs.append((HELLO, struct.pack('<HHIQ', 1, 1, 0, 0)))
    msgs.append((META_INFO, info))
    files = [(K_HEADER_PAGE, 'header_page', header_page(data_size or page_size)),
             (K_HEADER_EVENT, 'header_event', fixture('header_event'))]
    for ev, (system, path) in EVENTS.items():
        kind = K_FTRACE if system == 'ftrace' else K_EVENT
        files.append((kind, '%s/%s' % (system, ev), fixture(path)))
    cmdlines = ''.join('%d task-%d\n' % (1000 + c, c) for c in range(8))
    files.append((K_CMDLINES, 'saved_cmdlines', cmdlines.encode()))
    hidden = GUEST_SYMS_HIDDEN and m.name != 'host'
    syms = ''.join('%x T %s\n' % (0 if hidden else a, n) for a, n in kallsyms())
    files.append((K_KALLSYMS, 'kallsyms', syms.encode()))
    files.append((K_PRINTK, 'printk_formats', fixture('printk_formats')))
    files = [f for f in files if f[1] not in omit]
    files = [(k, n, d.replace(b'ID:', b'XX:') if n in corrupt else d) for k, n, d in files]
    for kind, name, data in files:
        msgs.append((META_FILE, meta_file(kind, name, data)))
    msgs.append((STARTED, struct.pack('<QQII', 1, 0, len(files), 0)))
    st = struct.pack('<IIIIQQ', 0, m.ncpu, m.ncpu, 0, 1, 0)
    for c in range(m.ncpu):
        s = cpu_stats[c]
        st += struct.pack('<IIQQQQQQQQ', c, 3, s['pages'], s['pages'] * page_size, s['events'],
                          s['fillers'], 0, 0, s['lost'], 0)
    if eos:
        msgs.append((EOS, st))
    return b''.join(msg(t, p, i + 1) for i, (t, p) in enumerate(msgs))


def plain_qemu(host):
    """every "CPU N/KVM" comm of the host's events (16-byte fields) and saved cmdlines
    becomes QEMU's own name, as on a QEMU command line without debug-threads=on"""
    name = re.compile(rb'CPU \d/KVM\0{7}')
    for evs in host.events:
        evs[:] = [(h, name.sub(b'qemu-system-x86\0', p), t, x) for h, p, t, x in evs]
    if getattr(host, 'cmdlines', None):
        host.cmdlines = re.sub(r'CPU \d+/KVM', 'qemu-system-x86', host.cmdlines)


def write_machine(out, m, rng, abs_every):
    d = os.path.join(out, m.name)
    os.makedirs(d, exist_ok=True)
    truth, stats = [], []
    for c in range(m.ncpu):
        evs = sorted(m.events[c], key=lambda e: e[0])
        pw = PageWriter(abs_every if m.name != 'host' else 0,
                        PAGE if m.name == 'host' else GUEST_PAGE)
        v = m.vcpus[c] if m.vcpus else None
        # a filler among the events (lost_filler) is an event sent and a filler
        fillers = sum(1 for e in evs if e[1] == ev_print(0, FILLER))
        sent = len(evs)
        for i, (h, payload, text, missed) in enumerate(evs):
            if v:
                g = v.guest_now(h)
                exact = host_of(v.at(h), g)
                assert 0 <= h - exact <= 1 + (1 << v.frac) // v.mult, (h, exact)
            else:
                g = exact = h
            pw.add(g, payload, missed)
            truth.append({'machine': m.name, 'cpu': c, 'tsc': exact,
                          'guest_ts': g if v else None, 'text': text, 'seq': i,
                          'missed': missed})
        if m.name != 'host' and evs:
            # the guest's stop: fillers push out the last partial page
            h = evs[-1][0] + 1000
            g = v.guest_now(h)
            for k in range(2):
                pw.add(g + k, ev_print(0, FILLER))
                fillers += 1
                sent += 1
        pages = pw.finish()
        with open(os.path.join(d, 'cpu%d' % c), 'wb') as f:
            f.write(b''.join(pages))
        stats.append({'pages': len(pages), 'events': sent, 'fillers': fillers,
                      'lost': sum(max(e[3], 0) for e in evs) + m.eos_extra_lost[c]})
    khz = m.khz if m.name == 'host' else 3000000
    with open(os.path.join(d, 'ctl'), 'wb') as f:
        f.write(ctl_messages(m, khz, stats, page_size=PAGE if m.name == 'host' else GUEST_PAGE))
    if m.pid:
        with open(os.path.join(d, 'qemu.pid'), 'w') as f:
            f.write('%d\n' % m.pid)
    mark_host_dump(d, m.name)
    return truth, stats


def mark_host_dump(d, name):
    """vtrace-merge takes a dump folder as --host only with a file host_dump in it"""
    if name == 'host':
        open(os.path.join(d, 'host_dump'), 'w').close()


def offset_records(machines):
    """The records vtrace_host writes, in host_tsc order: (t, pid, vcpu, interval, prev)."""
    recs = []
    for m in machines:
        for v in m.vcpus:
            prev = 0
            for iv in v.iv:
                if not iv.get('hidden'):
                    recs.append((iv['t'], m.pid, v, iv, prev))
                prev = iv['offset']
    recs.sort(key=lambda r: r[0])
    return recs


def write_offsets(out, machines, rng):
    recs = offset_records(machines)
    serial = {m.pid: i + 1 for i, m in enumerate(machines)}
    lines = ['# vtrace-offsets v1',
             '# seq host_tsc pid vm vcpu_id vcpu_idx prev_offset offset multiplier'
             ' frac_bits kind cpu serial tid']
    for seq, (t, pid, v, iv, prev) in enumerate(recs):
        lines.append('%d %d %d %d-%d %d %d %d %d %d %d %s %d %d 0' % (
            seq, t, pid, pid, 11, v.vcpu_id, v.idx, s64(prev), s64(iv['offset']),
            iv['mult'], iv['frac'], iv['kind'], seq % 2, serial[pid]))
    # the copy was read after the recording: every event and record is before it
    end = max([e[0] for m in machines for evs in m.events for e in evs] +
              [r[0] for r in recs] + [0]) + 1_000_000
    lines.append('# end host_tsc=%d records=%d dropped=0' % (end, len(recs)))
    with open(os.path.join(out, 'tsc_offsets'), 'w') as f:
        f.write('\n'.join(lines) + '\n')


def add_offset_events(machines, since, lose_at, snapshot=False):
    """The records as vtrace_host:tsc_offset events in the host's trace (trace-cmd record
    -e vtrace_host), from host TSC @since on (a recording started then), alternating
    host CPUs (a vCPU with a writer: on its CPU, by its thread); @lose_at: host CPU 1
    loses 1000 events before its first event at or
    after that host TSC (0: none); @snapshot: the event has since and tsc_khz, and
    the event's enable at @since wrote a snapshot of every vCPU that existed then."""
    host = machines[0]
    snap = (0, host.khz) if snapshot else None
    for i, (t, pid, v, iv, prev) in enumerate(offset_records(machines)):
        cpu, tid = v.writer if v.writer else (i % 2, pid)
        if t >= since:
            host.events[cpu].append((t + 40, ev_tsc_offset(t, pid, '%d-11' % pid, v.vcpu_id,
                                                          v.idx, prev, iv['offset'],
                                                          iv['mult'], iv['frac'],
                                                          iv['kind'], snap, tid), '', 0))
    if snapshot:
        add_enable_snapshots(machines, since)
    if lose_at:
        evs = sorted(host.events[1], key=lambda e: e[0])
        k = next(i for i, e in enumerate(evs) if e[0] >= lose_at)
        evs[k] = evs[k][:3] + (1000,)
        host.events[1] = evs


def add_enable_snapshots(machines, since):
    """vtrace_host's snapshot of each vCPU that existed at the enable (host TSC @since),
    written 1 us apart on host cpu 0 a little after it, with since and tsc_khz"""
    host, k = machines[0], 0
    for m in machines[1:]:
        for v in m.vcpus:
            if v.iv[0]['t'] >= since:
                continue
            k += 1
            t, iv = since + 1000 * k, v.at(since)
            host.events[0].append((t + 40, ev_tsc_offset(t, m.pid, '%d-11' % m.pid, v.vcpu_id,
                                                        v.idx, iv['offset'], iv['offset'],
                                                        iv['mult'], iv['frac'], 'snapshot',
                                                        (since, host.khz)), '', 0))


IPS = []


def cmd_make(a):
    global GUEST_PAGE
    GUEST_PAGE = a.guest_page_size
    IPS.extend(int(x, 0) for x in a.ips.split(',') if x)
    rng = random.Random(a.seed)
    machines = scenario(a.scenario, rng, a.events)
    if a.offset_events:
        base, span = 10_000_000_000, 2_000_000_000      # scenario()'s recording
        add_offset_events(machines, base + int(span * a.offset_events_from),
                          base + int(span * a.lose_at) if a.lose_at else 0,
                          a.offset_snapshots)
    os.makedirs(a.out, exist_ok=True)
    truth, stats = [], {}
    if a.plain_qemu:
        plain_qemu(machines[0])
    for mi, m in enumerate(machines):
        t, s = write_machine(a.out, m, rng, 97 if a.scenario == 'multi' else 0)
        for e in t:
            e['mi'] = mi
        truth += t
        stats[m.name] = s
    write_offsets(a.out, machines, rng)
    if getattr(machines[0], 'cmdlines', None):
        # the host's saved cmdlines for a trace.dat of it (test-interop.sh's host_dat)
        with open(os.path.join(a.out, 'host_cmdlines'), 'w') as f:
            f.write(machines[0].cmdlines)
    with open(os.path.join(a.out, 'tsc_khz'), 'w') as f:
        f.write('%d\n' % machines[0].khz)
    truth.sort(key=lambda e: (e['tsc'], e['mi'], e['cpu'], e['seq']))
    if a.scenario in ('bench', 'bench_explain'):
        truth = []
    with open(os.path.join(a.out, 'truth.jsonl'), 'w') as f:
        for e in truth:
            f.write(json.dumps(e) + '\n')
    with open(os.path.join(a.out, 'stats.json'), 'w') as f:
        json.dump({'khz': machines[0].khz, 'stats': stats,
                   'guests': ['%s=%s' % (m.name, os.path.join(a.out, m.name))
                              for m in machines[1:]]}, f)


def cmd_check(a):
    """Compare vtrace-merge --format jsonl (stdin) with truth.jsonl: KTAP lines."""
    truth = [json.loads(l) for l in open(os.path.join(a.out, 'truth.jsonl'))]
    khz = json.load(open(os.path.join(a.out, 'stats.json')))['khz']
    # the events; the self-check's verdict record, last, is tested by test-merge.sh
    got = [g for g in (json.loads(l) for l in sys.stdin) if g.get('type') != 'self_check']
    name = a.name
    n = 0

    def ok(cond, what, why=''):
        nonlocal n
        n += 1
        if not cond:
            print('# %s' % why)
        print('%sok %d %s_%s' % ('' if cond else 'not ', n, name, what))

    ok(len(got) == len(truth), 'event_count', 'got %d events, expected %d' % (len(got), len(truth)))
    bad_order = bad_time = bad_ns = bad_guest = bad_missed = 0
    first = ''
    for i, (g, t) in enumerate(zip(got, truth)):
        text = g['fields'].get('buf', '').rstrip('\n')
        if (g['machine'], g['cpu'], text) != (t['machine'], t['cpu'], t['text']):
            bad_order += 1
            first = first or 'line %d: got %s/%d %s, expected %s/%d %s' % (
                i + 1, g['machine'], g['cpu'], text, t['machine'], t['cpu'], t['text'])
        elif g['host_tsc'] != t['tsc']:
            bad_time += 1
            first = first or 'line %d (%s): host tsc %d, expected %d (diff %d)' % (
                i + 1, text, g['host_tsc'], t['tsc'], g['host_tsc'] - t['tsc'])
        if g['host_ns'] != t['tsc'] * 1000000 // khz:
            bad_ns += 1
        if g['guest_tsc'] != t['guest_ts']:
            bad_guest += 1
        if g.get('missed_events', 0) != t.get('missed', 0):
            bad_missed += 1
    ok(bad_order == 0, 'merged_order', '%d events out of place; %s' % (bad_order, first))
    ok(bad_time == 0, 'host_tsc_exact', '%d wrong host TSCs; %s' % (bad_time, first))
    ok(bad_ns == 0, 'host_ns', '%d wrong ns values' % bad_ns)
    ok(bad_guest == 0, 'guest_raw_ts', '%d wrong guest time stamps' % bad_guest)
    # the first event after a loss says so (its page's missed-events flag)
    ok(bad_missed == 0 and sum(1 for t in truth if t.get('missed')) ==
       sum(1 for g in got if g.get('missed_events')), 'missed_events',
       '%d events whose missed_events differ' % bad_missed)
    fill = sum(1 for g in got if 'vtrace-flush-filler' in g['fields'].get('buf', ''))
    ok(fill == 0, 'fillers_dropped', '%d fillers printed' % fill)


def cmd_ctl(a):
    """Rewrite DIR/ctl for bad-input tests (a real-pages dump, a missing file...)."""
    m = Machine(os.path.basename(a.dir.rstrip('/')), a.ncpu,
                [int(x) for x in a.apic.split(',')] if a.apic else None)
    stats = []
    for c in range(a.ncpu):
        path = os.path.join(a.dir, 'cpu%d' % c)
        size = os.path.getsize(path) if os.path.exists(path) else 0
        stats.append({'pages': size // PAGE, 'events': a.events, 'fillers': 0, 'lost': 0})
    with open(os.path.join(a.dir, 'ctl'), 'wb') as f:
        f.write(ctl_messages(m, 2000000, stats, a.omit or (), a.page_size, a.corrupt or (),
                             not a.no_eos, PAGE))
    mark_host_dump(a.dir, m.name)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest='cmd', required=True)
    m = sub.add_parser('make')
    m.add_argument('out')
    m.add_argument('scenario')
    m.add_argument('--events', type=int, default=300)
    m.add_argument('--seed', type=int, default=1)
    m.add_argument('--ips', default='0x10', help='func: offsets from _text')
    m.add_argument('--offset-events', action='store_true',
                   help='the offset records also as vtrace_host:tsc_offset host events')
    m.add_argument('--offset-events-from', type=float, default=-1.0,
                   help='only those from this fraction of the recording on (-1: all)')
    m.add_argument('--offset-snapshots', action='store_true',
                   help="vtrace_host's event with since and tsc_khz: a snapshot per vCPU at"
                   " the enable (--offset-events-from)")
    m.add_argument('--lose-at', type=float, default=0.0,
                   help='host cpu 1 loses events at this fraction of the recording')
    m.add_argument('--plain-qemu', action='store_true',
                   help='the host\'s vCPU threads keep QEMU\'s name, "qemu-system-x86", as'
                   ' without -name ...,debug-threads=on (kvm_entry tells them)')
    m.add_argument('--guest-page-size', type=int, default=PAGE,
                   help="the guests' sub-buffer size (buffer_subbuf_size_kb)")
    c = sub.add_parser('check')
    c.add_argument('out')
    c.add_argument('name')
    t = sub.add_parser('ctl')
    t.add_argument('dir')
    t.add_argument('--ncpu', type=int, default=2)
    t.add_argument('--apic')
    t.add_argument('--omit', action='append')
    t.add_argument('--corrupt', action='append')
    t.add_argument('--page-size', type=int, default=PAGE)
    t.add_argument('--events', type=int, default=0)
    t.add_argument('--no-eos', action='store_true')
    a = p.parse_args()
    {'make': cmd_make, 'check': cmd_check, 'ctl': cmd_ctl}[a.cmd](a)


if __name__ == '__main__':
    main()
