#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# explain-check.py EVENTS.jsonl EXPLAIN.jsonl [EXPECT]: recompute --explain's summary.
#
# EVENTS.jsonl is vtrace-merge --format jsonl of the capture, EXPLAIN.jsonl
# vtrace-merge --explain --format jsonl --worst 1000 of the same.  For each
# late wake-up it lists (its window: guest cpu, expected, running), this
# cuts the window again from the merged events alone, with the rules of
# Documentation/vtrace-merge.rst (--explain), and checks the parts, then the
# summary's counts, totals, maxima and shares.  EXPECT, "cause[:task]=N,...",
# also checks the count of wake-ups per cause.  Prints KTAP-free lines:
# "ok"/"FAIL ..." and exits 1 on a difference.
import json
import sys

evs = [json.loads(line) for line in open(sys.argv[1])]
out = [json.loads(line) for line in open(sys.argv[2])]
summary = [o for o in out if o['type'] == 'summary'][0]
causes = [o for o in out if o['type'] == 'cause']
late = [o for o in out if o['type'] == 'late']
fails = []

host_evs = [e for e in evs if e['machine'] == 'host']
host_last = max((e['host_ns'] for e in host_evs), default=None)


def timeline(machine, cpu):
    """[(from, kind, pid, comm, prev_pid, prev_state)] of one CPU"""
    tl, cur = [], (0, '')
    for e in evs:
        if e['machine'] != machine or e['cpu'] != cpu:
            continue
        f, ev = e['fields'], e['event']
        if ev == 'sched_switch':
            cur = (f['next_pid'], f['next_comm'])
            tl.append((e['host_ns'], 'task', cur[0], cur[1], f['prev_pid'], f['prev_state']))
        elif ev in ('irq_handler_entry', 'softirq_entry'):
            tl.append((e['host_ns'], ev.split('_')[0], cur[0], cur[1], -1, 0))
        elif ev in ('irq_handler_exit', 'softirq_exit'):
            tl.append((e['host_ns'], 'task', cur[0], cur[1], -1, 0))
    return tl


def vcpu_host_cpu(idx, t):
    """the host cpu "CPU idx/KVM" was last switched in on by t, else the first after"""
    seen = [(e['host_ns'], e['cpu'], e['fields']['next_pid']) for e in host_evs
            if e['event'] == 'sched_switch' and e['fields']['next_comm'] == 'CPU %d/KVM' % idx]
    before = [s for s in seen if s[0] <= t]
    pick = before[-1] if before else (seen[0] if seen else None)
    return (pick[1], pick[2]) if pick else (-1, -1)


def state_at(tl, t):
    i = -1
    while i + 1 < len(tl) and tl[i + 1][0] <= t:
        i += 1
    return i


def cut(gcpu, pid, a, b):
    gt = timeline(summary_guest, gcpu)
    hcpu, vtid = vcpu_host_cpu(gcpu, a) if host_evs else (-1, -1)
    ht = timeline('host', hcpu) if hcpu >= 0 else []
    known = bool(host_evs)
    end = host_last if known and host_last < b else None
    parts = {}

    def add(key, n):
        if n:
            parts[key] = parts.get(key, 0) + n

    hi, gi = state_at(ht, a), state_at(gt, a)
    blocked = False

    def step():
        nonlocal blocked
        s = ht[hi]
        if s[2] == vtid and s[1] == 'task':
            blocked = False
        elif s[4] == vtid:
            blocked = bool(s[5] & 2)
    if hi >= 0:
        step()
    t = a
    while t < b:
        nxt = end if end is not None and t < end < b else b
        if hi + 1 < len(ht) and ht[hi + 1][0] < nxt:
            nxt = ht[hi + 1][0]
        if gi + 1 < len(gt) and gt[gi + 1][0] < nxt:
            nxt = gt[gi + 1][0]
        hs = ht[hi] if hi >= 0 else None
        gs = gt[gi] if gi >= 0 else None
        n = nxt - t
        if known and (hs is None or (end is not None and t >= end)):
            add(('unknown', ''), n)
        elif hs and hs[1] != 'task':
            add(('host_' + hs[1], ''), n)
        elif hs and hs[2] != vtid:
            if hs[2] == 0:
                add(('vcpu_blocked' if blocked else 'host_idle', ''), n)
            elif hs[3].startswith('ksoftirqd/'):
                add(('host_softirq', hs[3]), n)
            else:
                add(('host_task', hs[3]), n)
        elif gs and gs[1] != 'task':
            add(('guest_' + gs[1], ''), n)
        elif gs and gs[2] and gs[2] != pid:
            add(('guest_task', gs[3]), n)
        else:
            add(('vcpu_running' if known else 'unknown', ''), n)
        t = nxt
        while hi + 1 < len(ht) and ht[hi + 1][0] <= t:
            hi += 1
            step()
        while gi + 1 < len(gt) and gt[gi + 1][0] <= t:
            gi += 1
    return parts


summary_guest = late[0]['guest'] if late else None
if len(late) != summary['late']:
    fails.append('--worst did not list every late wake-up: %d of %d' % (len(late), summary['late']))
total = {}
for w in late:
    ran = [e for e in evs if e['machine'] == w['guest'] and e['cpu'] == w['cpu'] and
           e['host_ns'] == w['running_ns'] and e['event'] == 'sched_switch' and
           e['fields']['next_pid'] == w['pid']]
    if not ran:
        fails.append('rank %d: no sched_switch to pid %d at %d' % (w['rank'], w['pid'],
                                                                    w['running_ns']))
    parts = cut(w['cpu'], w['pid'], w['expected_ns'], w['running_ns'])
    got = {(p['cause'], p['task']): p['ns'] for p in w['parts']}
    if got != parts:
        fails.append('rank %d parts: C %s, here %s' % (w['rank'], sorted(got.items()),
                                                        sorted(parts.items())))
    main = sorted(parts.items(), key=lambda kv: -kv[1])[0][0] if parts else ('unknown', '')
    c = total.setdefault(main, [0, 0, 0])
    c[0] += 1
    c[1] += w['delay_ns']
    c[2] = max(c[2], w['delay_ns'])
delay = sum(w['delay_ns'] for w in late)
if delay != summary['delay_ns']:
    fails.append('delay %d, here %d' % (summary['delay_ns'], delay))
got = {(c['cause'], c['task']): [c['wakeups'], c['total_ns'], c['max_ns']] for c in causes}
if got != total:
    fails.append('causes: C %s, here %s' % (sorted(got.items()), sorted(total.items())))
for c in causes:
    if abs(c['share'] - c['total_ns'] / delay) > 0.00006:
        fails.append('share of %s: %s' % (c['cause'], c['share']))
if len(sys.argv) > 3 and sys.argv[3]:
    for item in sys.argv[3].split(','):
        k, n = item.split('=')
        cause, _, task = k.partition(':')
        if total.get((cause, task), [0])[0] != int(n):
            fails.append('expected %s wake-ups under %s, found %s' %
                         (n, k, total.get((cause, task), [0])[0]))
print('# late %d, delay %d ns, causes %s' % (len(late), delay,
      ' '.join('%s%s=%d/%d' % (k[0], ':' + k[1] if k[1] else '', v[0], v[1])
               for k, v in sorted(total.items()))))
for f in fails:
    print('# FAIL ' + f)
sys.exit(1 if fails else 0)
