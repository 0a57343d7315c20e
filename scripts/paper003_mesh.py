#!/usr/bin/env python3
"""paper003_mesh.py: the columns of paper 003's aggregate-operation cost
table ("Timings for Various Aggregate Communication Operations", Grama,
Kumar, Ranka, Singh, slides) beside the measured algorithms behind them.

Reads 'commcost aggregate --impl textbook,mesh1d,mesh2d' records (JSON
Lines) and, for each implementation, fits the t_s and t_w of its own column
(textbook: the hypercube column, mesh1d: the 1-D mesh, mesh2d: the 2-D
mesh; t_h = 0, no hops on a cluster) by least squares with relative weights
(as commcost fits), then prints, per operation and size, the measured median
with its 95% CI beside the column's prediction and the other two columns'
with the same t_s and t_w. The table is model.AggregateCost's (its Go
implementation is the reference; TestSuperstepsCostTable checks it against
the algorithms' rounds).

usage: scripts/paper003_mesh.py RECORDS.jsonl [--markdown]
"""
import json
import math
import os
import sys

COLUMN = {"textbook": "hypercube", "mesh1d": "mesh1d", "mesh2d": "mesh2d"}

# A record's bounds, as the Go reader checks them (results.CheckValues and
# the aggregate bench's parameter check): a time other than 0 is within
# [results.MinRecordSeconds, results.MaxRecordSeconds], a message size within
# [0, mpi.MaxCount] bytes (one MPI call's C int count), a rank count within
# [1, results.MaxRecordRanks]. Within them the fit's weights 1/y^2 and the
# table's terms stay finite.
MIN_SECONDS, MAX_SECONDS = 1e-12, 1e9
MAX_BYTES = 2**31 - 1
MAX_RANKS = 1 << 24


def cost(op, topo, p, m):
    """(a, b) with the table's time a t_s + b t_w m for t_h = 0; the 2-D
    column with sqrt p for the mesh side, as the table."""
    lg, sp = math.log2(p), math.sqrt(p)
    rows = {
        "bcast": ((lg, lg), (lg, lg), (lg, lg)),
        "allgather": ((p - 1, p - 1), (2 * (sp - 1), p - 1), (lg, p - 1)),
        "scatter": ((p - 1, p - 1), (2 * (sp - 1), p - 1), (lg, p - 1)),
        "alltoall": ((p - 1, p / 2 * (p - 1)), (2 * (sp - 1), p * (sp - 1)), (p - 1, p - 1)),
        "qshift": ((p // 2, p // 2), (2 * (sp // 2) + 1, 2 * (sp // 2) + 1), (1, 1)),
    }
    a, b = rows[op][["mesh1d", "mesh2d", "hypercube"].index(topo)]
    return a, b * m


def worst_q(impl, p):
    """The q at which the table's q-shift entry is the algorithm's cost."""
    if impl == "mesh1d":
        return p // 2
    if impl == "mesh2d":
        s = int(math.isqrt(p))
        return s // 2 * s + s // 2
    return None  # the textbook's one exchange costs the same at every q


def fit(points):
    """Weighted least squares of y = a t_s + b t_w, weights 1/y."""
    saa = sab = sbb = say = sby = 0.0
    for a, b, y in points:
        w = 1 / (y * y)
        saa += w * a * a
        sab += w * a * b
        sbb += w * b * b
        say += w * a * y
        sby += w * b * y
    det = saa * sbb - sab * sab
    if not det > 1e-9 * saa * sbb:
        return None  # one size and p, or proportional points: t_s and t_w are not separable
    ts = (say * sbb - sby * sab) / det
    tw = (saa * sby - sab * say) / det
    res = [((y - a * ts - b * tw) / y) for a, b, y in points]
    rse = math.sqrt(sum(r * r for r in res) / max(len(points) - 2, 1))
    return ts, tw, rse


def refuse(msg):
    """Bad input: one line on stderr, exit status 2."""
    print(f"paper003_mesh.py: {msg}", file=sys.stderr)
    sys.exit(2)


def number(v):
    """v as a float when it is a JSON number (not a string, a bool or null)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{json.dumps(v)} is not a number")
    return float(v)


def count(path, n, field, v, lo, hi, unit):
    """Refuse field unless v is a JSON integer from lo to hi (an integral
    float such as 8.0 passes, as the Go reader reads it)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (math.isfinite(v) and v == int(v) and lo <= v <= hi):
        refuse(f"{path} line {n}: {field} {json.dumps(v)}: want an integer from {lo} to {hi} {unit}")
    return int(v)


def read_records(path):
    """The aggregate records of a JSON Lines file; a file that is not a
    regular file (a FIFO would block), a line that is not a record, a
    median or CI outside [MIN_SECONDS, MAX_SECONDS], or a size, rank count
    or shift that is not an integer within its bound is refused, naming the
    line and the field."""
    if not os.path.isfile(path):
        what = "missing" if not os.path.exists(path) else "not a regular file"
        refuse(f"RECORDS.jsonl {path!r}: {what} (want a JSON Lines file of commcost aggregate records)")
    recs = []
    seen = {}  # a record's point (params and ranks) -> its line
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
                if r.get("bench") != "aggregate":
                    continue
                y, lo, hi = number(r["median"]), number(r["ci95"][0]), number(r["ci95"][1])
                pr = r["params"]
                pr["op"], pr["bytes"], r["ranks"], pr.get("q")
            except (ValueError, KeyError, TypeError, IndexError, AttributeError) as e:
                why = e.msg if isinstance(e, json.JSONDecodeError) else f"{type(e).__name__} {e}"
                refuse(f"{path} line {n}: not a commcost aggregate record ({why})")
            if not all(MIN_SECONDS <= v <= MAX_SECONDS for v in (y, lo, hi)) or not lo <= y <= hi:
                refuse(f"{path} line {n}: median {y} with ci95 [{lo}, {hi}]: want times from {MIN_SECONDS:g} to {MAX_SECONDS:g} s with the median inside its CI")
            pr["bytes"] = count(path, n, "params.bytes", pr["bytes"], 0, MAX_BYTES, "bytes")
            r["ranks"] = count(path, n, "ranks", r["ranks"], 1, MAX_RANKS, "ranks")
            if pr.get("q") is not None:
                pr["q"] = count(path, n, "params.q", pr["q"], 0, r["ranks"] - 1, "(below ranks)")
            r["median"], r["ci95"] = y, [lo, hi]
            # The same point twice would weigh it double in the fit.
            key = (json.dumps(pr, sort_keys=True), r["ranks"])
            if key in seen:
                refuse(f"{path} lines {seen[key]} and {n}: the same record twice (params {json.dumps(pr, sort_keys=True)}, ranks {r['ranks']}): want each point once")
            seen[key] = n
            recs.append(r)
    if not recs:
        refuse(f"{path}: no aggregate records (run 'commcost aggregate --impl textbook,mesh1d,mesh2d --out FILE')")
    return recs


def main():
    args = sys.argv[1:]
    if args[:1] in (["-h"], ["--help"]):
        print(__doc__.strip())
        return
    files = [a for a in args if a != "--markdown"]
    if len(files) != 1 or any(a.startswith("-") and a != "--markdown" for a in args):
        refuse("usage: scripts/paper003_mesh.py RECORDS.jsonl [--markdown]")
    md = "--markdown" in args
    recs = read_records(files[0])
    printed = False
    for impl in ("textbook", "mesh1d", "mesh2d"):
        sel = []
        for r in recs:
            pr = r["params"]
            if pr.get("impl") != impl or pr["op"] not in ("bcast", "allgather", "scatter", "alltoall", "qshift"):
                continue
            p = r["ranks"]
            if pr["op"] == "qshift" and worst_q(impl, p) is not None and pr.get("q") != worst_q(impl, p):
                continue
            sel.append(r)
        if not sel:
            continue
        printed = True
        pts = []
        for r in sel:
            a, b = cost(r["params"]["op"], COLUMN[impl], r["ranks"], r["params"]["bytes"])
            pts.append((a, b, r["median"]))
        fitted = fit(pts)
        if fitted is None:
            refuse(f"{files[0]}: the {impl} records cannot separate t_s from t_w (want the table's operations at two or more sizes or rank counts)")
        ts, tw, rse = fitted
        if ts < 0 or tw < 0:
            # A negative start-up or per-byte time is no machine's: the
            # records do not follow the column's cost model.
            refuse(f"{files[0]}: the {impl} records fit t_s = {ts * 1e6:.3g} us, t_w = {tw * 1e9:.3g} ns/B to the {COLUMN[impl]} column: "
                   f"a negative parameter, so the records do not follow the model (want times that grow with the table's a t_s + b t_w m)")
        others = []
        for topo in ("hypercube", "mesh1d", "mesh2d"):
            alt = [cost(r["params"]["op"], topo, r["ranks"], r["params"]["bytes"]) + (r["median"],) for r in sel]
            f = fit(alt)
            others.append(f"{topo} {f[2] * 100:.0f}%" if f else f"{topo} (no fit)")
        print(f"\n{impl} records (the {COLUMN[impl]} column's algorithm), t_s = {ts * 1e6:.3g} us, "
              f"t_w = {tw * 1e9:.3g} ns/B fitted to its own column (relative RSE {rse * 100:.0f}%; "
              f"each column fitted to these records: {', '.join(others)}); "
              f"times in us, error of the column vs measured:")
        cols = ["op", "p", "m (B)", "measured [95% CI]"] + [c + (" (own)" if c == COLUMN[impl] else "") for c in ("hypercube", "mesh1d", "mesh2d")]
        if md:
            print("| " + " | ".join(cols) + " |")
            print("|" + "---|" * len(cols))
        else:
            print("  ".join(cols))
        for r in sorted(sel, key=lambda r: (r["params"]["op"], r["ranks"], r["params"]["bytes"])):
            pr = r["params"]
            y = r["median"]
            cells = [pr["op"] + (f" q={pr.get('q')}" if pr["op"] == "qshift" and pr.get("q") is not None else ""), str(r["ranks"]), str(pr["bytes"]),
                     f"{y * 1e6:.1f} [{r['ci95'][0] * 1e6:.1f}, {r['ci95'][1] * 1e6:.1f}]"]
            for topo in ("hypercube", "mesh1d", "mesh2d"):
                a, b = cost(pr["op"], topo, r["ranks"], pr["bytes"])
                v = a * ts + b * tw
                cells.append(f"{v * 1e6:.1f} ({(v - y) / y * 100:+.0f}%)")
            print(("| " + " | ".join(cells) + " |") if md else "  ".join(cells))
    if not printed:
        refuse(f"{files[0]}: no records of the table's operations (bcast, allgather, scatter, alltoall, qshift) with --impl textbook, mesh1d or mesh2d")


if __name__ == "__main__":
    main()
