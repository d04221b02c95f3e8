//! The console summary of `loadgate run` against the built-in target on loopback: the default
//! `errors` SLO, the short summary and the long one (`--verbose`: the extra percentiles and
//! rates, the colour histogram and insight lines), colour as the environment asks, and the
//! progress lines on stderr in a CI log.

use crate::support;

use std::process::Command;

use loadgate::report::Format;
use loadgate::result::RunResult;
use support::result_fixture;
use support::write_spec;

/// A closed-model spec of one target at `url`: `load` and `slo` are YAML lines (may be empty).
fn spec(url: &str, load: &str, slo: &str) -> String {
    format!(
        "version: 1\nname: console\ndefaults:\n  timeout: 2s\ntargets:\n  - name: t\n    url: {url}\nload:\n{load}{slo}"
    )
}

/// Runs `loadgate run SPEC --out RESULT EXTRA...` to its end (stdout and stderr are pipes, so
/// not terminals): exit code, stdout, stderr and the result read back.
fn run(yaml: &str, extra: &[&str]) -> (Option<i32>, String, String, RunResult) {
    let (dir, path) = write_spec(yaml);
    let out = dir.path().join("result.json");
    let output = Command::new(env!("CARGO_BIN_EXE_loadgate"))
        .arg("run")
        .arg(&path)
        .arg("--out")
        .arg(&out)
        .args(extra)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
        .output()
        .expect("run loadgate");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let result = loadgate::result::read(&out).unwrap_or_else(|e| panic!("{e:#}\n{stderr}"));
    (output.status.code(), stdout, stderr, result)
}

const COUNT: &str = "  connections: 2\n  requests: 50\n";

#[test]
fn a_run_in_which_every_request_failed_fails_on_the_default_errors_slo() {
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let failing = format!("{}/x?status=500", server.url());

    // No SLO at all: the default is the only one, and it fails.
    let (code, stdout, _, result) = run(&spec(&failing, COUNT, ""), &[]);
    assert_eq!(code, Some(1), "{stdout}");
    assert_eq!(result.total.errors, 50, "{stdout}");
    assert_eq!(result.slo.len(), 1);
    let default = &result.slo[0];
    assert!(default.default && !default.passed, "{default:?}");
    assert_eq!(
        (default.metric, default.threshold.as_str()),
        (loadgate::plan::threshold::Metric::Errors, "rate < 100%")
    );
    assert_eq!(default.measured, Some(1.0));
    assert!(
        stdout.contains(
            "FAIL  total errors: rate < 100% (default: the spec sets no errors SLO)  measured"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "FAILED: 1 of 1 SLO thresholds not met (with loadgate's default \
             `errors: rate < 100%`, NOT met: the spec sets no errors SLO)"
        ),
        "{stdout}"
    );
    assert!(!stdout.contains("PASSED"), "{stdout}");
    // The reports name the default too (their SLO rows come from report/view.rs).
    for format in [Format::Md, Format::Html, Format::Junit] {
        let input = loadgate::report::Input {
            current: &result,
            baseline: None,
            comparison: None,
            history: &[],
            spec_path: None,
        };
        let report = loadgate::report::render(format, &input, None).unwrap();
        assert!(
            report.contains("total errors: rate &lt; 100% (default: the spec sets no errors SLO)"),
            "{format:?}: {report}"
        );
    }

    // A latency SLO alone is met by the 500s' latency; the default still fails the run.
    let (code, stdout, _, result) = run(
        &spec(&failing, COUNT, "slo:\n  latency: [\"p(99) < 10s\"]\n"),
        &[],
    );
    assert_eq!(code, Some(1), "{stdout}");
    assert_eq!(result.slo.len(), 2);
    assert!(result.slo[0].passed && !result.slo[1].passed && result.slo[1].default);
    assert!(
        stdout.contains("FAILED: 1 of 2 SLO thresholds not met"),
        "{stdout}"
    );

    // The spec's own errors threshold replaces the default, even a lenient one.
    let (code, stdout, _, result) = run(
        &spec(&failing, COUNT, "slo:\n  errors: [\"rate <= 100%\"]\n"),
        &[],
    );
    assert_eq!(code, Some(0), "{stdout}");
    assert!(result.slo.iter().all(|v| !v.default), "{:?}", result.slo);
    assert!(!stdout.contains("errors SLO"), "{stdout}");

    // Against a healthy target the default passes, and the verdict says it was the default.
    let ok = format!("{}/x", server.url());
    let (code, stdout, _, result) = run(&spec(&ok, COUNT, ""), &[]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(result.slo[0].default && result.slo[0].passed);
    assert!(
        stdout.contains(
            "PASSED: all 1 SLO thresholds met (with loadgate's default \
             `errors: rate < 100%`, met: the spec sets no errors SLO)"
        ),
        "{stdout}"
    );
}

/// The value cells of the summary's latency row `label` (`p10`, `p99.99`, ...).
fn row<'a>(stdout: &'a str, label: &str) -> Vec<&'a str> {
    let line = stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(label))
        .unwrap_or_else(|| panic!("no `{label}` row in {stdout}"));
    line.split_whitespace().skip(1).collect()
}

#[test]
fn the_summary_shows_every_percentile_the_size_per_response_and_the_transfer_rate() {
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let url = format!("{}/x?size=1000", server.url());
    let (code, stdout, _, result) = run(
        &spec(&url, "  connections: 2\n  requests: 400\n", ""),
        &["--verbose"],
    );
    assert_eq!(code, Some(0), "{stdout}");
    let l = result.total.latency_us.as_ref().unwrap();
    let (p10, p25, p75, p99_99) = (
        l.p10_us.unwrap(),
        l.p25_us.unwrap(),
        l.p75_us.unwrap(),
        l.p99_99_us.unwrap(),
    );
    assert!(
        l.min_us <= p10
            && p10 <= p25
            && p25 <= l.p50_us
            && l.p50_us <= p75
            && p75 <= l.p90_us
            && l.p99_9_us <= p99_99
            && p99_99 <= l.max_us,
        "{l:?}"
    );
    for label in [
        "min", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "p99.9", "p99.99", "max", "mean",
    ] {
        let cells = row(&stdout, label);
        assert_eq!(
            cells.len(),
            1,
            "one column (total) for one target: {stdout}"
        );
        assert!(
            cells[0].ends_with("us") || cells[0].ends_with('s'),
            "{stdout}"
        );
    }

    // Bytes on the wire per response: the 1000-byte body and the head.
    let per_response = result.total.bytes_received / result.total.responses;
    assert!((1000..1300).contains(&per_response), "{per_response}");
    let size = format!(
        "size        {:.1} KiB received per response",
        per_response as f64 / 1024.0
    );
    assert!(stdout.contains(&size), "{size} in {stdout}");
    let transfer = stdout
        .lines()
        .find(|l| l.starts_with("  transfer"))
        .unwrap_or_else(|| panic!("no transfer line in {stdout}"));
    let received = result.total.bytes_received as f64 / result.duration_s;
    assert!(received > 0.0);
    assert!(
        transfer.contains("/s received, ") && transfer.ends_with("/s sent"),
        "{transfer}"
    );
}

#[test]
fn an_older_result_without_the_new_percentiles_shows_them_as_not_recorded() {
    let result = loadgate::result::read(&result_fixture("current.json")).unwrap();
    assert!(result.total.latency_us.as_ref().unwrap().p10_us.is_none());
    let verbose = loadgate::report::console::SummaryOptions {
        color: false,
        verbose: true,
    };
    let summary = loadgate::report::console::summary(&result, verbose);
    let p10 = row(&summary, "p10");
    assert!(p10.iter().all(|c| *c == "-"), "{summary}");
    assert!(row(&summary, "p50").iter().all(|c| *c != "-"), "{summary}");
    assert!(summary.contains("(-: no responses, or not recorded in this result)"));
}

#[test]
fn the_histogram_is_read_by_slo_level_with_its_key_and_the_insight_lines() {
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let url = format!("{}/x?delay=2ms", server.url());
    let load = "  connections: 2\n  requests: 300\n";
    let (code, stdout, _, result) = run(
        &spec(&url, load, "slo:\n  latency: [\"p(99) < 40ms\"]\n"),
        &["--no-color", "--verbose"],
    );
    assert_eq!(code, Some(0), "{stdout}");
    assert!(!stdout.contains('\x1b'), "no colour in a pipe: {stdout}");
    assert!(
        stdout.contains("levels (a bar's level is its upper bound's; limits from the SLO `total latency: p(99) < 40ms`)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("elite <=40us") && stdout.contains("close <=40.00ms  violation >40.00ms"),
        "{stdout}"
    );
    // Every bar names its level; responses of 2 ms and more are `fair` or slower at 40 ms.
    let bars: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.contains("latency histogram"))
        .skip(1)
        .take_while(|l| l.contains(" .. "))
        .collect();
    assert!(!bars.is_empty(), "{stdout}");
    let names = [
        "elite",
        "excellent",
        "great",
        "good",
        "fine",
        "fair",
        "ok",
        "moderate",
        "high",
        "close",
        "violation",
    ];
    for bar in &bars {
        let level = bar.split_whitespace().last().unwrap();
        assert!(names[5..].contains(&level), "{bar}");
    }

    // The insight lines: 300 responses read p99 ratios, not p99.9's.
    let l = result.total.latency_us.as_ref().unwrap();
    let spread = l.p99_us as f64 / l.p50_us as f64;
    assert!(
        stdout.contains(&format!("spread    p99/p50    {spread:>6.2}x  ")),
        "{spread} in {stdout}"
    );
    assert!(stdout.contains("tail      p99/p95"), "{stdout}");
    assert!(
        stdout.contains("(too few responses to read: 300 < 1000)"),
        "{stdout}"
    );

    // Without a latency SLO the limits are the default's.
    let (_, stdout, _, _) = run(&spec(&url, load, ""), &["-v"]);
    assert!(
        stdout.contains("limits from no latency SLO: loadgate's default, Nielsen's 1 s limit)"),
        "{stdout}"
    );
    assert!(stdout.contains("elite <=1.00ms"), "{stdout}");
}

/// The `loadgate:` progress lines of a run's stderr.
fn progress_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("loadgate: ") && l.contains("req/s"))
        .collect()
}

#[test]
fn in_a_ci_log_the_live_view_prints_a_first_line_at_once_then_every_few_seconds() {
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let url = format!("{}/x?delay=5ms", server.url());
    // 4 s: the first line at once, the next 3 s later (PLAIN_INTERVAL); stderr is a pipe.
    let (code, stdout, stderr, result) =
        run(&spec(&url, "  connections: 1\n  duration: 4s\n", ""), &[]);
    assert_eq!(code, Some(0), "{stdout}");
    let lines = progress_lines(&stderr);
    assert!(lines.len() >= 2, "{stderr}");
    assert!(lines.iter().all(|l| l.is_ascii()), "{stderr}");
    assert!(
        lines[0] == "loadgate: 0/4 s (4 s left)  0 req/s  0 err/s (0 in all)  p50 -  p99 -",
        "{stderr}"
    );
    // Three seconds in, the last whole second had responses: its rate and percentiles show.
    let later = lines[1];
    let seconds: u64 = later["loadgate: ".len()..]
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((3..=4).contains(&seconds), "{stderr}");
    let rps: u64 = later
        .split("  ")
        .find_map(|part| part.strip_suffix(" req/s"))
        .unwrap()
        .parse()
        .unwrap();
    assert!(rps > 10 && rps <= result.total.responses, "{later}");
    assert!(
        later.contains("(0 in all)  p50 ") && !later.contains(" -"),
        "{later}"
    );

    // Quiet: no progress at all.
    let (_, _, stderr, _) = run(
        &spec(&url, "  connections: 1\n  requests: 20\n", ""),
        &["-q"],
    );
    assert!(progress_lines(&stderr).is_empty(), "{stderr}");
}

/// The lines of `stdout` from the one starting with `head` (after its two leading spaces) to
/// the next blank line.
fn section<'a>(stdout: &'a str, head: &str) -> Vec<&'a str> {
    stdout
        .lines()
        .skip_while(|l| !l.trim_start().starts_with(head))
        .take_while(|l| !l.is_empty())
        .collect()
}

/// The count cell of the row `name` of a section (the first cell after the name).
fn count_cell(lines: &[&str], name: &str) -> u64 {
    let line = lines
        .iter()
        .find(|l| l.trim_start().starts_with(name))
        .unwrap_or_else(|| panic!("no `{name}` row in {lines:?}"));
    line.trim_start()[name.len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn the_summary_shows_slow_responses_phases_upstream_time_and_events_when_measured() {
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let timed = format!(
        "{}/t?server_timing=1&delay=3ms&header=X-Envoy-Upstream-Service-Time:7",
        server.url()
    );
    let events = format!("{}/e?events=4&interval=2ms", server.url());
    let yaml = format!(
        "version: 1\nname: measures\ndefaults:\n  timeout: 2s\n  slow: 2ms\ntargets:\n  \
         - name: timed\n    url: {timed}\n  - name: sse\n    url: {events}\n\
         load:\n  connections: 4\n  requests: 200\n"
    );
    let (code, stdout, _, result) = run(&yaml, &["--no-color", "--verbose"]);
    assert_eq!(code, Some(0), "{stdout}");
    let t = &result.total;

    // Slow: every response took at least 2 ms (3 ms of delay; four events 2 ms apart).
    let slow = t.slow_responses.unwrap();
    assert_eq!(slow, t.responses, "{stdout}");
    let per_target: Vec<u64> = result
        .targets
        .iter()
        .map(|r| r.slow_responses.unwrap())
        .collect();
    let line = format!(
        "  slow        {slow} ({:.2}%) responses of 2.00ms or more (defaults.slow); timed: {}, sse: {}",
        slow as f64 / t.responses as f64 * 100.0,
        per_target[0],
        per_target[1]
    );
    assert!(stdout.contains(&line), "{line} in {stdout}");

    // The phases: the write beside connect, TTFB and body, and the pre-connected connections.
    let phases = t.phases_us.as_ref().unwrap();
    let table = section(&stdout, "phases");
    assert_eq!(
        count_cell(&table, "write"),
        phases.write.as_ref().unwrap().count
    );
    assert_eq!(count_cell(&table, "write"), t.responses, "{stdout}");
    assert!(phases.pre_connected > 0, "{phases:?}");
    let opened = format!(
        "  {} connection(s) opened, {} of them before the clock started (pre-connect: their \
         setup is in no latency)",
        phases.connections_opened, phases.pre_connected
    );
    assert!(stdout.contains(&opened), "{opened} in {stdout}");

    upstream_rows_and_histograms(&stdout, &result);

    // Streaming: the SSE responses, their events and the time between them.
    let streaming = t.streaming.as_ref().unwrap();
    let sse = result.targets[1].responses;
    assert_eq!((streaming.sse_responses, streaming.events), (sse, 4 * sse));
    let table = section(&stdout, "streaming");
    assert_eq!(
        count_cell(&table, "event gap"),
        streaming.event_gap.as_ref().unwrap().count
    );
    assert_eq!(count_cell(&table, "event gap"), 3 * sse, "{stdout}");
    assert_eq!(count_cell(&table, "body ttfb"), sse, "{stdout}");
    let line = format!(
        "  {sse} streamed response(s), {sse} of them Server-Sent Events: {} event(s), 4.0 per stream",
        4 * sse
    );
    assert!(stdout.contains(&line), "{line} in {stdout}");

    // The Markdown report's phase table has the same rows.
    let input = loadgate::report::Input {
        current: &result,
        baseline: None,
        comparison: None,
        history: &[],
        spec_path: None,
    };
    let md = loadgate::report::render(Format::Md, &input, None).unwrap();
    for row in [
        "| write |",
        "| upstream server-timing app |",
        "| upstream envoy |",
        "| stream body ttfb |",
        "before the clock started (pre-connect)",
    ] {
        assert!(md.contains(row), "{row} in {md}");
    }
    assert!(
        md.contains(&format!(
            "| event gap ({} events in {sse} SSE streams) |",
            4 * sse
        )),
        "{md}"
    );
}

/// The upstream section of a run of the `timed` target (Envoy's header at 7 ms and
/// `Server-Timing: app`): a row for each, and a histogram of each.
fn upstream_rows_and_histograms(stdout: &str, result: &RunResult) {
    let t = &result.total;
    let upstream = t.upstream_us.as_ref().unwrap();
    let app = &upstream.server_timing[0];
    assert_eq!(app.name, "app");
    let table = section(stdout, "upstream  ");
    assert_eq!(count_cell(&table, "server-timing app"), app.dur.count);
    assert_eq!(app.dur.count, result.targets[0].responses, "{stdout}");
    let envoy = upstream.envoy_upstream_service_time.as_ref().unwrap();
    assert_eq!(count_cell(&table, "envoy"), envoy.count);
    assert_eq!(envoy.min_us, 7000, "{envoy:?}");
    let row = table
        .iter()
        .find(|l| l.trim_start().starts_with("envoy"))
        .unwrap();
    assert!(row.contains("7.00ms"), "{row}");
    assert!(
        stdout.contains("envoy: X-Envoy-Upstream-Service-Time, whole milliseconds"),
        "{stdout}"
    );
    let bars = section(stdout, "upstream histogram: server-timing app");
    assert!(bars.len() >= 2, "{stdout}");
    assert!(bars[1..].iter().all(|b| b.contains(" .. ")), "{bars:?}");
    let shares: f64 = bars[1..]
        .iter()
        .map(|b| {
            let share = b.split_whitespace().rev().nth(1).unwrap();
            share.trim_end_matches('%').parse::<f64>().unwrap()
        })
        .sum();
    assert!((99.0..=101.0).contains(&shares), "{shares} {bars:?}");
    assert!(
        stdout.contains("\n  upstream histogram: envoy\n"),
        "{stdout}"
    );
}

#[test]
fn a_plain_run_shows_none_of_the_optional_sections() {
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    // A plain run (no `slow`, no timing headers, no streamed body, no pre-connect): none of it.
    let plain = format!("{}/x", server.url());
    let load = "  connections: 2\n  requests: 100\n  pre_connect: false\n";
    let (code, stdout, _, result) = run(&spec(&plain, load, ""), &["--verbose"]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(result.total.slow_responses.is_none() && result.total.upstream_us.is_none());
    assert!(result.total.streaming.is_none(), "{stdout}");
    for absent in [
        "  slow ",
        "upstream",
        "streaming",
        "streamed",
        "Server-Sent",
        "pre-connect",
    ] {
        assert!(!stdout.contains(absent), "`{absent}` in {stdout}");
    }
    assert!(
        stdout.contains("connection(s) opened while measuring"),
        "{stdout}"
    );
}

/// The words that alarm; a healthy run's summary has none of them.
const ALARMS: [&str; 7] = [
    "extreme", "severe", "critical", "warning", "FAIL", "INVALID", "SERVER:",
];

#[test]
fn a_healthy_run_of_mixed_endpoints_is_short_and_alarms_nobody() {
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    // The quickstart's shape: a fast endpoint beside a deliberate 5 ms one, after a warmup
    // (two stages), every SLO met: its p99/p50 is wide by design, which is nothing wrong.
    let yaml = format!(
        "version: 1\nname: mixed\ndefaults:\n  base_url: {}\n  timeout: 2s\ntargets:\n  \
         - name: home\n    path: /?size=512\n    weight: 4\n  - name: search\n    \
         path: /search?delay=5ms\n    weight: 1\nload:\n  connections: 4\n  duration: 2s\n  \
         warmup: 1s\nslo:\n  latency: [\"p(95) < 1s\"]\n  errors: [\"rate < 1%\"]\n",
        server.url()
    );
    let (code, stdout, _, result) = run(&yaml, &[]);
    assert_eq!(code, Some(0), "{stdout}");
    let l = result.total.latency_us.as_ref().unwrap();
    assert!(
        l.p99_us >= 5 * l.p50_us,
        "the spread is wide, as the test means: {l:?}"
    );
    for alarm in ALARMS {
        assert!(!stdout.contains(alarm), "`{alarm}` in {stdout}");
    }
    for long in [
        "insight",
        "histogram",
        "phases",
        "load by stage",
        "client CPU",
        "p99.99",
    ] {
        assert!(
            !stdout.contains(long),
            "`{long}` without --verbose: {stdout}"
        );
    }
    let lines = stdout.lines().count();
    assert!(lines <= 30, "{lines} lines: {stdout}");
    assert_eq!(
        stdout.trim_end().lines().last(),
        Some("PASSED: all 2 SLO thresholds met"),
        "{stdout}"
    );

    // The long summary has the sections, and describes the wide spread without alarm.
    let (_, verbose, _, _) = run(&yaml, &["--verbose"]);
    for long in [
        "insight",
        "latency histogram",
        "phases",
        "load by stage",
        "p99.99",
    ] {
        assert!(verbose.contains(long), "`{long}` with --verbose: {verbose}");
    }
    assert!(
        verbose.contains("wide") && verbose.contains("spread    p99/p50"),
        "{verbose}"
    );
    for alarm in ALARMS {
        assert!(!verbose.contains(alarm), "`{alarm}` in {verbose}");
    }
}

/// Where the summary goes: a terminal (a pseudo terminal by util-linux's `script`), a pipe, or
/// a pipe with `--no-color`.
#[derive(Clone, Copy, PartialEq)]
enum Out {
    Terminal,
    Pipe,
    PipeNoColor,
}

/// The bytes `loadgate run SPEC --quiet --verbose` writes on stdout with the environment
/// `env` (NO_COLOR, CLICOLOR, CLICOLOR_FORCE, TERM and CI removed first), into `out`.
fn summary_bytes(spec: &std::path::Path, env: &[(&str, &str)], out: Out) -> String {
    let binary = env!("CARGO_BIN_EXE_loadgate");
    let mut command = if out == Out::Terminal {
        let mut c = Command::new("script");
        c.args(["--quiet", "--return", "--command"]).arg(format!(
            "'{binary}' run '{}' --quiet --verbose 2>/dev/null",
            spec.display()
        ));
        c.arg("/dev/null");
        c
    } else {
        let mut c = Command::new(binary);
        c.arg("run").arg(spec).args(["--quiet", "--verbose"]);
        if out == Out::PipeNoColor {
            c.arg("--no-color");
        }
        c
    };
    for name in ["NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "TERM", "CI"] {
        command.env_remove(name);
    }
    let output = command.envs(env.iter().copied()).output().expect("run");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(0), "{env:?}: {stdout}");
    assert!(stdout.contains("latency histogram"), "{env:?}: {stdout}");
    stdout
}

#[test]
fn colour_follows_term_clicolor_and_no_color() {
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let url = format!("{}/x", server.url());
    let (_dir, path) = write_spec(&spec(&url, COUNT, ""));
    let coloured = |text: &str| text.contains("\x1b[38;5;");
    // On a terminal: colour with a TERM that has it, none with TERM=dumb, NO_COLOR, CLICOLOR=0.
    let tty = summary_bytes(&path, &[("TERM", "xterm-256color")], Out::Terminal);
    assert!(coloured(&tty), "a terminal has colour: {tty:?}");
    for env in [
        [("TERM", "dumb")].as_slice(),
        &[("TERM", "xterm-256color"), ("NO_COLOR", "1")],
        &[("TERM", "xterm-256color"), ("CLICOLOR", "0")],
    ] {
        let text = summary_bytes(&path, env, Out::Terminal);
        assert!(!text.contains('\x1b'), "{env:?}: {text:?}");
    }
    // Into a pipe: none, but with CLICOLOR_FORCE (unless NO_COLOR or --no-color).
    let piped = summary_bytes(&path, &[("TERM", "xterm-256color")], Out::Pipe);
    assert!(!piped.contains('\x1b'), "{piped:?}");
    let forced = summary_bytes(&path, &[("CLICOLOR_FORCE", "1")], Out::Pipe);
    assert!(coloured(&forced), "{forced:?}");
    let force = [("CLICOLOR_FORCE", "1")];
    let both = summary_bytes(&path, &[force[0], ("NO_COLOR", "1")], Out::Pipe);
    assert!(!both.contains('\x1b'), "{both:?}");
    let flag = summary_bytes(&path, &force, Out::PipeNoColor);
    assert!(!flag.contains('\x1b'), "{flag:?}");
}
