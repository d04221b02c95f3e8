#!/usr/bin/env python3
"""Helpers of bench/compare.sh.

  compare_report.py loadgate-errors RESULT.json
      prints "errors=N", with ";dropped=N" (open model) and ";invalid: why" when loadgate
      judged its own measurement invalid
  compare_report.py report RUNS.tsv STARTUP.tsv SETTINGS
      prints the Markdown tables: medians over the kept rounds, and loadgate's ratio to each tool

RUNS.tsv has one line per run: scenario tool round requests rps cpu_us rss_kb other_cores
nginx_cores clean wall extra. A run is kept when `clean` is 1 (other processes used at most
OTHER_MAX cores during it); when no run of a (scenario, tool) is clean, all of them are used and
the row says so.
"""
import json
import statistics
import sys


def loadgate_errors(path):
    r = json.load(open(path))
    out = ["errors=%d" % r["total"]["errors"]]
    health = r.get("health", {})  # results of older loadgates have no health
    dropped = sum(s.get("dropped", 0) for s in health.get("stages", []))
    if dropped:
        out.append("dropped=%d" % dropped)
    if not health.get("valid", True):
        out.append("invalid: " + " / ".join(health.get("problems", []))[:80].replace(";", ","))
    print(";".join(out))


def read_tsv(path):
    with open(path) as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


def fmt_ratio(a, b):
    return "%.2fx" % (a / b) if b else "-"


def report(runs_path, startup_path, settings):
    rows = {}
    order = []
    for f in read_tsv(runs_path):
        scen, tool = f[0], f[1]
        run = dict(requests=int(f[3]), rps=float(f[4]), cpu=float(f[5]), rss=int(f[6]) / 1024,
                   other=float(f[7]), nginx=float(f[8]), clean=f[9] == "1", extra=f[11])
        if (scen, tool) not in rows:
            order.append((scen, tool))
        rows.setdefault((scen, tool), []).append(run)

    def kept(runs):
        clean = [r for r in runs if r["clean"]]
        return (clean, "") if clean else (runs, " (all BUSY)")

    med = {}
    for key, runs in rows.items():
        k, _ = kept(runs)
        med[key] = {m: statistics.median(r[m] for r in k) for m in ("rps", "cpu", "rss", "other", "nginx")}

    print("loadgate compared (%s)" % settings)
    print()
    load = [key for key in order if not key[0].startswith("flat-")]
    if load:
        print("| scenario | tool | req/s | CPU µs/req | max RSS MB | loadgate÷tool req/s | "
              "loadgate÷tool CPU/req | loadgate÷tool RSS | nginx cores | other cores | clean/runs | notes |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for scen, tool in load:
        runs = rows[(scen, tool)]
        k, flag = kept(runs)
        m = med[(scen, tool)]
        lg = med.get((scen, "loadgate"))
        if lg and tool != "loadgate":
            ratios = [fmt_ratio(lg["rps"], m["rps"]), fmt_ratio(lg["cpu"], m["cpu"]),
                      fmt_ratio(lg["rss"], m["rss"])]
        else:
            ratios = ["-", "-", "-"]
        notes = []
        per_run = [[p for p in r["extra"].split(";") if p and p != "-"] for r in k]
        for key in dict.fromkeys(p.split("=")[0].split(":")[0] for parts in per_run for p in parts):
            values = [p for parts in per_run for p in parts if p.split("=")[0].split(":")[0] == key]
            if key == "target":  # the open model's rate, requests/s
                rate = float(values[0][len("target="):])
                notes.insert(0, "rate error %+.2f%%" % (100 * (m["rps"] - rate) / rate))
            elif key == "established":
                counts = [int(v.split("=")[1].split("/")[0]) for v in values]
                notes.append("established min %d/%s" % (min(counts), values[0].split("/")[1]))
            elif key == "invalid":  # loadgate's own verdict: the first run's words, and how often
                notes.append("invalid in %d of %d runs (%s)" % (len(values), len(k), values[0][len("invalid: "):]))
            elif "=" in values[0]:  # errors=N, dropped=N: each run's, when they differ
                counts = list(dict.fromkeys(v.split("=", 1)[1] for v in values))
                notes.append("%s=%s" % (key, "/".join(counts)))
            else:
                notes.extend(dict.fromkeys(values))
        print("| %s | %s | %.0f | %.2f | %.1f | %s | %s | %s | %.2f | %.2f | %d/%d%s | %s |" % (
            scen, tool, m["rps"], m["cpu"], m["rss"], *ratios, m["nginx"], m["other"],
            sum(r["clean"] for r in runs), len(runs), flag, ", ".join(notes)))

    flat = {}  # tool -> [(seconds, run)], in the order run
    for scen, tool in order:
        if scen.startswith("flat-"):
            flat.setdefault(tool, []).append((int(scen[len("flat-"):-1]), rows[(scen, tool)][-1]))
    if flat:
        print()
        print("Memory over run length (c=50, hello body): max RSS of a short and a long run")
        print()
        print("| tool | short run | max RSS MB | long run | max RSS MB | long÷short RSS | req short / long | other cores |")
        print("|---|---|---:|---|---:|---:|---:|---:|")
        for tool, runs in flat.items():
            (s_secs, short), (l_secs, long) = runs[0], runs[-1]
            busy = "" if short["clean"] and long["clean"] else " BUSY"
            print("| %s | %ds | %.1f | %ds | %.1f | %s | %d / %d | %.2f / %.2f%s |" % (
                tool, s_secs, short["rss"], l_secs, long["rss"], fmt_ratio(long["rss"], short["rss"]),
                short["requests"], long["requests"], short["other"], long["other"], busy))

    startup = {}
    for f in read_tsv(startup_path):
        startup.setdefault(f[1], []).append((float(f[3]), float(f[4])))
    if startup:
        print()
        print("Start-up: from exec to the first request nginx logged, and to the exit "
              "(one request on one connection; wrk, rewrk and floor run for 1 s)")
        print()
        print("| tool | first request ms (median) | exit ms (median) | runs |")
        print("|---|---:|---:|---:|")
        for tool, runs in startup.items():
            print("| %s | %.0f | %.0f | %d |" % (tool, statistics.median(r[0] for r in runs),
                                               statistics.median(r[1] for r in runs), len(runs)))


if __name__ == "__main__":
    if sys.argv[1] == "loadgate-errors":
        loadgate_errors(sys.argv[2])
    elif sys.argv[1] == "report":
        report(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit("usage: compare_report.py loadgate-errors RESULT.json | report RUNS STARTUP SETTINGS")
