//! The dashboard's chart of one series (`history::Series`): its values over results in time
//! order as an inline SVG line, each point a link to its commit's page with a tooltip (commit,
//! branch, time, value), the change points as vertical markers and each segment's level as a
//! horizontal line across it.
//!
//! Results are spaced evenly along x (one slot each, in time order: commits are steps, not
//! times); x tick labels name the commit (7 hex) over the date, at most one every
//! [`MIN_TICK_GAP`] units so that no two overlap. The y axis spans the values and levels
//! (from 0 when they are close to it), its tick labels in the metric's unit. The SVG scales
//! with its container (`viewBox`, no fixed size): it reads at 360 px as at 1280 px.

use std::fmt::Write as _;

use super::scales::trim_number;
use super::svg::{escape, nice_ticks};
use crate::history::{Point, Series, SeriesMetric};
use crate::units::{MISSING, Unit, format_duration_us, format_relative};

/// Chart size in SVG user units.
const WIDTH: f64 = 480.0;
const HEIGHT: f64 = 234.0;
/// Room for the y tick labels (`123.45ms`, 8 characters of the 12-unit font).
const LEFT: f64 = 64.0;
/// Half an x tick label past the last slot's middle.
const RIGHT: f64 = 26.0;
const TOP: f64 = 10.0;
/// Two lines of x tick labels.
const BOTTOM: f64 = 42.0;
/// Least distance between the middles of two x tick labels, SVG units: a label is at most 7
/// characters of the 12-unit font (about 48 units wide), and some air.
const MIN_TICK_GAP: f64 = 62.0;

/// The unit a metric's values are in.
pub(super) fn unit(metric: SeriesMetric) -> Unit {
    match metric {
        SeriesMetric::P50 | SeriesMetric::P95 | SeriesMetric::P99 => Unit::Micros,
        SeriesMetric::Throughput => Unit::PerSecond,
        SeriesMetric::ErrorRate => Unit::Ratio,
    }
}

/// A value of `metric` as the dashboard shows it: `12.30ms`, `512.0/s`, `0.150%`.
pub(super) fn format_value(metric: SeriesMetric, value: f64) -> String {
    unit(metric).format(value)
}

/// A change `d` on the metric's scale as the dashboard shows it: [`format_shown`] of
/// `SeriesMetric::shown_change`.
fn format_change(metric: SeriesMetric, d: f64) -> String {
    format_shown(metric, metric.shown_change(d))
}

/// A change as shown (`SeriesMetric::shown_change`): relative on the log scales (`+12.3%`, a
/// throughput drop negative), in percentage points for the error rate (`+1.20 pp`).
pub(super) fn format_shown(metric: SeriesMetric, shown: f64) -> String {
    if metric.is_relative() {
        format_relative(Some(shown))
    } else if shown.is_finite() {
        format!("{:+.2} pp", shown * 100.0)
    } else {
        MISSING.to_string()
    }
}

/// A y tick label: shorter than [`format_value`] where the unit allows (`12ms`, `0.2%`).
fn tick_label(metric: SeriesMetric, value: f64) -> String {
    match unit(metric) {
        Unit::Micros => format_duration_us(value)
            .replace(".00ms", "ms")
            .replace(".00s", "s"),
        Unit::Ratio => format!("{}%", trim_number(value * 100.0)),
        Unit::PerSecond => format!("{}/s", trim_number(value)),
        Unit::Count => trim_number(value),
    }
}

/// The date of an RFC 3339 time, `2026-11-27`; the text as it is when it has none.
pub(super) fn date(started_at: &str) -> &str {
    started_at.get(..10).unwrap_or(started_at)
}

/// An RFC 3339 time as the dashboard shows it, to the minute: `2026-11-27 16:05 UTC`.
pub(super) fn time(started_at: &str) -> String {
    match started_at.get(..16) {
        Some(minute) if started_at.ends_with('Z') => format!("{} UTC", minute.replace('T', " ")),
        Some(minute) => minute.replace('T', " "),
        None => started_at.to_string(),
    }
}

/// The first 7 characters of a commit (its short hash).
pub(super) fn short_commit(commit: &str) -> &str {
    commit.get(..7).unwrap_or(commit)
}

/// `url` when it is a web address (`https://`, `http://`) that can be a link; a result file
/// could hold a `javascript:` one.
pub(super) fn web_url(url: Option<&str>) -> Option<&str> {
    url.filter(|u| {
        let lower = u.to_ascii_lowercase();
        lower.starts_with("https://") || lower.starts_with("http://")
    })
}

/// A point's tooltip: commit, branch, time and value, one per line.
fn point_title(metric: SeriesMetric, point: &Point) -> String {
    let mut lines = vec![
        point
            .commit
            .as_deref()
            .map_or_else(|| "commit unknown".to_string(), |c| format!("commit {c}")),
    ];
    if let Some(branch) = &point.branch {
        lines.push(format!("branch {branch}"));
    }
    lines.push(time(&point.started_at));
    lines.push(format!("{metric} {}", format_value(metric, point.value)));
    lines.join("\n")
}

/// The levels of a series' segments, in the metric's unit: `(first index, end index, level)`,
/// each level the mean on the metric's scale of the segment's values (for latency and
/// throughput, a geometric mean), as the change points' means are.
pub(super) fn segments(series: &Series) -> Vec<(usize, usize, f64)> {
    let mut bounds: Vec<usize> = series
        .change_points
        .iter()
        .map(|c| c.index)
        .filter(|i| *i > 0 && *i < series.points.len())
        .collect();
    bounds.push(series.points.len());
    let mut start = 0;
    let mut out = Vec::new();
    for end in bounds {
        let scaled: Vec<f64> = series.points[start..end]
            .iter()
            .filter_map(|p| series.metric.on_scale(p.value))
            .collect();
        if !scaled.is_empty() {
            let mean = scaled.iter().sum::<f64>() / scaled.len() as f64;
            out.push((start, end, series.metric.to_unit(mean)));
        }
        start = end;
    }
    out
}

/// Where data land: the y range and the plot area.
struct Frame {
    n: usize,
    y_bottom: f64,
    y_top: f64,
    plot_w: f64,
    plot_h: f64,
}

impl Frame {
    /// The SVG x of the middle of slot `i`.
    fn x(&self, i: usize) -> f64 {
        self.edge(i) + self.plot_w / self.n as f64 / 2.0
    }

    /// The SVG x of the left edge of slot `i` (`n`: the plot's right edge).
    fn edge(&self, i: usize) -> f64 {
        LEFT + self.plot_w * i as f64 / self.n as f64
    }

    /// The SVG y of a value.
    fn y(&self, v: f64) -> f64 {
        TOP + self.plot_h - (v - self.y_bottom) / (self.y_top - self.y_bottom) * self.plot_h
    }
}

/// The y ticks for values from `low` to `high` (to `zero_top` when both are 0): from 0 when `low` is under a third of `high`
/// (a small value is not drawn as if it were far from 0), else around the values, 10% of
/// their span or 5% of the value, whichever is more, beyond them.
fn y_ticks(low: f64, high: f64, zero_top: f64) -> Vec<f64> {
    if !(low.is_finite() && high.is_finite()) {
        return vec![0.0, 1.0];
    }
    if low >= 0.0 && (low < high / 3.0 || high <= 0.0) {
        return nice_ticks(0.0, if high > 0.0 { high * 1.05 } else { zero_top });
    }
    // At least 5% of the value: a flat series (or one of rounding differences) is a line
    // across the middle, and noise of 1% does not fill the chart.
    let pad = ((high - low) * 0.1).max(high.abs() * 0.05);
    let bottom = if low >= 0.0 {
        (low - pad).max(0.0)
    } else {
        low - pad
    };
    nice_ticks(bottom, high + pad)
}

/// The chart of `series` as an `<svg>` element; `title` names it for screen readers.
pub(super) fn render(series: &Series, title: &str) -> String {
    let levels = segments(series);
    let values = series
        .points
        .iter()
        .map(|p| p.value)
        .chain(levels.iter().map(|l| l.2))
        .filter(|v| v.is_finite());
    let (low, high) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    // All 0 (no errors): an axis to 1% for the error rate, to 1 for the others.
    let zero_top = if series.metric == SeriesMetric::ErrorRate {
        0.01
    } else {
        1.0
    };
    let ticks = y_ticks(low, high, zero_top);
    let frame = Frame {
        n: series.points.len().max(1),
        y_bottom: ticks[0],
        y_top: *ticks.last().expect("at least two ticks"),
        plot_w: WIDTH - LEFT - RIGHT,
        plot_h: HEIGHT - TOP - BOTTOM,
    };
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" xmlns="http://www.w3.org/2000/svg" aria-label="{}" font-family="sans-serif" font-size="12"><title>{}</title>"#,
        escape(title),
        escape(title)
    );
    axes(&mut svg, &frame, series, &ticks);
    for (start, end, level) in &levels {
        let y = frame.y(*level);
        let _ = write!(
            svg,
            r##"<line class="level" x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#b35900" stroke-width="1.5" stroke-dasharray="6 3"><title>level {} over results {}–{}</title></line>"##,
            frame.edge(*start),
            frame.edge(*end),
            escape(&format_value(series.metric, *level)),
            start + 1,
            end
        );
    }
    change_markers(&mut svg, &frame, series);
    points(&mut svg, &frame, series);
    svg.push_str("</svg>");
    svg
}

/// Grid lines, the axes and their tick labels.
fn axes(svg: &mut String, f: &Frame, series: &Series, ticks: &[f64]) {
    let right = LEFT + f.plot_w;
    let bottom = TOP + f.plot_h;
    for v in ticks {
        let y = f.y(*v);
        let _ = write!(
            svg,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{right:.1}" y2="{y:.1}" stroke="#e4e4e4"/><text class="y-tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT - 5.0,
            y + 4.0,
            escape(&tick_label(series.metric, *v))
        );
    }
    let slot = f.plot_w / f.n as f64;
    let every = (MIN_TICK_GAP / slot).ceil().max(1.0) as usize;
    for (i, point) in series.points.iter().enumerate() {
        if i % every != 0 {
            continue;
        }
        let x = f.x(i);
        let (first, second) = match &point.commit {
            Some(c) => (short_commit(c).to_string(), date(&point.started_at)),
            None => (date(&point.started_at).to_string(), ""),
        };
        // The date without its year under the commit: `11-27`.
        let second = second.get(5..).unwrap_or(second);
        let _ = write!(
            svg,
            r##"<line x1="{x:.1}" y1="{bottom:.1}" x2="{x:.1}" y2="{:.1}" stroke="#333"/><text class="x-tick" x="{x:.1}" y="{:.1}" text-anchor="middle"><tspan x="{x:.1}">{}</tspan>"##,
            bottom + 4.0,
            bottom + 19.0,
            escape(&first)
        );
        if !second.is_empty() {
            let _ = write!(
                svg,
                r#"<tspan x="{x:.1}" dy="13">{}</tspan>"#,
                escape(second)
            );
        }
        svg.push_str("</text>");
    }
    let _ = write!(
        svg,
        r##"<path d="M{LEFT} {TOP} V{bottom:.1} H{right:.1}" fill="none" stroke="#333"/>"##
    );
}

/// A vertical marker between the last result before each change point and the first after,
/// its tooltip naming the commits and the change.
fn change_markers(svg: &mut String, f: &Frame, series: &Series) {
    for cp in &series.change_points {
        let (Some(before), Some(after)) = (
            cp.index.checked_sub(1).and_then(|i| series.points.get(i)),
            series.points.get(cp.index),
        ) else {
            continue;
        };
        let x = f.edge(cp.index);
        let commit = |p: &Point| p.commit.as_deref().map_or("?", short_commit).to_string();
        let _ = write!(
            svg,
            r##"<line class="change-point" x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#a11" stroke-width="2" stroke-dasharray="4 3"><title>change point: {} {}..{}, {}</title></line>"##,
            TOP + f.plot_h,
            series.metric,
            escape(&commit(before)),
            escape(&commit(after)),
            escape(&format_change(
                series.metric,
                cp.mean_after - cp.mean_before
            ))
        );
    }
}

/// The line through the points, and each point: a link to its commit's page when it has one,
/// with its tooltip.
fn points(svg: &mut String, f: &Frame, series: &Series) {
    let mut d = String::new();
    for (i, p) in series.points.iter().enumerate() {
        let _ = write!(
            d,
            "{}{:.1} {:.1}",
            if i == 0 { "M" } else { " L" },
            f.x(i),
            f.y(p.value)
        );
    }
    let _ = write!(
        svg,
        r##"<path d="{d}" fill="none" stroke="#1f4e9c" stroke-width="1.5"/>"##
    );
    let r = if series.points.len() > 60 { 2.5 } else { 3.5 };
    for (i, p) in series.points.iter().enumerate() {
        let circle = format!(
            r##"<circle cx="{:.1}" cy="{:.1}" r="{r}" fill="#1f4e9c"/><title>{}</title>"##,
            f.x(i),
            f.y(p.value),
            escape(&point_title(series.metric, p))
        );
        match web_url(p.commit_url.as_deref()) {
            Some(url) => {
                let _ = write!(
                    svg,
                    r#"<a class="point" href="{}">{circle}</a>"#,
                    escape(url)
                );
            }
            None => {
                let _ = write!(svg, r#"<g class="point">{circle}</g>"#);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_and_near_flat_series_get_a_finite_axis_around_them() {
        for (low, high) in [
            (7_330.0, 7_330.0),
            (7_330.0, 7_330.000_000_000_001),
            (0.0, 0.0),
            (1_028.2, 1_031.0),
        ] {
            let ticks = y_ticks(low, high, 1.0);
            let (first, last) = (ticks[0], *ticks.last().unwrap());
            assert!(ticks.iter().all(|t| t.is_finite()), "{ticks:?}");
            assert!(first <= low && last >= high && last > first, "{ticks:?}");
            assert!(ticks.len() <= 12, "{ticks:?}");
        }
        // Far from 0: the axis does not start at 0; close to it, it does.
        assert!(y_ticks(10_000.0, 13_000.0, 1.0)[0] >= 9_000.0);
        assert_eq!(y_ticks(1.0, 13_000.0, 1.0)[0], 0.0);
        assert_eq!(y_ticks(0.0, 0.0, 0.01).last(), Some(&0.01));
    }
}
