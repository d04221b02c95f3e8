#!/usr/bin/env python3
"""The table and JSON summary of bench/grpc.sh and bench/ws.sh, from the files of their work
folder: for each server, tool and round (1..ROUNDS, and `start`), WORK/SERVER-TOOL-ROUND.json
(bench/flow/measure.py's line: exit, wall_s, user_s, sys_s, max_rss_kib) and
WORK/SERVER-TOOL-ROUND.result.json (the tool's own report).

    summary.py --work W --rounds N --duration S --servers "A B" --tools "loadgate REF"
               --unit call|message --out OUT --load TEXT

What is counted, by each tool's own report:
  loadgate   ok = total.requests - total.errors (requests that ended without an error: a gRPC
             status other than OK, a transport error, a WebSocket close are errors)
  ghz        ok = statusCodeDistribution["OK"]; errors = count - ok
  artillery  ok = websocket.messages_received - the `errors.*` counters; errors = those counters
Per run: CPU s (user+sys of the whole process), CPU µs per ok unit, and CPU µs per ok unit net
of start-up (the run's CPU less the `start` run's: one unit on one connection), peak RSS, and
from WORK/SERVER-TOOL-ROUND.load.json (bench/grpc/common.sh) the cores the server used and the
cores the rest of the machine used (other sessions: above ~0.05 the figures are noisy). The
table shows the medians over rounds per server, then the median over rounds of the first tool's
CPU per unit ÷ each other tool's (both gross and net of start-up). OUT gets every run, the
medians and the ratios. Exit 1 when a run did not end cleanly or a tool has no run.
"""
import argparse
import json
import os
import statistics
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def counted(tool, result):
    """(ok, errors) from TOOL's own report."""
    if tool == "loadgate":
        total = result["total"]
        return total["requests"] - total["errors"], total["errors"]
    if tool == "ghz":
        ok = result.get("statusCodeDistribution", {}).get("OK", 0)
        return ok, result.get("count", 0) - ok
    if tool == "artillery":
        counters = result["aggregate"]["counters"]
        errors = sum(v for k, v in counters.items() if k.startswith("errors."))
        return max(counters.get("websocket.messages_received", 0) - errors, 0), errors
    raise ValueError(f"unknown tool {tool}")


def measured_run(work, server, tool, r):
    """One run's figures, or None when its files are missing (the tool failed)."""
    base = f"{work}/{server}-{tool}-{r}"
    if not (os.path.exists(f"{base}.json") and os.path.exists(f"{base}.result.json")):
        return None
    measured = load(f"{base}.json")
    try:
        ok, errors = counted(tool, load(f"{base}.result.json"))
    except (ValueError, KeyError, json.JSONDecodeError) as e:
        print(f"{server} {tool} round {r}: unreadable report ({e})", file=sys.stderr)
        return None
    cpu_s = measured["user_s"] + measured["sys_s"]
    machine = load(f"{base}.load.json") if os.path.exists(f"{base}.load.json") else {}
    wall = machine.get("wall_s") or measured["wall_s"]
    return {"server_cores": round(machine.get("server_cpu_s", 0) / wall, 2),
            "other_cores": round(machine.get("other_cpu_s", 0) / wall, 2),
            "round": r, "exit": measured["exit"], "killed": measured["killed"],
            "wall_s": measured["wall_s"], "user_s": round(measured["user_s"], 3),
            "sys_s": round(measured["sys_s"], 3), "cpu_s": round(cpu_s, 3), "ok": ok,
            "errors": errors, "max_rss_mib": round(measured["max_rss_kib"] / 1024, 1)}


def main():
    p = argparse.ArgumentParser()
    for name in ("work", "servers", "tools", "unit", "out", "load"):
        p.add_argument(f"--{name}", required=True)
    p.add_argument("--rounds", type=int, required=True)
    p.add_argument("--duration", type=float, required=True)
    a = p.parse_args()
    tools, unit, bad = a.tools.split(), a.unit, []
    summary = {"load": a.load, "unit": a.unit, "servers": {}}
    print(f"{a.load}; medians of {a.rounds} rounds; CPU = the client's user+sys, whole process")
    for server in a.servers.split():
        runs, medians, start = {}, {}, {}
        for tool in tools:
            start[tool] = measured_run(a.work, server, tool, "start")
            got = [measured_run(a.work, server, tool, r) for r in range(1, a.rounds + 1)]
            if not all(got):
                bad.append(f"{server}/{tool}: {got.count(None)} of {a.rounds} runs failed")
            got = [run for run in got if run]
            start_cpu = start[tool]["cpu_s"] if start[tool] else 0.0
            for run in got:
                run["per_s"] = round(run["ok"] / a.duration, 1)
                run["cpu_us"] = round(1e6 * run["cpu_s"] / max(run["ok"], 1), 2)
                run["net_cpu_us"] = round(1e6 * (run["cpu_s"] - start_cpu) / max(run["ok"], 1), 2)
                if run["killed"] or run["exit"] not in (0, 5):  # 5: loadgate's invalid measurement
                    bad.append(f"{server}/{tool} round {run['round']}: exit {run['exit']}")
            runs[tool] = got
            if got:
                medians[tool] = {k: statistics.median(run[k] for run in got) for k in
                                 ("ok", "per_s", "errors", "cpu_s", "cpu_us", "net_cpu_us",
                                  "max_rss_mib", "server_cores", "other_cores")}
        ratios = {}
        first = tools[0]
        for other in tools[1:]:
            pairs = [(x, y) for x in runs.get(first, []) for y in runs.get(other, [])
                     if x["round"] == y["round"]]
            if pairs:  # per round, then the median: drift hits both alike
                ratios[f"{first}/{other}"] = {
                    "cpu_per_" + unit: round(statistics.median(x["cpu_us"] / y["cpu_us"] for x, y in pairs), 3),
                    "net_cpu_per_" + unit: round(statistics.median(x["net_cpu_us"] / y["net_cpu_us"] for x, y in pairs), 3),
                    "rounds": [round(x["cpu_us"] / y["cpu_us"], 3) for x, y in pairs]}
        print(f"\nserver: {server}")
        print(f"| tool | {unit}s ok | {unit}s/s | errors | CPU s | CPU µs / {unit} | "
              f"start-up CPU s | CPU µs / {unit}, net of start-up | max RSS MiB | server cores | "
              "other cores |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for tool in tools:
            m = medians.get(tool)
            if not m:
                print(f"| {tool} | failed | | | | | | | | | |")
                continue
            s = f"{start[tool]['cpu_s']:.2f}" if start[tool] else "-"
            print(f"| {tool} | {m['ok']:,.0f} | {m['per_s']:,.0f} | {m['errors']:,.0f} | "
                  f"{m['cpu_s']:.2f} | {m['cpu_us']:.2f} | {s} | {m['net_cpu_us']:.2f} | "
                  f"{m['max_rss_mib']:.1f} | {m['server_cores']:.2f} | {m['other_cores']:.2f} |")
        for name, r in ratios.items():
            print(f"{name}, CPU per {unit}: {r['cpu_per_' + unit]} (rounds "
                  f"{', '.join(map(str, r['rounds']))}); net of start-up: {r['net_cpu_per_' + unit]}")
        summary["servers"][server] = {"runs": runs, "start": start, "medians": medians,
                                      "ratios": ratios}
    with open(a.out, "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    print(f"\nsummary: {a.out}")
    if bad:
        print("runs that did not end cleanly: " + "; ".join(bad), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
