#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# ks-combo-check.py: where KernelShark drew a KVM combo plot, from two screenshots
# of one session (PPM, xwdtopnm's), with the kvm_combo plugin on and off.
#
#   ks-combo-check.py ON.ppm OFF.ppm EXITS GAP_US SPACING_US
#
# What the plugin draws is what differs between the two: a line at the guest's
# level while the vCPU is in guest mode and at the host's level from a kvm_exit
# to the next kvm_entry.  The session shows one window of test-interop.sh's
# capture: EXITS exits, one every SPACING_US, then the guest's timer fires
# GAP_US after the last kvm_entry and its events (ticks above the line) follow.
# Checked: EXITS exits of one width at one spacing, every guest tick where the
# line says guest mode, the first one GAP_US after the last entry (+-10%% of a
# spacing: pixels, not ns).  Prints "ok"/"not ok" lines, each with a "# " line.
import sys


def ppm(path):
    data = open(path, 'rb').read()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    w, h = int(fields[1]), int(fields[2])
    return w, h, data[pos + 1:]


def check(cond, name, why):
    print('%s %s' % ('ok' if cond else 'not ok', name))
    print('# %s: %s' % (name, why))


def runs(cols):
    """Maximal runs of consecutive columns: [(first, last)]"""
    out = []
    for x in sorted(cols):
        if out and x == out[-1][1] + 1:
            out[-1][1] = x
        else:
            out.append([x, x])
    return out


def main():
    (w, h, on), (w2, h2, off) = ppm(sys.argv[1]), ppm(sys.argv[2])
    exits, gap, spacing = int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
    if (w, h) != (w2, h2):
        check(False, 'kernelshark_combo_drawn', 'screenshots of different sizes')
        return
    px = lambda img, x, y: img[3 * (y * w + x):3 * (y * w + x) + 3]
    diff = {(x, y) for y in range(h) for x in range(w) if px(on, x, y) != px(off, x, y)}
    per_row = {}
    for x, y in diff:
        per_row[y] = per_row.get(y, 0) + 1
    if len(diff) < 200:
        check(False, 'kernelshark_combo_drawn', '%d pixels differ' % len(diff))
        return
    # the line at the guest's level: the fullest row; at the host's level it is drawn
    # over the vCPU thread's own bar, so an exit is a gap between the runs at the top
    top = max(per_row, key=lambda y: per_row[y])
    up = {x for x, y in diff if abs(y - top) <= 1}
    guest = runs(up)
    ex = [(a[1] + 1, b[0] - 1) for a, b in zip(guest, guest[1:])]
    check(len(ex) == exits and per_row[top] > 100, 'kernelshark_combo_drawn',
          '%d pixels differ, the guest-mode line at y %d: %d runs %s, %d exits' %
          (len(diff), top, len(guest), guest[:8], len(ex)))
    if len(ex) != exits or exits < 2:
        return
    widths = [b - a for a, b in ex]
    starts = [a for a, b in ex]
    steps = [b - a for a, b in zip(starts, starts[1:])]
    step = sum(steps) / len(steps)
    check(max(widths) - min(widths) <= 2 and max(steps) - min(steps) <= 2,
          'kernelshark_combo_exits_evenly_drawn', 'widths %s, spacing %s px' % (widths, steps))
    # the guest's ticks: columns right of the plot's start with dark pixels in the band
    # above the line (the guest CPU's graph of the combo)
    x0 = min(up)
    dark = lambda p: sum(p) < 3 * 200
    ticks = sorted(x for x in range(x0, w)
                   if sum(dark(px(on, x, y)) for y in range(top - 20, top - 3)) >= 5)
    last_entry = ex[-1][1]
    first = ticks[0] if ticks else -1
    rel = (first - last_entry) / step if ticks else -1
    check(ticks and all(t in up or t > last_entry for t in ticks) and
          abs(rel - gap / spacing) <= 0.1,
          'kernelshark_combo_guest_events_in_guest_mode',
          'guest ticks at x %s, last kvm_entry at x %d, exits every %.1f px: the first tick'
          ' %.3f spacings after the entry, expected %.3f' %
          (ticks[:6], last_entry, step, rel, gap / spacing))


main()
