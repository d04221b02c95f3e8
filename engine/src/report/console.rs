//! The console summary printed on stdout at the end of a run. By default it is short, the
//! verdict visible without scrolling: the totals (with the slow responses), the transport,
//! the scenarios (one line each), the main percentiles, the targets by tag, the flows, gRPC and
//! WebSocket messages, status codes, errors, checks, the generator's health when something
//! went wrong with it, and the SLO table, verdict last. With `--verbose` ([`SummaryOptions`])
//! it adds the long sections: the size and transfer rate, the client CPU, every percentile,
//! the insight lines, the phases, a latency histogram coloured by SLO level, the upstream time,
//! streamed bodies (`measures.rs`) and the stage table of a healthy run. A failed `warn`
//! threshold is a warning, which never fails the run. Colour only where [`color`] allows it.

use std::fmt::Write as _;

use super::http3;
use super::insight;
use super::levels::{self, Scale};
use super::measures;
use super::scenarios::{slo_fails, slo_warns};
use crate::result::{self, LatencySummary, RunResult, SloVerdict, TargetResult};
use crate::spec::printable;
use crate::units::{Unit, format_bytes, format_duration_us};

/// How the summary is written: in colour or not, short or long.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SummaryOptions {
    /// The histogram's bars and levels in ANSI colours (see [`color`]).
    pub color: bool,
    /// The long sections too (`--verbose`; see the module documentation).
    pub verbose: bool,
}

/// Renders the summary of `result` as text, short or long and coloured or plain as `options`
/// say (see the module documentation).
pub fn summary(result: &RunResult, options: SummaryOptions) -> String {
    let SummaryOptions { color, verbose } = options;
    let t = &result.total;
    let mut out = totals(result, verbose);
    out.push_str(&super::scenarios::scenario_text(
        &super::scenarios::scenario_views(result),
    ));
    out.push_str(&transport_lines(result));
    out.push_str(&latency_table(result, verbose));
    out.push_str(&super::scenarios::tag_text(&super::scenarios::tag_groups(
        result,
    )));
    out.push_str(&super::flows::console_table(result));
    if verbose {
        out.push_str(&long_sections(result, color));
    }
    out.push_str(&measures::messages(result));
    out.push_str(&status_lines(t));
    out.push_str(&check_lines(result));
    out.push_str(&health(result, verbose));
    out.push_str(&slo_table(result));
    out.push_str(&verdict_line(result));
    out
}

/// The sections only `--verbose` prints: the insight lines, the phases, the latency histogram
/// coloured by SLO level (when `color`), the upstream time and the streamed bodies.
fn long_sections(result: &RunResult, color: bool) -> String {
    let t = &result.total;
    let mut out = String::new();
    if let Some(latency) = &t.latency_us {
        out.push_str(&insight::lines(latency, t.responses));
    }
    if let Some(phases) = &t.phases_us {
        out.push_str(&measures::phase_table(phases));
    }
    // The histogram is of request latencies: a flow's `latency` SLO is its iteration duration.
    let request_slo: Vec<SloVerdict> = result
        .slo
        .iter()
        .filter(|v| !result.flows.iter().any(|f| f.name == v.scope))
        .cloned()
        .collect();
    let scale = Scale::of(&request_slo);
    if let Ok(histogram) = result::decode_histogram(&t.histogram)
        && !histogram.is_empty()
    {
        let _ = writeln!(out, "\n  latency histogram");
        out.push_str(&levels::histogram(&histogram, &scale, color));
    }
    out.push_str(&measures::upstream(t, &scale, color));
    out.push_str(&measures::streaming(t));
    out
}

/// The run's name, its load and its totals: requests, errors, data; when `verbose`, the size
/// per response, the transfer rate and the client CPU too.
fn totals(result: &RunResult, verbose: bool) -> String {
    let mut out = String::new();
    let t = &result.total;
    let load = &result.load;
    let _ = writeln!(out, "\nloadgate: {}", printable(&result.spec.name));
    if result.interrupted {
        let _ = writeln!(
            out,
            "  (interrupted: the numbers cover only part of the run)"
        );
    }
    if let Some(note) = result::merge::partial_note(result) {
        let _ = writeln!(out, "  ({note})");
    }
    let streams = if load.streams > 1 {
        format!(" x {} streams", load.streams)
    } else {
        String::new()
    };
    let concurrency = match (load.connections, load.max_in_flight) {
        (Some(connections), _) => format!("{connections} connections{streams}, closed model"),
        (None, max_in_flight) => format!(
            "open model, at most {} in flight",
            max_in_flight.unwrap_or(0)
        ),
    };
    let _ = writeln!(
        out,
        "  load        {concurrency}; measured {:.2} s after a {} s warmup",
        result.duration_s, load.warmup_s
    );
    let _ = writeln!(
        out,
        "  requests    {} ended, {} responses, {:.1} req/s",
        t.requests, t.responses, t.rps
    );
    let _ = writeln!(
        out,
        "  errors      {} ({:.2}%)",
        t.errors,
        t.error_rate * 100.0
    );
    out.push_str(&measures::slow_line(result));
    let _ = writeln!(
        out,
        "  data        {} received, {} sent",
        format_bytes(t.bytes_received),
        format_bytes(t.bytes_sent)
    );
    if !verbose {
        return out;
    }
    if let Some(size) = t.bytes_received.checked_div(t.responses) {
        let _ = writeln!(
            out,
            "  size        {} received per response (headers and body)",
            format_bytes(size)
        );
    }
    if result.duration_s > 0.0 {
        let per_second = |bytes: u64| format_bytes((bytes as f64 / result.duration_s) as u64);
        let _ = writeln!(
            out,
            "  transfer    {}/s received, {}/s sent",
            per_second(t.bytes_received),
            per_second(t.bytes_sent)
        );
    }
    let _ = writeln!(
        out,
        "  client CPU  {:.2} s user, {:.2} s system",
        result.environment.client_cpu_user_s, result.environment.client_cpu_system_s
    );
    out
}

/// The latency percentiles, one line each (the main ones, [`SHORT`]; all of them when
/// `verbose`), in a column for the whole run and one for each target (when there are
/// several); service-time columns too when requests had due times.
fn latency_table(result: &RunResult, verbose: bool) -> String {
    let t = &result.total;
    let rows: Vec<&TargetResult> = if result.targets.len() > 1 {
        std::iter::once(t).chain(&result.targets).collect()
    } else {
        vec![t]
    };
    let mut columns: Vec<(String, Option<&LatencySummary>)> = rows
        .iter()
        .map(|r| (printable(&r.name), r.latency_us.as_ref()))
        .collect();
    // Service time differs from latency only when requests had due times (open model, pacing).
    let scheduled = result.health.stages.iter().any(|s| s.lateness_us.is_some());
    if scheduled {
        columns.extend(rows.iter().map(|r| {
            (
                format!("{} service", printable(&r.name)),
                r.service_time_us.as_ref(),
            )
        }));
    }
    let width = columns
        .iter()
        .map(|(name, _)| name.chars().count())
        .max()
        .unwrap_or(0)
        .max(9)
        + 2;
    let mut out = format!("\n  {:<8}", "latency");
    for (name, _) in &columns {
        let _ = write!(out, "{name:>width$}");
    }
    out.push('\n');
    let mut missing = false;
    let rows = PERCENTILES
        .iter()
        .filter(|(label, _)| verbose || SHORT.contains(label));
    for (label, value) in rows {
        let _ = write!(out, "  {label:<8}");
        for (_, summary) in &columns {
            let cell = summary.and_then(value).map_or_else(
                || {
                    missing = true;
                    "-".to_string()
                },
                format_duration_us,
            );
            let _ = write!(out, "{cell:>width$}");
        }
        out.push('\n');
    }
    if missing {
        let _ = writeln!(out, "  (-: no responses, or not recorded in this result)");
    }
    if scheduled {
        let _ = writeln!(
            out,
            "  service: from the actual send, not from when the request was due"
        );
    }
    out
}

/// The rows of the latency table: a label and the value in microseconds (absent: not recorded,
/// in results written before p10, p25, p75 and p99.99 were).
type Percentile = (&'static str, fn(&LatencySummary) -> Option<f64>);

const PERCENTILES: [Percentile; 12] = [
    ("min", |l| Some(l.min_us as f64)),
    ("p10", |l| l.p10_us.map(|v| v as f64)),
    ("p25", |l| l.p25_us.map(|v| v as f64)),
    ("p50", |l| Some(l.p50_us as f64)),
    ("p75", |l| l.p75_us.map(|v| v as f64)),
    ("p90", |l| Some(l.p90_us as f64)),
    ("p95", |l| Some(l.p95_us as f64)),
    ("p99", |l| Some(l.p99_us as f64)),
    ("p99.9", |l| Some(l.p99_9_us as f64)),
    ("p99.99", |l| l.p99_99_us.map(|v| v as f64)),
    ("max", |l| Some(l.max_us as f64)),
    ("mean", |l| Some(l.mean_us)),
];

/// The rows of the short latency table: the percentiles SLOs most often name, and the maximum.
const SHORT: [&str; 6] = ["p50", "p90", "p95", "p99", "p99.9", "max"];

/// Status codes, errors by kind and by code, when there are any.
fn status_lines(t: &TargetResult) -> String {
    let mut out = String::new();
    if !t.status_codes.is_empty() {
        let codes: Vec<String> = t
            .status_codes
            .iter()
            .map(|(code, n)| format!("{code}: {n}"))
            .collect();
        let _ = writeln!(out, "\n  status codes  {}", codes.join(", "));
    }
    if !t.errors_by_kind.is_empty() {
        let kinds: Vec<String> = t
            .errors_by_kind
            .iter()
            .map(|(kind, n)| format!("{kind}: {n}"))
            .collect();
        let _ = writeln!(out, "  errors        {}", kinds.join(", "));
    }
    if !t.errors_by_code.is_empty() {
        let codes: Vec<String> = t
            .errors_by_code
            .iter()
            .map(|(code, n)| format!("{}: {n}", printable(code)))
            .collect();
        let _ = writeln!(out, "  error codes   {}", codes.join(", "));
    }
    out
}

/// Each response check of each target, with how many responses passed it; a check no
/// response reached (every request failed before it, or none ended) is `not evaluated`.
fn check_lines(result: &RunResult) -> String {
    let checks: Vec<String> = result
        .targets
        .iter()
        .flat_map(|t| {
            t.checks.iter().map(move |c| {
                let total = c.passed + c.failed;
                let (state, count) = match (total, c.failed) {
                    (0, _) => ("not evaluated", "no response read".to_string()),
                    (_, 0) => ("pass", format!("{}/{total} passed", c.passed)),
                    _ => ("FAIL", format!("{}/{total} passed", c.passed)),
                };
                format!(
                    "  {state}  {}: {}  {count}",
                    printable(&t.name),
                    printable(&c.check),
                )
            })
        })
        .collect();
    if checks.is_empty() {
        String::new()
    } else {
        format!("\n  checks\n{}\n", checks.join("\n"))
    }
}

/// The SLO table, when there are SLOs.
fn slo_table(result: &RunResult) -> String {
    let mut out = String::new();
    if !result.slo.is_empty() {
        let _ = writeln!(out, "\n  SLO");
        let width = result
            .slo
            .iter()
            .map(|v| slo_name(v, result).chars().count())
            .max()
            .unwrap_or(0);
        let state = |v: &SloVerdict| match (v.passed, slo_warns(v)) {
            (true, _) => "pass",
            (false, true) => "⚠ warning",
            (false, false) => "FAIL",
        };
        let state_width = result
            .slo
            .iter()
            .map(|v| state(v).chars().count())
            .max()
            .unwrap_or(0);
        for verdict in &result.slo {
            let _ = writeln!(
                out,
                "  {:<state_width$}  {:<width$}  measured {:>10}{}",
                state(verdict),
                slo_name(verdict, result),
                measured(verdict),
                if slo_warns(verdict) {
                    format!(", limit {}", limit(verdict))
                } else {
                    String::new()
                }
            );
        }
    }
    out
}

/// The verdict of the run alone (no baseline), last, saying when loadgate's default `errors`
/// threshold is among the SLOs. An interrupted run is not judged.
fn verdict_line(result: &RunResult) -> String {
    let failed = result.slo.iter().filter(|v| slo_fails(v)).count();
    let warned = result.slo.iter().filter(|v| slo_warns(v)).count();
    let mut verdict = match (result.slo.len(), failed, warned) {
        (0, _, _) => "PASSED: no SLOs defined".to_string(),
        (n, 0, 0) => format!("PASSED: all {n} SLO thresholds met"),
        (n, 0, 1) => format!("PASSED with 1 warning: {} of {n} SLO thresholds met", n - 1),
        (n, 0, w) => format!(
            "PASSED with {w} warnings: {} of {n} SLO thresholds met",
            n - w
        ),
        (n, f, 0) => format!("FAILED: {f} of {n} SLO thresholds not met"),
        (n, f, w) => format!("FAILED: {f} of {n} SLO thresholds not met, {w} more only warn"),
    };
    if let Some(default) = result.slo.iter().find(|v| v.default) {
        let _ = write!(
            verdict,
            " (with loadgate's default `errors: {}`, {}: the spec sets no errors SLO)",
            default.threshold,
            if default.passed { "met" } else { "NOT met" }
        );
    }
    if result.interrupted {
        let rest = verdict.split_once(": ").map_or("", |(_, rest)| rest);
        format!(
            "\nINTERRUPTED: the run was stopped before its end and is not judged (on the part \
             it ran: {rest})\n"
        )
    } else if result.health.valid {
        format!("\n{verdict}\n")
    } else {
        format!(
            "\nINVALID MEASUREMENT: the generator did not apply the planned load (the problems \
             above say how; {})\n",
            verdict.to_lowercase()
        )
    }
}

/// The generator's health: every problem and note, and a stage table when something went
/// wrong (the measurement is invalid, the server could not keep up, arrivals were dropped);
/// when `verbose`, also when there is more than one stage or a schedule.
fn health(result: &RunResult, verbose: bool) -> String {
    let mut out = String::new();
    let h = &result.health;
    let scheduled = h.stages.iter().any(|s| s.lateness_us.is_some());
    let wrong = !h.valid || !h.notes.is_empty() || h.stages.iter().any(|s| s.dropped > 0);
    if wrong || (verbose && (h.stages.len() > 1 || scheduled)) {
        let _ = writeln!(
            out,
            "\n  {:<14} {:<18} {:>8} {:>10} {:>9} {:>8} {:>9} {:>11}",
            "load by stage",
            "level",
            "sent",
            "achieved",
            "in flight",
            "dropped",
            "late p99",
            "client CPU"
        );
        for (i, s) in h.stages.iter().enumerate() {
            let unit = if s.level_unit == "connections" {
                ""
            } else {
                "/s"
            };
            let level = if s.level_from == s.level_to {
                format!("{}{unit}", s.level_to)
            } else {
                format!("{} -> {}{unit}", s.level_from, s.level_to)
            };
            let _ = writeln!(
                out,
                "  {:<14} {:<18} {:>8} {:>8.1}/s {:>9.1} {:>8} {:>9} {:>9.2} s",
                format!("{}{}", i + 1, if s.warmup { " (warmup)" } else { "" }),
                level,
                s.sent,
                s.achieved_rate,
                s.achieved_in_flight,
                s.dropped,
                s.lateness_us
                    .as_ref()
                    .map_or("-".to_string(), |l| format_duration_us(l.p99_us as f64)),
                s.client_cpu_s,
            );
        }
    }
    if let Some(l) = h
        .limits
        .as_ref()
        .filter(|_| wrong || (verbose && scheduled))
    {
        let _ = writeln!(
            out,
            "  {:<14} late p99 {} (`load.health.late_p99`), dropped while behind {}% \
             (`load.health.dropped`), client CPU {:.0}%",
            "health limits",
            format_duration_us(l.late_p99_us as f64),
            l.dropped_behind_share * 100.0,
            l.client_cpu_share * 100.0
        );
    }
    for problem in &h.problems {
        let _ = writeln!(out, "  INVALID: {}", printable(problem));
    }
    for note in &h.notes {
        let _ = writeln!(out, "  SERVER: {}", printable(note));
    }
    out
}

/// One line per distinct transport (`h2 over TLS 1.3 (cipher)`), naming the targets when
/// they differ, a warning for targets whose certificates were not verified, a line per
/// target whose server offered HTTP/3 that it did not load, and the advice about limited UDP
/// buffers (once per run).
fn transport_lines(result: &RunResult) -> String {
    let mut out = String::new();
    let mut lines: Vec<(String, Vec<&str>)> = Vec::new();
    let mut insecure = Vec::new();
    for target in &result.targets {
        let Some(transport) = &target.transport else {
            continue;
        };
        let text = printable(&transport.describe());
        if transport.insecure() {
            insecure.push(target.name.as_str());
        }
        match lines.iter_mut().find(|(t, _)| *t == text) {
            Some((_, names)) => names.push(&target.name),
            None => lines.push((text, vec![&target.name])),
        }
    }
    let single = lines.len() == 1;
    for (text, names) in lines {
        if single {
            let _ = writeln!(out, "  protocol    {text}");
        } else {
            let _ = writeln!(
                out,
                "  protocol    {text}: {}",
                printable(&names.join(", "))
            );
        }
    }
    if !insecure.is_empty() {
        let _ = writeln!(
            out,
            "  INSECURE    server certificates NOT verified (insecure_skip_verify): {}",
            printable(&insecure.join(", "))
        );
    }
    for target in &result.targets {
        if let Some(alt_svc) = target.transport.as_ref().and_then(http3::offered_h3) {
            let name = if single {
                String::new()
            } else {
                format!("{}: ", printable(&target.name))
            };
            let _ = writeln!(
                out,
                "  HTTP/3      {name}the server offers HTTP/3 (Alt-Svc: {}); `protocol: h3` loads it",
                printable(alt_svc)
            );
        }
    }
    if let Some(advice) = http3::udp_advice(&result.environment) {
        let _ = writeln!(out, "  UDP         {advice}");
    }
    out
}

/// An SLO as the table names it: its scope, metric (a flow's by the spec's names, e.g.
/// `iteration_duration`) and threshold, and what else happened to it.
fn slo_name(v: &SloVerdict, result: &RunResult) -> String {
    let mut name = printable(&super::scenarios::slo_label(v, result));
    if let Some(w) = v.window_s {
        name.push_str(&format!(" in every {w} s window"));
        if let Some(start) = v.failed_window_start_s {
            name.push_str(&format!(" (failed from {start} s)"));
        }
    }
    if v.aborted_run {
        name.push_str(" (stopped the run)");
    }
    if v.default {
        name.push_str(" (default: the spec sets no errors SLO)");
    }
    name.push_str(&super::health::dropped_suffix(v));
    name
}

/// An SLO's measured value in its unit, or `n/a`.
fn measured(v: &SloVerdict) -> String {
    v.measured
        .map_or_else(|| "n/a".to_string(), |m| Unit::from_name(&v.unit).format(m))
}

/// An SLO's limit in its unit.
fn limit(v: &SloVerdict) -> String {
    Unit::from_name(&v.unit).format(v.limit)
}

/// Whether the summary on stdout is coloured: not with `--no-color`, else as anstream chooses
/// for stdout (`AutoStream::choice`): never with `NO_COLOR` set and not empty (no-color.org),
/// always with `CLICOLOR_FORCE` set and not empty, never with `CLICOLOR=0`, else only when
/// stdout is a terminal and `TERM` is set and not `dumb` (or `CLICOLOR` is set, or in CI).
pub fn color(no_color_flag: bool) -> bool {
    !no_color_flag
        && anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
}
