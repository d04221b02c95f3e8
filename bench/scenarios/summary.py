#!/usr/bin/env python3
"""The table and JSON summary of bench/scenarios.sh, from the files of its work folder.

    summary.py DIR ROUNDS DURATION ARMS PLANNED OUT LOAD

DIR is one phase's folder. Per arm and round: iterations (reads + checkout iterations), of which
reads and checkouts, requests, failures, the load generator's CPU time (user+sys, seconds), CPU
µs per iteration and per request; with PLANNED > 0 (the paced phase: the iterations the load
asks for), the share of them each arm ran. `pair` is the sum of its two runs (`reads`, then `checkout`). The table shows the
medians over rounds; the ratios are taken per round, then their median: two / locust and
two / pair, of CPU µs per iteration. OUT gets every run, the medians and the ratios.
"""
import csv
import json
import statistics
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def cpu_s(path):
    measured = load(path)
    return measured["user_s"] + measured["sys_s"], measured["wall_s"]


def loadgate(work, name, r):
    """Reads, checkouts, requests, failures and CPU of loadgate's run NAME in round R."""
    result = load(f"{work}/{name}-{r}.result.json")
    reads = sum(t["requests"] for t in result["targets"] if t["name"] == "read")
    flows = [f for f in result.get("flows") or [] if f["name"] == "checkout"]
    checkouts = sum(f["iterations"] for f in flows)
    failed = sum(t["errors"] for t in result["targets"] if t["name"] == "read")
    failed += sum(f["failed"] for f in flows)
    cpu, wall = cpu_s(f"{work}/{name}-{r}.json")
    return {"reads": reads, "checkouts": checkouts, "requests": result["total"]["requests"],
            "failed": failed, "cpu_s": cpu, "wall_s": wall}


def locust(work, r):
    """The same from Locust's stats CSV: `read` requests, `cart` requests (the checkout
    iterations that ended), every request, every failure."""
    rows = {}
    with open(f"{work}/locust-{r}_stats.csv", newline="") as f:
        for row in csv.DictReader(f):
            rows[row["Name"]] = row
    count = lambda name: int(rows[name]["Request Count"]) if name in rows else 0
    cpu, wall = cpu_s(f"{work}/locust-{r}.json")
    return {"reads": count("read"), "checkouts": count("cart"),
            "requests": count("Aggregated"),
            "failed": int(rows["Aggregated"]["Failure Count"]) if "Aggregated" in rows else 0,
            "cpu_s": cpu, "wall_s": wall}


def arm_run(work, arm, r):
    if arm == "locust":
        run = locust(work, r)
    elif arm == "two":
        run = loadgate(work, "two", r)
    else:  # pair: the two one-scenario runs, summed
        a, b = loadgate(work, "reads", r), loadgate(work, "checkout", r)
        run = {key: a[key] + b[key] for key in a}
    run["iterations"] = run["reads"] + run["checkouts"]
    run["cpu_us_per_iteration"] = round(1e6 * run["cpu_s"] / max(run["iterations"], 1), 1)
    run["cpu_us_per_request"] = round(1e6 * run["cpu_s"] / max(run["requests"], 1), 1)
    run["cpu_s"] = round(run["cpu_s"], 3)
    run["round"] = r
    return run


def main(work, rounds, duration, arms, planned, out, load_text):
    rounds, duration, arms, planned = int(rounds), float(duration), arms.split(), int(planned)
    runs = {arm: [arm_run(work, arm, r) for r in range(1, rounds + 1)] for arm in arms}
    for run in (run for arm in arms for run in runs[arm]):
        run["of_planned"] = round(run["iterations"] / planned, 3) if planned else None
    keys = ("iterations", "reads", "checkouts", "requests", "failed", "cpu_s",
            "cpu_us_per_iteration", "cpu_us_per_request")
    medians = {arm: {key: statistics.median(run[key] for run in runs[arm]) for key in keys}
               for arm in arms}
    ratios = {}
    for name, over in (("two_over_locust", "locust"), ("two_over_pair", "pair")):
        if "two" in runs and over in runs:
            by_round = [t["cpu_us_per_iteration"] / o["cpu_us_per_iteration"]
                        for t, o in zip(runs["two"], runs[over])]
            ratios[name] = {"median": round(statistics.median(by_round), 3),
                            "by_round": [round(x, 3) for x in by_round]}
    summary = {"load": load_text, "duration_s": duration, "rounds": rounds,
               "planned_iterations": planned or None, "runs": runs,
               "medians": medians, "cpu_per_iteration_ratios": ratios}
    with open(out, "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")

    print(f"{load_text}; {duration:g} s, {rounds} round(s): medians")
    print(f"{'arm':8} {'iterations':>10} {'reads':>8} {'checkouts':>9} {'requests':>9} "
          f"{'failed':>7} {'cpu_s':>7} {'cpu_us/it':>10} {'cpu_us/req':>10}"
          + (f" {'of plan':>8}" if planned else ""))
    for arm, m in medians.items():
        print(f"{arm:8} {m['iterations']:>10.0f} {m['reads']:>8.0f} {m['checkouts']:>9.0f} "
              f"{m['requests']:>9.0f} {m['failed']:>7.0f} {m['cpu_s']:>7.2f} "
              f"{m['cpu_us_per_iteration']:>10.1f} {m['cpu_us_per_request']:>10.1f}"
              + (f" {m['iterations'] / planned:>8.1%}" if planned else ""))
    goals = {"two_over_locust": "issue: <= 0.25", "two_over_pair": "issue: <= 1.05"}
    for name, ratio in ratios.items():
        print(f"CPU per iteration, {name.replace('_over_', ' / ')}: {ratio['median']:.3f} "
              f"(rounds {ratio['by_round']}; {goals[name]})")
    if "locust" in runs and "pair" in runs:
        by_round = [p["cpu_us_per_iteration"] / l["cpu_us_per_iteration"]
                    for p, l in zip(runs["pair"], runs["locust"])]
        print(f"CPU per iteration, pair / locust (no scenarios): "
              f"{statistics.median(by_round):.3f} (rounds {[round(x, 3) for x in by_round]})")


if __name__ == "__main__":
    main(*sys.argv[1:])
