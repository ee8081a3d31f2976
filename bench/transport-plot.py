#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# bench/transport-plot.py: the picture of a bench/transport.sh run, as SVG, from its results.txt.
#
#   bench/transport-plot.py RESULTS RUNS METHODS OUT.svg
#
# Left: the sweep, events lost (% of the markers written, on a scale that
# shows 0.1 % as well as 100 %) against the rate the load achieved (both
# CPUs), one line per method: where each one starts to lose.  Right: guest
# CPU per MB of markers (the method's threads plus the guest's kworkers),
# min / median / max of the main runs.  Plain SVG text, no library.
import math
import statistics
import sys

COLORS = {'vtrace': '#1f77b4', 'splice': '#d62728', 'agent': '#2ca02c', 'net': '#9467bd',
          'none': '#7f7f7f', 'stuck': '#8c564b'}
NAMES = {'vtrace': 'vtrace_guest', 'splice': 'user splice loop', 'agent': 'trace-cmd agent/vsock',
         'net': 'trace-cmd -N/TCP', 'none': 'load alone'}


def parse(path, runs):
    rows = {}
    for line in open(path):
        kind, _, rest = line.strip().partition(': ')
        if kind != 'vtg-bench':
            continue
        kv = dict(w.split('=', 1) for w in rest.split() if '=' in w)
        rows.setdefault(kv['method'], []).append(kv)
    main, sweep = {}, {}
    for m, r in rows.items():
        for k in r[:runs]:
            mb = int(k['written']) * int(k['size']) / 1e6
            if mb:
                guest = (int(k['cpu_ns']) + int(k.get('kworker_ns', 0))) / 1e6 / mb
                main.setdefault(m, []).append(guest)
        for k in r[runs:]:
            usec = int(k['usec'])
            got = int(k['written']) / (usec / 1e6) if usec else 0
            pct = 100.0 * int(k['lost']) / int(k['written']) if int(k['written']) else 100.0
            sweep.setdefault(m, []).append((got, pct, k['rate'], int(k['lost'])))
    return main, sweep


def nice(v):
    """A round axis end at or above v."""
    if v <= 0:
        return 1
    step = 10 ** (len(str(int(v))) - 1)
    for f in (1, 2, 2.5, 5, 10):
        if f * step >= v:
            return f * step
    return 10 * step


def text(x, y, s, anchor='middle', size=12, extra=''):
    return '<text x="%.1f" y="%.1f" font-size="%d" text-anchor="%s"%s>%s</text>' % (
        x, y, size, anchor, extra, s.replace('&', '&amp;').replace('<', '&lt;'))


def axes(out, x0, y0, w, h, xmax, ymax, xlabel, ylabel, xticks=True):
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#000"/>' % (x0, y0, w, h))
    for i in range(5):
        y = y0 + h - h * i / 4
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (x0, y, x0 + w, y))
        out.append(text(x0 - 6, y + 4, '{:,.0f}'.format(ymax * i / 4), 'end', 11))
        if xticks:
            x = x0 + w * i / 4
            out.append(text(x, y0 + h + 16, '{:,.0f}'.format(xmax * i / 4), 'middle', 11))
    out.append(text(x0 + w / 2, y0 + h + 34, xlabel))
    out.append(text(x0 - 52, y0 + h / 2, ylabel, 'middle', 12,
                    ' transform="rotate(-90 %.1f %.1f)"' % (x0 - 52, y0 + h / 2)))


def lost_y(pct):
    """0 at 0 %, then one step for each decade from 0.1 % to 100 % (4 steps in all)."""
    return min(math.log10(1 + 10 * pct) / math.log10(1001), 1.0)


def sweep_panel(out, sweep, methods, x0, y0, w, h):
    pts = [p for m in methods for p in sweep.get(m, [])]
    xmax = nice(max([p[0] for p in pts] + [1]))
    out.append(text(x0 + w / 2, y0 - 10, 'sweep: events lost against the rate held', 'middle', 14))
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#000"/>' % (x0, y0, w, h))
    for pct in (0, 0.1, 1, 10, 100):
        y = y0 + h - h * lost_y(pct)
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (x0, y, x0 + w, y))
        out.append(text(x0 - 6, y + 4, '%g %%' % pct, 'end', 11))
    if not pts:
        out.append(text(x0 + w / 2, y0 + h / 2, 'no sweep in this run', 'middle', 13))
    for i in range(5):
        out.append(text(x0 + w * i / 4, y0 + h + 16, '{:,.0f}'.format(xmax * i / 4), 'middle', 11))
    out.append(text(x0 + w / 2, y0 + h + 34, 'markers/s written (both CPUs)'))
    out.append(text(x0 - 52, y0 + h / 2, 'events lost, % of those written', 'middle', 12,
                    ' transform="rotate(-90 %.1f %.1f)"' % (x0 - 52, y0 + h / 2)))
    # the legend bottom right: lossless steps lie bottom left, losing ones high up
    ly = y0 + h - 16 * len([m for m in methods if sweep.get(m)]) + 6
    lx = x0 + w - 170
    for m in methods:
        # in the order of the rates asked (0, unpaced, last): the rate held may go down
        s = sorted(sweep.get(m, []), key=lambda p: int(p[2]) or 1 << 40)
        if not s:
            continue
        c = COLORS.get(m, '#000')
        xy = [(x0 + w * p[0] / xmax, y0 + h - h * lost_y(p[1])) for p in s]
        out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' % (
            c, ' '.join('%.1f,%.1f' % q for q in xy)))
        for (x, y), p in zip(xy, s):
            out.append('<circle cx="%.1f" cy="%.1f" r="4" fill="%s"><title>%s: %s/s per CPU asked, '
                       '%.0f/s held, %d lost</title></circle>' % (x, y, c, m, p[2], p[0], p[3]))
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>' % (
            lx, ly - 4, lx + 20, ly - 4, c))
        out.append(text(lx + 26, ly, NAMES.get(m, m), 'start', 12))
        ly += 16


def cpu_panel(out, main, methods, x0, y0, w, h):
    ms = [m for m in methods if main.get(m)]
    ymax = nice(max([max(main[m]) for m in ms] + [1]))
    out.append(text(x0 + w / 2, y0 - 10, 'guest CPU per MB (min / median / max)', 'middle', 14))
    axes(out, x0, y0, w, h, 0, ymax, 'threads + kworkers, %d run(s) each' % max(
        [len(main[m]) for m in ms] + [0]), 'CPU ms per MB of markers', xticks=False)
    bw = w / max(len(ms), 1)
    for i, m in enumerate(ms):
        v = main[m]
        c = COLORS.get(m, '#000')
        cx = x0 + bw * (i + 0.5)
        med = statistics.median(v)
        ytop = y0 + h - h * med / ymax
        out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" opacity="0.8">'
                   '<title>%s: %.1f ms/MB</title></rect>' % (cx - bw * 0.3, ytop, bw * 0.6,
                                                             y0 + h - ytop, c, m, med))
        lo, hi = (y0 + h - h * min(v) / ymax, y0 + h - h * max(v) / ymax)
        out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#000"/>' % (cx, lo, cx, hi))
        for y in (lo, hi):
            out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#000"/>' % (
                cx - 6, y, cx + 6, y))
        out.append(text(cx + bw * 0.3 + 2, max(ytop + 12, y0 + 14), '%.0f' % med, 'start', 11))
        out.append(text(cx, y0 + h + 16, m, 'middle', 11))


def main():
    path, runs, methods, dest = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(','), sys.argv[4]
    mains, sweep = parse(path, runs)
    methods = [m for m in methods if m in mains or m in sweep]
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="960" height="400" '
           'font-family="sans-serif" viewBox="0 0 960 400">',
           '<rect width="960" height="400" fill="#fff"/>']
    sweep_panel(out, sweep, [m for m in methods if m != 'none'], 90, 40, 440, 300)
    cpu_panel(out, mains, methods, 640, 40, 300, 300)
    out.append('</svg>')
    with open(dest, 'w') as f:
        f.write('\n'.join(out) + '\n')


if __name__ == '__main__':
    main()
