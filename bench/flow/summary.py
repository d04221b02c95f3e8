#!/usr/bin/env python3
"""The table and JSON summary of bench/flow/run.sh, from the files of its work folder.

    summary.py WORK ROUNDS VUS DURATION LONG OUT

Per tool and round: iterations (requests for `plain`), failures, the load generator's CPU time
(user+sys, seconds) and CPU µs per iteration (per request for `plain` and for a flow step).
The table shows the medians over rounds; OUT gets every run and the medians.
"""
import json
import statistics
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def main(work, rounds, vus, duration, long, out):
    rounds, duration, long = int(rounds), float(duration), float(long)
    runs = {"k6": [], "flow": [], "plain": []}
    for r in range(1, rounds + 1):
        for tool in runs:
            measured = load(f"{work}/{tool}-{r}.json")
            cpu_s = measured["user_s"] + measured["sys_s"]
            run = {"round": r, "exit": measured["exit"], "killed": measured["killed"],
                   "wall_s": measured["wall_s"], "cpu_s": round(cpu_s, 3)}
            if tool == "k6":
                metrics = load(f"{work}/k6-{r}.summary.json")["metrics"]
                run["iterations"] = metrics["iterations"]["count"]
                run["requests"] = metrics["http_reqs"]["count"]
                run["failed"] = metrics["checks"]["fails"] + metrics["http_req_failed"]["passes"]
            else:
                result = load(f"{work}/{tool}-{r}.result.json")
                run["requests"] = result["total"]["requests"]
                if tool == "flow":
                    flow = result["flows"][0]
                    run["iterations"] = flow["iterations"]
                    run["failed"] = flow["failed"]
                else:
                    run["iterations"] = run["requests"]
                    run["failed"] = result["total"]["errors"]
            run["iterations_per_s"] = round(run["iterations"] / duration, 1)
            run["cpu_us_per_iteration"] = round(1e6 * cpu_s / max(run["iterations"], 1), 1)
            run["cpu_us_per_request"] = round(1e6 * cpu_s / max(run["requests"], 1), 1)
            runs[tool].append(run)

    def median(tool, key):
        return statistics.median(run[key] for run in runs[tool])

    medians = {tool: {key: median(tool, key) for key in
                      ("iterations", "iterations_per_s", "cpu_s", "cpu_us_per_iteration",
                       "cpu_us_per_request", "failed")} for tool in runs}
    per_round = [f["cpu_us_per_iteration"] / k["cpu_us_per_iteration"]
                 for f, k in zip(runs["flow"], runs["k6"])]
    step_vs_plain = [f["cpu_us_per_request"] / p["cpu_us_per_request"]
                     for f, p in zip(runs["flow"], runs["plain"])]
    long_run = load(f"{work}/long.json")
    long_result = load(f"{work}/long.result.json")
    rss = long_run["rss_kib"]
    memory = {
        "seconds": long, "iterations": long_result["flows"][0]["iterations"],
        "samples": len(rss), "rss_kib": rss,
        "first_kib": rss[0] if rss else None, "last_kib": rss[-1] if rss else None,
        "max_kib": max(rss) if rss else None, "cpu_s": round(long_run["user_s"] + long_run["sys_s"], 3),
    }
    summary = {
        "virtual_users": int(vus), "duration_s": duration, "rounds": rounds,
        "runs": runs, "medians": medians,
        "cpu_per_iteration_loadgate_over_k6": round(statistics.median(per_round), 3),
        "cpu_per_iteration_loadgate_over_k6_by_round": [round(x, 3) for x in per_round],
        "cpu_per_step_over_plain_request": round(statistics.median(step_vs_plain), 3),
        "cpu_per_step_over_plain_request_by_round": [round(x, 3) for x in step_vs_plain],
        "memory": memory,
    }
    with open(out, "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")

    print(f"{vus} virtual users, {duration:g} s, {rounds} round(s): medians")
    print(f"{'tool':16} {'iterations':>10} {'it/s':>9} {'failed':>7} {'cpu_s':>7} "
          f"{'cpu_us/it':>10} {'cpu_us/req':>10}")
    names = {"k6": "k6", "flow": "loadgate flow", "plain": "loadgate plain"}
    for tool, m in medians.items():
        print(f"{names[tool]:16} {m['iterations']:>10.0f} {m['iterations_per_s']:>9.1f} "
              f"{m['failed']:>7.0f} {m['cpu_s']:>7.2f} {m['cpu_us_per_iteration']:>10.1f} "
              f"{m['cpu_us_per_request']:>10.1f}")
    print(f"CPU per iteration, loadgate / k6: {summary['cpu_per_iteration_loadgate_over_k6']:.3f}"
          f" (rounds {summary['cpu_per_iteration_loadgate_over_k6_by_round']}; issue: <= 0.25)")
    print(f"CPU per flow step / per plain request: {summary['cpu_per_step_over_plain_request']:.3f}"
          f" (rounds {summary['cpu_per_step_over_plain_request_by_round']}; issue: <= 1.3)")
    if rss:
        print(f"loadgate RSS over a {long:g} s flow run ({memory['iterations']} iterations, "
              f"{len(rss)} samples): first {rss[0] / 1024:.1f} MiB, last {rss[-1] / 1024:.1f} MiB, "
              f"max {max(rss) / 1024:.1f} MiB")
    print(f"summary: {out}")


if __name__ == "__main__":
    main(*sys.argv[1:])
