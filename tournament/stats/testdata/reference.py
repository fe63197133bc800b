#!/usr/bin/env python3
"""Independent reference for tournament/stats: the fishtest formulas
(stat_util.py, LLRcalc.py) written from their description, with other
numerics than the Go code (Newton's method on the Lagrange multiplier instead
of bisection). Reads JSON [{"counts": [...], "elo0", "elo1", "model"}] on
stdin and writes the figures as JSON."""
import json, math, sys

Z = 1.959963984540054
C = 800 / math.log(10)

def stats(p, x):
    mu = sum(pi * xi for pi, xi in zip(p, x))
    var = sum(pi * (xi - mu) ** 2 for pi, xi in zip(p, x))
    return mu, var

def elo(s):
    return -400 * math.log10(1 / s - 1)

def secular(f, a):
    # root of sum f a / (1 + l a) = 0 by Newton from 0, kept inside the
    # interval where every 1 + l a > 0 by halving the step
    lo = max(-1 / v for v in a if v > 0)
    hi = min(-1 / v for v in a if v < 0)
    lam = 0.0
    for _ in range(500):
        g = sum(fi * ai / (1 + lam * ai) for fi, ai in zip(f, a))
        dg = -sum(fi * ai * ai / (1 + lam * ai) ** 2 for fi, ai in zip(f, a))
        step = -g / dg
        new = lam + step
        while not (lo < new < hi):
            step /= 2
            new = lam + step
        if abs(new - lam) < 1e-15:
            lam = new
            break
        lam = new
    return [fi / (1 + lam * ai) for fi, ai in zip(f, a)]

def mle_mean(f, x, s):
    return secular(f, [xi - s for xi in x])

def mle_t(f, x, t):
    p = [1 / len(f)] * len(f)
    for _ in range(100):
        mu, var = stats(p, x)
        sd = math.sqrt(var)
        a = [xi - 0.5 - t * sd * (1 + ((mu - xi) / sd) ** 2) / 2 for xi in x]
        q = secular(f, a)
        if max(abs(u - v) for u, v in zip(p, q)) < 1e-12:
            p = q
            break
        p = q
    return p

def figures(case):
    counts = case["counts"]
    penta = len(counts) == 5
    x = [0, 0.25, 0.5, 0.75, 1] if penta else [1, 0.5, 0]
    n = sum(counts)
    p = [c / n for c in counts]
    mu, var = stats(p, x)
    se = math.sqrt(var / n)
    # Only what is finite: a score of 100%, or an interval that leaves
    # (0, 1), has no finite Elo here, and such keys are left out.
    out = {}
    if 0 < mu < 1:
        out["elo"] = elo(mu)
    if 0 < mu - Z * se and mu + Z * se < 1:
        out["elo_error"] = (elo(mu + Z * se) - elo(mu - Z * se)) / 2
    k = math.sqrt(2) if penta else 1
    if var > 0:
        out["los"] = 0.5 * (1 + math.erf((mu - 0.5) / se / math.sqrt(2)))
        out["nelo"] = (mu - 0.5) / (k * math.sqrt(var)) * C
    out["nelo_error"] = Z * C / math.sqrt((2 if penta else 1) * n)
    reg = [c if c > 0 else 1e-3 for c in counts]
    f = [c / sum(reg) for c in reg]
    if case["model"] == "normalized":
        p0, p1 = mle_t(f, x, case["elo0"] / C * k), mle_t(f, x, case["elo1"] / C * k)
    else:
        s = lambda e: 1 / (1 + 10 ** (-e / 400))
        p0, p1 = mle_mean(f, x, s(case["elo0"])), mle_mean(f, x, s(case["elo1"]))
    out["llr"] = n * sum(fi * math.log(b / a) for fi, a, b in zip(f, p0, p1))
    return out

json.dump([figures(c) for c in json.load(sys.stdin)], sys.stdout)
