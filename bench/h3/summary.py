#!/usr/bin/env python3
"""The table and JSON summary of bench/h3/run.sh, from the files of its work folder.

    summary.py WORK ROUNDS DURATION OUT TOOL...

Per tool (lg-h2, lg-h3, oha-h2, oha-h3) and round: responses (loadgate: the result's
total.responses; oha: the sum of its statusCodeDistribution), errors, the load generator's CPU
time (user+sys, seconds, from wait4's rusage), CPU µs per response, peak RSS (MiB). The table
shows the medians over rounds, then the ratios: loadgate h3/h2 CPU per response (the issue: at
most 2), and where oha ran, loadgate against oha on each protocol (CPU per response and
responses per second) and oha's own h3/h2. OUT gets every run, the medians and the ratios.
"""
import json
import statistics
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def measured_run(work, tool, r, duration):
    measured = load(f"{work}/{tool}-{r}.json")
    result = load(f"{work}/{tool}-{r}.result.json")
    cpu_s = measured["user_s"] + measured["sys_s"]
    run = {"round": r, "exit": measured["exit"], "killed": measured["killed"],
           "wall_s": measured["wall_s"], "cpu_s": round(cpu_s, 3),
           "max_rss_mib": round(measured["max_rss_kib"] / 1024, 1)}
    if tool.startswith("lg-"):
        run["responses"] = result["total"]["responses"]
        run["errors"] = result["total"]["errors"]
        run["udp_buffers"] = result["environment"].get("udp_buffers")
    else:
        run["responses"] = sum(result.get("statusCodeDistribution", {}).values())
        run["errors"] = sum(result.get("errorDistribution", {}).values())
    run["responses_per_s"] = round(run["responses"] / duration, 1)
    run["cpu_us_per_response"] = round(1e6 * cpu_s / max(run["responses"], 1), 2)
    return run


def main(work, rounds, duration, out, *tools):
    rounds, duration = int(rounds), float(duration)
    runs = {tool: [measured_run(work, tool, r, duration) for r in range(1, rounds + 1)]
            for tool in tools}
    keys = ("responses", "responses_per_s", "errors", "cpu_s", "cpu_us_per_response",
            "max_rss_mib")
    medians = {tool: {key: statistics.median(run[key] for run in runs[tool]) for key in keys}
               for tool in tools}

    def ratio(a, b, key):  # the median of the per-round ratios a/b: drift hits both alike
        return round(statistics.median(x[key] / y[key] for x, y in zip(runs[a], runs[b])), 3)

    ratios = {"lg_h3_over_lg_h2_cpu_per_response": ratio("lg-h3", "lg-h2", "cpu_us_per_response")}
    if "oha-h3" in runs:
        ratios.update({
            "lg_h3_over_oha_h3_cpu_per_response": ratio("lg-h3", "oha-h3", "cpu_us_per_response"),
            "lg_h3_over_oha_h3_responses_per_s": ratio("lg-h3", "oha-h3", "responses_per_s"),
            "lg_h2_over_oha_h2_cpu_per_response": ratio("lg-h2", "oha-h2", "cpu_us_per_response"),
            "oha_h3_over_oha_h2_cpu_per_response": ratio("oha-h3", "oha-h2", "cpu_us_per_response"),
        })
    long_run = load(f"{work}/long.json")
    rss = long_run["rss_kib"]
    long = {"exit": long_run["exit"], "responses": load(f"{work}/long.result.json")["total"]["responses"],
            "rss_first_mib": round(rss[0] / 1024, 1) if rss else None,
            "rss_last_mib": round(rss[-1] / 1024, 1) if rss else None,
            "rss_max_mib": round(max(rss) / 1024, 1) if rss else None}

    buffers = runs["lg-h3"][0].get("udp_buffers")
    print(f"UDP buffers of loadgate's sockets: {buffers}")
    print(f"{'tool':8} {'responses/s':>12} {'errors':>7} {'CPU s':>7} {'CPU µs/resp':>12} {'RSS MiB':>8}")
    for tool in tools:
        m = medians[tool]
        print(f"{tool:8} {m['responses_per_s']:>12.0f} {m['errors']:>7.0f} {m['cpu_s']:>7.2f} "
              f"{m['cpu_us_per_response']:>12.2f} {m['max_rss_mib']:>8.1f}")
    for name, value in ratios.items():
        print(f"{name}: {value}")
    print(f"long h3 run: RSS {long['rss_first_mib']} -> {long['rss_last_mib']} MiB, "
          f"max {long['rss_max_mib']} MiB, {long['responses']} responses")
    with open(out, "w") as f:
        json.dump({"runs": runs, "medians": medians, "ratios": ratios, "long": long}, f, indent=2)
    bad = [f"{tool} round {run['round']}" for tool in tools for run in runs[tool]
           if run["exit"] != 0 or run["killed"]]
    if bad:
        print(f"runs that did not end cleanly: {', '.join(bad)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main(*sys.argv[1:])
