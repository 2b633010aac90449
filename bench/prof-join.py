#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""prof-join.py DIR [CALLS_DEF]: where requests' time went (xgpu_prof.h).

Joins DIR/guest.*.txt and DIR/worker.*.txt (XGPU_PROF=DIR on both sides,
one channel each, the local transport) by request id and prints, per op,
the medians and means in microseconds of:
  to-worker  posted by the guest library -> taken off the ring by the worker
  pre        taken -> the op's handler called (checks, its context, the
             GPU scheduler's gate)
  call       the handler (the driver's call inside)
  post       the handler returned -> the request dispatched (the gate)
  publish    returned -> the reply's index pushed (posted replies are held
             back in batches: theirs is long and nobody waits for it)
  back       pushed -> the guest library took the reply
  total      posted -> taken back
  next       the handler returned -> the worker took the next request, when
             that one was already waiting (the worker's own cost between
             two requests)
Pairs of files are matched in order of their pids when there are several.
"""
import glob
import os
import re
import signal
import sys


def load(path):
    recs = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) != 7:
                continue
            recs[int(p[0])] = tuple(int(x) for x in p[1:])
    return recs


def names(calls_def):
    out = {}
    try:
        with open(calls_def) as f:
            for m in re.finditer(r"XGPU_CALL\((\d+),\s*(\w+)", f.read()):
                out[int(m.group(1))] = m.group(2)
    except OSError:
        pass
    return out


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    d = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    nm = names(sys.argv[2] if len(sys.argv) > 2 else
               os.path.join(here, "..", "shared-ring", "xgpu_calls.def"))
    pid = lambda p: int(p.rsplit(".", 2)[-2])
    gs = sorted(glob.glob(os.path.join(d, "guest.*.txt")), key=pid)
    ws = sorted(glob.glob(os.path.join(d, "worker.*.txt")), key=pid)
    if not gs or len(gs) != len(ws):
        print("prof-join: %d guest and %d worker files in %s" %
              (len(gs), len(ws), d))
        return 1
    seg = {}
    for gp, wp in zip(gs, ws):
        g, w = load(gp), load(wp)
        for i, (op, gpost, gseen, _, _, _) in g.items():
            if i not in w or not gseen:
                continue
            _, wtake, wdone, wpub, wcall, wret = w[i]
            if not (wtake and wdone and wpub and wcall and wret):
                continue
            s = seg.setdefault(op, [[] for _ in range(8)])
            for k, v in enumerate((wtake - gpost, wcall - wtake,
                                   wret - wcall, wdone - wret,
                                   wpub - wdone, gseen - wpub,
                                   gseen - gpost)):
                s[k].append(v / 1e3)
            nxt = w.get(i + 1)
            if nxt and i + 1 in g and g[i + 1][1] < wdone and nxt[1]:
                s[7].append((nxt[1] - wdone) / 1e3)
    print("%-22s %7s  " % ("op (us: p50/mean)", "count") +
          " ".join("%-13s" % h for h in ("to-worker", "pre", "call", "post",
                                          "publish", "back", "total",
                                          "next")))
    for op in sorted(seg, key=lambda o: -len(seg[o][0])):
        s = seg[op]
        cells = ["%6.2f/%-6.2f" % (pct(x, 0.5), sum(x) / len(x))
                 if x else "   nan/nan   " for x in s]
        print("%-22s %7d  %s" % (nm.get(op, str(op))[:22], len(s[0]),
                                 " ".join(cells)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
