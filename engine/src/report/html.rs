//! The self-contained HTML report: `templates/report.html` with inline SVG charts drawn by
//! [`super::svg`] (no script needed to see them, nothing fetched at view time).
//!
//! Charts, the current run solid with circles and the baseline dashed with squares:
//! the latency percentile distribution on HdrHistogram's log "nines" scale (latency on a log
//! axis too, so that the body of the distribution is not flattened by its tail), latency (p50, p99)
//! and throughput over time (both of complete seconds only: the last, partial second would
//! show a fake drop), the latency histogram on a log scale, and a trend's p50 and p95 by run
//! start date. In a paired comparison
//! (`loadgate ab`), one chart per rule of its change in each sub-run (marked by the side that
//! went first), with the interval at the rule's one-sided level, 0 and the allowed change.

use anyhow::Context as _;
use hdrhistogram::Histogram;
use serde::Serialize;

use super::decisions::format_level;
use super::history::Trend;
use super::scales::{self, trim_number};
use super::svg::{LineChart, Mark, MarkLine, Series, Style};
use super::view::format_sub_run_change;
use super::{Input, Render, Report, templates};
use crate::compare::{Comparison, RuleChanges, RuleVerdict};
use crate::plan::threshold::Metric;
use crate::result::{self, RunResult};

/// The charts of a report, as `<svg>` markup.
#[derive(Debug, Clone, Serialize)]
struct Charts {
    /// Latency by percentile, on the log "nines" scale.
    percentiles: String,
    /// p50 and p99 of each complete second.
    latency_over_time: String,
    /// Responses of each complete second.
    throughput_over_time: String,
    /// Share of responses by latency, up to p99.9.
    histogram: String,
    /// p50 and p95 over the runs of a trend; empty without one.
    trend: String,
    /// A paired comparison's per-sub-run changes, one chart per rule in the order of the
    /// rules; empty otherwise.
    sub_runs: Vec<String>,
}

/// The HTML renderer.
pub(super) struct Html;

impl Render for Html {
    fn render(&self, report: &Report<'_>) -> anyhow::Result<String> {
        let trend = report.trend.as_ref();
        let charts = charts(report.input, report.view.current_label, trend);
        let env = templates::environment(report.templates_dir);
        env.get_template(templates::HTML)?
            .render(minijinja::context! { view => report.view, history => trend, charts => charts })
            .context("cannot render the HTML report")
    }
}

/// A run to draw: its name, the result, the style of its main line and of its second line.
type Run<'a> = (&'static str, &'a RunResult, Style, Style);

/// The runs to draw: the current one (named `current`, `candidate` in a paired comparison),
/// then the baseline when there is one.
fn runs<'a>(input: &Input<'a>, current: &'static str) -> Vec<Run<'a>> {
    let mut out = vec![(current, input.current, Style::Current, Style::CurrentAlt)];
    if let Some(b) = input.baseline {
        out.push(("baseline", b, Style::Baseline, Style::BaselineAlt));
    }
    out
}

/// Draws every chart of the report; `current` names the current run.
fn charts(input: &Input<'_>, current: &'static str, trend: Option<&Trend>) -> Charts {
    let runs = runs(input, current);
    let histograms: Vec<_> = runs
        .iter()
        .filter_map(|(name, r, style, _)| {
            let h = result::decode_histogram(&r.total.histogram).ok()?;
            (!h.is_empty()).then_some((*name, h, *style))
        })
        .collect();
    let (latency_over_time, throughput_over_time) = over_time_charts(&runs);
    Charts {
        percentiles: percentile_chart(&histograms),
        latency_over_time,
        throughput_over_time,
        histogram: histogram_chart(&histograms),
        trend: trend.map_or_else(String::new, trend_chart),
        sub_runs: input.comparison.map_or_else(Vec::new, sub_run_charts),
    }
}

/// One chart per rule of a paired comparison that has changes per sub-run; none for another
/// comparison.
fn sub_run_charts(comparison: &Comparison) -> Vec<String> {
    let Some(paired) = &comparison.paired else {
        return Vec::new();
    };
    comparison
        .rules
        .iter()
        .zip(&paired.rules)
        .filter(|(_, changes)| !changes.changes.is_empty())
        .map(|(rule, changes)| sub_run_chart(rule, changes))
        .collect()
}

/// The marks of a rule's chart: its interval at its one-sided level (a band), 0, the allowed
/// change and the whole-run change (lines), in % of the baseline, or in percentage points of
/// the error rate for `errors` rules (not `relative`).
fn sub_run_marks(rule: &RuleVerdict, changes: &RuleChanges) -> Vec<Mark> {
    let (interval, whole_run, allowed) = if changes.relative {
        let of_baseline = |a: f64| rule.baseline.filter(|b| *b != 0.0).map(|b| a / b.abs());
        (
            rule.relative_change_ci,
            rule.relative_change,
            rule.relative_allowed_change
                .or_else(|| rule.allowed_change.and_then(of_baseline)),
        )
    } else {
        (rule.change_ci, rule.change, rule.allowed_change)
    };
    // The allowed change lies in the worse direction: down for throughput.
    let allowed = allowed.map(|a| {
        if rule.metric == Metric::Responses {
            -a
        } else {
            a
        }
    });
    let text = |v: f64| format_sub_run_change(changes, v);
    let mut marks = Vec::new();
    if let Some([low, high]) = interval {
        let level = rule.level.map_or_else(String::new, |l| {
            format!(" (one-sided level {} each side)", format_level(l))
        });
        // Not in the legend, which the sides fill: the paragraph above the charts names it.
        marks.push(Mark::Band {
            low: low * 100.0,
            high: high * 100.0,
            name: String::new(),
            detail: format!(
                "interval of the change [{}, {}]{level}",
                text(low),
                text(high)
            ),
        });
    }
    marks.push(Mark::Line {
        y: 0.0,
        kind: MarkLine::Reference,
        name: String::new(),
    });
    if let Some(a) = allowed {
        marks.push(Mark::Line {
            y: a * 100.0,
            kind: MarkLine::Limit,
            name: format!("allowed {}", text(a)),
        });
    }
    if let Some(w) = whole_run {
        marks.push(Mark::Line {
            y: w * 100.0,
            kind: MarkLine::Estimate,
            name: format!("whole run {}", text(w)),
        });
    }
    marks
}

/// A rule's change in each sub-run (points: circles where the baseline went first, squares
/// where the candidate did), with the marks of [`sub_run_marks`].
fn sub_run_chart(rule: &RuleVerdict, changes: &RuleChanges) -> String {
    let runs: Vec<u32> = changes.changes.iter().map(|c| c.sub_run).collect();
    let (first, last) = (
        runs.iter().copied().min().unwrap_or(0),
        runs.iter().copied().max().unwrap_or(1),
    );
    let step = (last - first).div_ceil(8).max(1);
    let (y_label, y_format): (&str, fn(f64) -> String) = if changes.relative {
        ("change, % of the baseline", |v| {
            format!("{}%", signed_tick(v))
        })
    } else {
        ("change, percentage points", signed_tick)
    };
    let side = |baseline_first: bool, name: &str, style: Style| Series {
        name: name.into(),
        style,
        points: changes
            .changes
            .iter()
            .filter(|c| c.baseline_first == baseline_first)
            .map(|c| (f64::from(c.sub_run), c.change * 100.0))
            .collect(),
    };
    LineChart {
        title: format!("{} {}: change per sub-run", rule.metric, rule.rule),
        x_label: "sub-run, in the order they ran".into(),
        y_label: y_label.into(),
        x_ticks: (first..=last.max(first + 1))
            .step_by(step as usize)
            .map(|e| (f64::from(e), e.to_string()))
            .collect(),
        y_format,
        x_format: |x| format!("sub-run {x}"),
        y_log: false,
        series: vec![
            side(true, "baseline first", Style::Points),
            side(false, "candidate first", Style::PointsAlt),
        ],
        steps: false,
        marks: sub_run_marks(rule, changes),
    }
    .render()
}

/// An axis value with its sign and at most three decimals: `+2.5`, `0`, `-10`, `+0.025`.
fn signed_tick(v: f64) -> String {
    let text = format!("{v:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    match text {
        "-0" | "0" => "0".to_string(),
        t if v > 0.0 => format!("+{t}"),
        t => t.to_string(),
    }
}

/// A run's name, its whole-run latency histogram (µs) and its style.
type Drawn = (&'static str, Histogram<u64>, Style);

/// Latency by percentile, each run a line.
fn percentile_chart(histograms: &[Drawn]) -> String {
    let series: Vec<Series> = histograms
        .iter()
        .map(|(name, h, style)| Series {
            name: name.to_string(),
            style: *style,
            points: scales::percentile_points(h),
        })
        .collect();
    let max_nines = series
        .iter()
        .filter_map(|s| s.points.last().map(|p| p.0))
        .fold(1.0, f64::max);
    LineChart {
        title: "Latency by percentile".into(),
        x_label: "percentile (log scale of 1/(1-q))".into(),
        y_label: "latency (log scale)".into(),
        x_ticks: scales::nines_ticks(max_nines),
        y_format: scales::short_duration,
        x_format: scales::nines_name,
        y_log: true,
        series,
        steps: false,
        marks: Vec::new(),
    }
    .render()
}

/// The seconds of `r`'s time series that lie wholly inside its measured window: the last,
/// partial second (requests still ending after the window) is left out, as the comparison's
/// per-second samples leave it out.
fn complete_seconds(r: &RunResult) -> impl Iterator<Item = &result::TimeSample> + Clone {
    r.time_series
        .iter()
        .filter(|s| f64::from(s.second) + 1.0 <= r.duration_s + 1e-9)
}

/// Latency (p50, p99) and throughput over time, of each complete second.
fn over_time_charts(runs: &[Run<'_>]) -> (String, String) {
    let mut latency_series = Vec::new();
    let mut rps_series = Vec::new();
    for (name, r, style, alt) in runs {
        let seconds = complete_seconds(r).filter(|s| s.responses > 0);
        latency_series.push(Series {
            name: format!("{name} p50"),
            style: *style,
            points: seconds
                .clone()
                .map(|s| (f64::from(s.second), s.p50_us as f64))
                .collect(),
        });
        latency_series.push(Series {
            name: format!("{name} p99"),
            style: *alt,
            points: seconds
                .map(|s| (f64::from(s.second), s.p99_us as f64))
                .collect(),
        });
        rps_series.push(Series {
            name: name.to_string(),
            style: *style,
            points: complete_seconds(r)
                .map(|s| (f64::from(s.second), s.responses as f64))
                .collect(),
        });
    }
    let time_ticks = time_ticks(runs);
    let latency = LineChart {
        title: "Latency over time (p50, p99 of each complete second)".into(),
        x_label: "seconds since measuring started".into(),
        y_label: "latency".into(),
        x_ticks: time_ticks.clone(),
        y_format: scales::short_duration,
        x_format: |x| format!("{x} s"),
        y_log: false,
        series: latency_series,
        steps: false,
        marks: Vec::new(),
    }
    .render();
    let throughput = LineChart {
        title: "Throughput over time (complete seconds)".into(),
        x_label: "seconds since measuring started".into(),
        y_label: "responses per second".into(),
        x_ticks: time_ticks,
        y_format: |v| format!("{}/s", trim_number(v)),
        x_format: |x| format!("{x} s"),
        y_log: false,
        series: rps_series,
        steps: false,
        marks: Vec::new(),
    }
    .render();
    (latency, throughput)
}

/// Ticks of a time axis, in seconds since measuring started: about eight, up to the last
/// complete second of the longest run.
fn time_ticks(runs: &[Run<'_>]) -> Vec<(f64, String)> {
    let last_second = runs
        .iter()
        .flat_map(|(_, r, _, _)| complete_seconds(r).map(|s| s.second))
        .max()
        .unwrap_or(1)
        .max(1);
    let step = (f64::from(last_second) / 8.0).ceil().max(1.0) as u32;
    (0..=last_second)
        .step_by(step as usize)
        .map(|s| (f64::from(s), format!("{s} s")))
        .collect()
}

/// Most x ticks of the histogram (fewer where their labels would overlap).
const HISTOGRAM_TICKS: usize = 10;

/// The share of responses by latency on a log scale, up to the highest p99.9, each run a
/// stepped line.
fn histogram_chart(histograms: &[Drawn]) -> String {
    let low = histograms
        .iter()
        .map(|(_, h, _)| h.min() as f64)
        .fold(f64::INFINITY, f64::min);
    let high = histograms
        .iter()
        .map(|(_, h, _)| h.value_at_quantile(0.999) as f64)
        .fold(0.0, f64::max);
    let (low, high) = if low.is_finite() && high > low {
        (low, high)
    } else {
        (1.0, 10.0)
    };
    LineChart {
        title: "Latency histogram (share of responses, up to p99.9)".into(),
        x_label: "latency (log scale)".into(),
        y_label: "% of responses".into(),
        x_ticks: scales::log_latency_ticks(low.log10(), high.log10(), HISTOGRAM_TICKS),
        y_format: |v| format!("{}%", trim_number(v)),
        x_format: |x| format!("up to {}", scales::short_duration(10f64.powf(x))),
        y_log: false,
        series: histograms
            .iter()
            .map(|(name, h, style)| Series {
                name: name.to_string(),
                style: *style,
                points: scales::histogram_points(h, low, high, 40),
            })
            .collect(),
        steps: true,
        marks: Vec::new(),
    }
    .render()
}

/// Most x tick labels of the trend chart: a date and a time, about 60 units wide, fit about
/// seven times in the plot.
const TREND_LABELS: usize = 7;

/// p50 and p95 over the runs of a trend, one point per run, oldest first, each run at an equal
/// step and labelled by its start date and time (UTC); with many runs, every k-th is labelled,
/// the latest always.
fn trend_chart(t: &Trend) -> String {
    let series = |key: &str, name: &str, style| Series {
        name: name.to_string(),
        style,
        points: t
            .metrics
            .iter()
            .find(|m| m.key == key)
            .map(|m| {
                m.raw
                    .iter()
                    .enumerate()
                    .filter_map(|(i, v)| v.map(|v| (i as f64, v)))
                    .collect()
            })
            .unwrap_or_default(),
    };
    let n = t.runs.len();
    let every = n.div_ceil(TREND_LABELS).max(1);
    LineChart {
        title: "p50 and p95 over the runs".into(),
        x_label: "run start (UTC), oldest to latest".into(),
        y_label: "latency".into(),
        x_ticks: t
            .runs
            .iter()
            .enumerate()
            .filter(|(i, _)| (n - 1 - i).is_multiple_of(every))
            .map(|(i, run)| (i as f64, run.label.replacen(' ', "\n", 1)))
            .collect(),
        y_format: scales::short_duration,
        x_format: |i| format!("run {}", i + 1.0),
        y_log: false,
        series: vec![
            series("p50_us", "p50", Style::Current),
            series("p95_us", "p95", Style::CurrentAlt),
        ],
        steps: false,
        marks: Vec::new(),
    }
    .render()
}
