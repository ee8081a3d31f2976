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
# also checks the count of wake-ups per cause.  With the host's kvm_entry and
# kvm_exit, each window is also cut by the vCPU thread's mode (guest mode, or
# in the host for an exit of a reason until the next entry), and the
# wake-ups' and the summary's modes are checked; the reasons' names are read
# here from kvm_exit's print format (fixtures/debian-6.1, the one gen.py
# writes), not from vtrace-merge.  With the host's irq_vectors:local_timer_entry,
# a stretch of a window of 3 ticks of the host cpu or more (its tick: the
# median of its first 256 intervals between local_timer_entry events while
# busy, as src/merge/ticks.c measures it; at least 3 ms; none when fewer
# than 16 or over 15 ms) in which neither the host cpu nor the guest cpu
# recorded any event is host_not_running, and the summary's host_cpu lines
# are checked against it.  A wake-up may end in a timer that fired into
# the task itself (hrtimer_expire_entry in its context) instead of a
# sched_switch to it.  Where a trace lost events (an event with
# "missed_events": the loss lies between the CPU's event before it and it)
# and a loss meets the span a window rests on, on its host cpu or its guest
# cpu (from the last sched_switch there at or before the expected time, to
# the task running), the whole window is events_lost, naming the CPUs; the
# summary's events_lost lines are checked against the events too.  Prints
# KTAP-free lines: "ok"/"FAIL ..." and exits 1 on a difference.
import json
import os
import re
import sys

evs = [e for e in map(json.loads, open(sys.argv[1])) if e.get('type') != 'self_check']
out = [json.loads(line) for line in open(sys.argv[2])]
summary = [o for o in out if o['type'] == 'summary'][0]
causes = [o for o in out if o['type'] == 'cause']
late = [o for o in out if o['type'] == 'late']
fails = []

host_evs = [e for e in evs if e['machine'] == 'host']
host_last = max((e['host_ns'] for e in host_evs), default=None)
kvm_evs = [e for e in host_evs if e['event'] in ('kvm_entry', 'kvm_exit')]
have_modes = (any(e['event'] == 'kvm_entry' for e in kvm_evs) and
              any(e['event'] == 'kvm_exit' for e in kvm_evs))


def exit_names():
    """{(isa, exit_reason): name} from the two __print_symbolic() tables of kvm_exit's format"""
    fmt = open(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            'fixtures/debian-6.1/kvm/kvm_exit.format')).read()
    tables = re.findall(r'__print_symbolic\(REC->exit_reason[^,]*,(.*?)\) *[:,]', fmt)
    names = {}
    for isa, table in zip((1, 2), tables):      # VMX's first, then SVM's
        for expr, name in re.findall(r'\{ *([^,{}]+?) *, *"([^"]+)" *\}', table):
            names[(isa, eval(expr) & 0xffffffff)] = name
    return names


NAMES = exit_names() if have_modes else {}
have_ticks = any(e['event'] == 'local_timer_entry' for e in host_evs)


def tick_thresholds():
    """{host cpu: (quiet threshold ns or 0, median, intervals, ticks, why)}, as ticks.c
    reads them: busy intervals between a cpu's local_timer_entry events from the host
    trace's start, until every cpu has 256 or 60 s in"""
    cpus = sorted({e['cpu'] for e in host_evs})
    st = {c: {'last': 0, 'busy': False, 'pid': -1, 'ticks': 0, 'iv': []} for c in cpus}
    first = host_evs[0]['host_ns'] if host_evs else 0
    for e in host_evs:
        c = st[e['cpu']]
        if e['host_ns'] - first > 60_000_000_000 or all(len(x['iv']) == 256 for x in st.values()):
            break
        if e['event'] == 'sched_switch':
            c['pid'] = e['fields']['next_pid']
            if not c['pid']:
                c['busy'] = False
        elif e['event'] == 'local_timer_entry':
            c['ticks'] += 1
            if c['last'] and c['busy'] and e['host_ns'] > c['last'] and len(c['iv']) < 256:
                c['iv'].append(e['host_ns'] - c['last'])
            c['last'] = e['host_ns']
            c['busy'] = c['pid'] != 0
    out = {}
    for cpu, c in st.items():
        iv = sorted(c['iv'])
        med = iv[(len(iv) - 1) // 2] if iv else 0
        why = ('no_tick' if not c['ticks'] else 'too_few_ticks' if len(iv) < 16 else
               'no_regular_tick' if med > 15_000_000 else '')
        out[cpu] = (0 if why else max(3 * med, 3_000_000), med, len(iv), c['ticks'], why)
    return out


TICKS = tick_thresholds() if have_ticks else {}


def quiet(gcpu, hcpu, a, b):
    """[(from, to)] of [a, b), 3 of host cpu hcpu's ticks or longer, no event of it nor of
    guest cpu gcpu"""
    QUIET_NS = TICKS.get(hcpu, (0,))[0]
    if not have_ticks or hcpu < 0 or not QUIET_NS:
        return []
    ts = sorted(e['host_ns'] for e in evs if e['cpu'] == (hcpu if e['machine'] == 'host' else gcpu)
                and e['machine'] in ('host', summary_guest))
    pts = [max([x for x in ts if x <= a], default=0)] + [x for x in ts if a < x < b] + [b]
    return [(max(p, a), q) for p, q in zip(pts, pts[1:]) if q - max(p, a) >= QUIET_NS]


def losses_of():
    """{(machine, cpu): [(last event before, first after, missed_events)]}"""
    out, last = {}, {}
    for e in evs:
        k = (e['machine'], e['cpu'])
        if e.get('missed_events'):
            out.setdefault(k, []).append((last.get(k, 0), e['host_ns'], e['missed_events']))
        last[k] = max(last.get(k, 0), e['host_ns'])
    return out


LOSSES = losses_of()


def rests_from(tl, t):
    """where a window's attribution on a cpu's timeline rests from: its last sched_switch
    at or before t; t when it has nothing before t; 0 when only interrupts"""
    before = [s for s in tl if s[0] <= t]
    if not before:
        return t
    switches = [s for s in before if s[4] >= 0]
    return switches[-1][0] if switches else 0


def lost_in(machine, cpu, a, b):
    """the losses of machine's cpu that meet [a, b): the late line's "lost" member, or None"""
    met = [x for x in LOSSES.get((machine, cpu), []) if x[1] > a and x[0] < b]
    if not met:
        return None
    return {'machine': machine, 'cpu': cpu, 'losses': len(met),
            'events': sum(x[2] for x in met if x[2] > 0),
            'uncounted': sum(1 for x in met if x[2] < 0), 'from_ns': min(x[0] for x in met),
            'to_ns': None if max(x[1] for x in met) > b else max(x[1] for x in met)}


def modes_of(vtid):
    """[(t, mode)] of vCPU thread vtid: 'guest' after an entry, the reason's name after an exit"""
    ml = []
    for e in kvm_evs:
        if e['pid'] != vtid:
            continue
        if e['event'] == 'kvm_entry':
            ml.append((e['host_ns'], 'guest'))
        else:
            f = e['fields']
            ml.append((e['host_ns'], NAMES[(f['isa'], f['exit_reason'])]))
    return ml


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


def vcpu_path(vtid, hcpu, a, b):
    """[(host cpu, from)]: where the vCPU thread was at a, then each other host cpu it was
    switched in on before b (at most 4: the last holds the rest of the window)"""
    segs = [(hcpu, a)]
    for e in sorted((e for e in host_evs if e['event'] == 'sched_switch' and
                     e['fields']['next_pid'] == vtid and a < e['host_ns'] < b),
                    key=lambda e: e['host_ns']):
        if e['cpu'] != segs[-1][0] and len(segs) < 4:
            segs.append((e['cpu'], e['host_ns']))
    return segs


def state_at(tl, t):
    i = -1
    while i + 1 < len(tl) and tl[i + 1][0] <= t:
        i += 1
    return i


def cut(gcpu, pid, a, b):
    gt = timeline(summary_guest, gcpu)
    hcpu, vtid = vcpu_host_cpu(gcpu, a) if host_evs else (-1, -1)
    segs = vcpu_path(vtid, hcpu, a, b) if hcpu >= 0 else [(hcpu, a)]
    ends = [x[1] for x in segs[1:]] + [b]
    known = bool(host_evs)
    end = host_last if known and host_last < b else None
    parts = {}

    def add(key, n):
        if n:
            parts[key] = parts.get(key, 0) + n

    # another thread of the task's name is named by its tid (cyclictest's main thread)
    tcomm = next((g[3] for g in reversed(gt) if g[1] == 'task' and g[2] == pid and g[0] <= b),
                 None)
    # a loss where the window rests: no cause named (the vCPU's thread known, or no host)
    if not known or hcpu >= 0:
        lost = [lost_in('host', c, rests_from(timeline('host', c), sa), sb)
                for (c, sa), sb in zip(segs, ends) if c >= 0] + \
            [lost_in(summary_guest, gcpu, rests_from(gt, a), b)]
        lost = [x for x in lost if x]
        if lost:
            task = ', '.join('%s cpu %d' % (x['machine'], x['cpu']) for x in lost)
            return {('events_lost', task): b - a}, None, lost
    ml = modes_of(vtid) if have_modes and vtid > 0 else []
    use_modes = bool(ml)
    modes = {}      # mode -> [count, ns, max]
    cur = [None, 0]     # the mode being timed, its time so far
    for (c, sa), sb in zip(segs, ends):
        walk(gcpu, pid, c, vtid, sa, sb, gt, ml, end, known, tcomm, add, modes, cur)
    return parts, (modes if use_modes else None), None


def walk(gcpu, pid, hcpu, vtid, a, b, gt, ml, end, known, tcomm, add, modes, cur):
    """the window's stretch [a, b) on host cpu hcpu: its pieces to add(), its modes"""
    ht = timeline('host', hcpu) if hcpu >= 0 else []
    qs = quiet(gcpu, hcpu, a, b) if known else []
    bounds = sorted(x for q in qs for x in q)
    use_modes = bool(ml)
    hi, gi, xi = state_at(ht, a), state_at(gt, a), state_at(ml, a)
    blocked = False
    begins = True

    def add_mode(mode, n):
        m = modes.setdefault(mode, [0, 0, 0])
        if begins or cur[0] != mode:
            if mode != 'unknown':
                m[0] += 1
            cur[0], cur[1] = mode, 0
        m[1] += n
        cur[1] += n
        m[2] = max(m[2], cur[1])

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
        if xi + 1 < len(ml) and ml[xi + 1][0] < nxt:
            nxt = ml[xi + 1][0]
        nxt = min([x for x in bounds if t < x < nxt] + [nxt])
        hs = ht[hi] if hi >= 0 else None
        gs = gt[gi] if gi >= 0 else None
        n = nxt - t
        mode = ml[xi][1] if xi >= 0 and (end is None or t < end) else 'unknown'
        if use_modes and n:
            add_mode(mode, n)
            begins = False
        if known and (hs is None or (end is not None and t >= end)):
            add(('unknown', ''), n)
        elif any(p <= t < q for p, q in qs):
            add(('host_not_running', ''), n)
        elif hs and hs[1] != 'task':
            add(('host_' + hs[1], ''), n)
        elif hs and hs[2] != vtid:
            if hs[2] == 0:
                add(('vcpu_blocked' if blocked else 'host_idle', ''), n)
            elif hs[3].startswith('ksoftirqd/'):
                add(('host_softirq', hs[3]), n)
            else:
                add(('host_task', hs[3]), n)
        elif mode not in ('unknown', 'guest'):
            add(('vcpu_exit', mode), n)
        elif gs and gs[1] != 'task':
            add(('guest_' + gs[1], ''), n)
        elif gs and gs[2] and gs[2] != pid:
            add(('guest_task', gs[3] + (' (tid %d)' % gs[2] if gs[3] == tcomm else '')), n)
        elif gs and gs[2] and gs[2] == pid:
            add(('guest_self', ''), n)
        elif mode == 'guest':
            add(('vcpu_guest', ''), n)
        else:
            add(('vcpu_running' if known else 'unknown', ''), n)
        t = nxt
        while hi + 1 < len(ht) and ht[hi + 1][0] <= t:
            hi += 1
            step()
        while gi + 1 < len(gt) and gt[gi + 1][0] <= t:
            gi += 1
        while xi + 1 < len(ml) and ml[xi + 1][0] <= t:
            xi += 1
            begins = True


summary_guest = late[0]['guest'] if late else None
if len(late) != summary['late']:
    fails.append('--worst did not list every late wake-up: %d of %d' % (len(late), summary['late']))
total = {}
mode_total = {}
for w in late:
    ran = [e for e in evs if e['machine'] == w['guest'] and e['cpu'] == w['cpu'] and
           e['host_ns'] == w['running_ns'] and
           ((e['event'] == 'sched_switch' and e['fields']['next_pid'] == w['pid']) or
            (e['event'] == 'hrtimer_expire_entry' and e['pid'] == w['pid']))]
    if not ran:
        fails.append('rank %d: no sched_switch to pid %d, nor its timer firing into it, at %d'
                     % (w['rank'], w['pid'], w['running_ns']))
    parts, modes, lost = cut(w['cpu'], w['pid'], w['expected_ns'], w['running_ns'])
    if w.get('lost') != lost:
        fails.append('rank %d lost: C %s, here %s' % (w['rank'], w.get('lost'), lost))
    got = {(p['cause'], p['task']): p['ns'] for p in w['parts']}
    if got != parts:
        fails.append('rank %d parts: C %s, here %s' % (w['rank'], sorted(got.items()),
                                                        sorted(parts.items())))
    main = sorted(parts.items(), key=lambda kv: -kv[1])[0][0] if parts else ('unknown', '')
    c = total.setdefault(main, [0, 0, 0])
    c[0] += 1
    c[1] += w['delay_ns']
    c[2] = max(c[2], w['delay_ns'])
    got = None
    if 'modes' in w:
        got = {m['reason'] if m['mode'] == 'exit' else m['mode']: [m['count'], m['ns'],
               m['max_ns']] for m in w['modes']}
    if got != modes:
        fails.append('rank %d modes: C %s, here %s' % (w['rank'], got, modes))
    for mode, v in (modes or {}).items():
        m = mode_total.setdefault((main, mode), [0, 0, 0])
        m[0] += v[0]
        m[1] += v[1]
        m[2] = max(m[2], v[2])
delay = sum(w['delay_ns'] for w in late)
if delay != summary['delay_ns']:
    fails.append('delay %d, here %d' % (summary['delay_ns'], delay))
got = {(c['cause'], c['task']): [c['wakeups'], c['total_ns'], c['max_ns']] for c in causes}
if got != total:
    fails.append('causes: C %s, here %s' % (sorted(got.items()), sorted(total.items())))
got = {((m['cause'], m['task']), m['reason'] if m['mode'] == 'exit' else m['mode']):
       [m['count'], m['total_ns'], m['max_ns']] for m in out if m['type'] == 'mode'}
if got != mode_total:
    fails.append('modes: C %s, here %s' % (sorted(got.items()), sorted(mode_total.items())))
if have_modes != (summary['kvm_exits'] > 0 and summary['kvm_entries'] > 0):
    fails.append('kvm_exits %d, kvm_entries %d in the summary' % (summary['kvm_exits'],
                                                                  summary['kvm_entries']))
windows = sorted({w['host_cpu'] for w in late if w['host_cpu'] >= 0}) if have_ticks else []
got = {o['cpu']: (o['quiet_ns'], o['tick_ns'], o['intervals'], o['ticks'], o['not_told_apart'])
       for o in out if o['type'] == 'host_cpu'}
want = {cpu: TICKS.get(cpu, (0, 0, 0, 0, 'no_tick')) for cpu in windows}
if got != want:
    fails.append('host_cpu lines: C %s, here %s' % (sorted(got.items()), sorted(want.items())))
not_told = ','.join(str(cpu) for cpu in windows if not want[cpu][0])
if have_ticks and not_told and not summary['not_told_apart'].endswith('host not running on cpu '
                                                                       + not_told):
    fails.append('not_told_apart %r, host cpus not told apart here: %s' %
                 (summary['not_told_apart'], not_told))
got = {(o['machine'], o['cpu']): (o['losses'], o['events'], o['uncounted'])
       for o in out if o['type'] == 'events_lost'}
want = {k: (len(v), sum(x[2] for x in v if x[2] > 0), sum(1 for x in v if x[2] < 0))
        for k, v in LOSSES.items()}
if got != want:
    fails.append('events_lost lines: C %s, here %s' % (sorted(got.items()), sorted(want.items())))
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
