//! The dashboard (`loadgate report --dashboard DIR`): one self-contained HTML page over a
//! history of results, `templates/dashboard.html` with inline SVG charts drawn by
//! `series_chart.rs` (no script, nothing fetched at view time: it works opened from a file
//! and from GitHub Pages).
//!
//! Per spec and runner type (results of one runner type are comparable run to run), a table
//! of its change points as `loadgate history show` gathers them (`history::changes`: the
//! series that changed at one result are one event; when, the commit range, each metric and
//! scope with its change and 95% interval) and the significant drifts of the current
//! segments, then per scope a chart of each metric (p50, p95, p99, throughput, error rate)
//! over the results in time order. The series, change points and drifts come from
//! `history::series` (E-Divisive means, Theil–Sen and Mann–Kendall); this module only shows
//! them.

use std::path::Path;

use anyhow::Context as _;
use serde::Serialize;

use super::series_chart::{self, format_shown, format_value, short_commit, time, web_url};
use super::templates;
use crate::history::{self, Series, SeriesMetric};

/// A change point is marked new when it is within the last this many results of its spec
/// and runner type (`loadgate history show`'s default `--recent`).
const NEW_WITHIN: usize = 5;

/// What the dashboard shows.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dashboard<'a> {
    /// Where the results came from, as given (`--dashboard DIR`).
    pub source: &'a str,
    /// The branch the results were chosen from (`--branch`), if one was.
    pub branch: Option<&'a str>,
    /// How many results the series hold.
    pub results: usize,
    /// The series (`history::series`: by spec, runner type, scope and metric).
    pub series: &'a [Series],
}

/// The page's context.
#[derive(Debug, Serialize)]
struct View {
    source: String,
    branch: Option<String>,
    results: usize,
    series: usize,
    /// Change points over all series.
    change_points: usize,
    groups: Vec<Group>,
}

/// One spec on one runner type.
#[derive(Debug, Serialize)]
struct Group {
    /// The anchor of its section: `g1`, `g2`, …
    id: String,
    spec: String,
    runner_type: String,
    results: usize,
    /// The first and the last result's time.
    first: String,
    last: String,
    /// Its change events, new ones first, each part the latest first.
    events: Vec<Event>,
    /// The significant drifts of its series' current segments.
    drifts: Vec<Shift>,
    scopes: Vec<Scope>,
}

/// The charts of one scope (`total`, a target, `flow/step`).
#[derive(Debug, Serialize)]
struct Scope {
    name: String,
    charts: Vec<Chart>,
}

/// One metric's chart.
#[derive(Debug, Serialize)]
struct Chart {
    metric: String,
    /// The latest value, formatted.
    latest: String,
    /// The `<svg>`: loadgate's own markup, its text escaped (`svg::escape`).
    svg: String,
}

/// A row of the change table: the series that changed at one result.
#[derive(Debug, Serialize)]
struct Event {
    /// Within the last [`NEW_WITHIN`] results.
    new: bool,
    /// The first result after the change: its time.
    when: String,
    /// The last result before the change and the first after.
    before: Commit,
    after: Commit,
    changes: Vec<Shift>,
}

/// How one series changed at an event, or drifts.
#[derive(Debug, Serialize)]
struct Shift {
    metric: String,
    scope: String,
    /// `+12.3%` (relative), `+1.20 pp` (error rate); for a drift, per result.
    change: String,
    /// The 95% interval, `+8.1% to +16.0%`.
    interval: String,
    /// Whether it is for the worse (slower, fewer responses, more errors).
    worse: bool,
    /// For a drift: over how many results.
    results: usize,
}

impl Shift {
    /// `shown` change (and its interval) of `metric`, as `history::changes` gives them.
    fn new(metric: SeriesMetric, scope: &str, shown: [f64; 3], results: usize) -> Shift {
        let [change, low, high] = shown;
        Shift {
            metric: metric.to_string(),
            scope: scope.to_string(),
            change: format_shown(metric, change),
            interval: format!(
                "{} to {}",
                format_shown(metric, low),
                format_shown(metric, high)
            ),
            worse: if metric == SeriesMetric::Throughput {
                change < 0.0
            } else {
                change > 0.0
            },
            results,
        }
    }
}

/// A commit as a short hash, a link to its page when known.
#[derive(Debug, Serialize)]
struct Commit {
    /// The short hash, or `?` when unknown.
    short: String,
    /// The whole commit, when known.
    full: Option<String>,
    /// Its page (a web address only).
    url: Option<String>,
}

impl Commit {
    fn of(commit: &history::Commit) -> Commit {
        Commit {
            short: commit
                .commit
                .as_deref()
                .map_or_else(|| "?".to_string(), |c| short_commit(c).to_string()),
            full: commit.commit.clone(),
            url: web_url(commit.commit_url.as_deref()).map(str::to_string),
        }
    }
}

/// Renders the dashboard; `templates_dir` may override `dashboard.html`. Errors: `templates_dir`
/// is given and holds no template (`TemplatesError`), the template fails to render.
pub(crate) fn render(
    dashboard: &Dashboard<'_>,
    templates_dir: Option<&Path>,
) -> anyhow::Result<String> {
    if let Some(dir) = templates_dir {
        templates::check_folder(dir)?;
    }
    let view = view(dashboard);
    let env = templates::environment(templates_dir);
    env.get_template(templates::DASHBOARD)?
        .render(minijinja::context! { view => view })
        .context("cannot render the dashboard")
}

/// The page's view: per spec and runner type (`history::changes`' groups), its changes and
/// its series' charts by scope.
fn view(dashboard: &Dashboard<'_>) -> View {
    let report = history::changes(dashboard.series, NEW_WITHIN);
    let groups = report
        .groups
        .iter()
        .enumerate()
        .map(|(i, g)| Group {
            id: format!("g{}", i + 1),
            spec: g.spec.clone(),
            runner_type: g.runner_type.clone(),
            results: g.results,
            first: time(&g.first),
            last: time(&g.last),
            events: g.events.iter().map(event).collect(),
            drifts: g.drifts.iter().map(drift).collect(),
            scopes: scopes(
                dashboard
                    .series
                    .iter()
                    .filter(|s| s.spec == g.spec && s.runner_type == g.runner_type),
            ),
        })
        .collect();
    View {
        source: dashboard.source.to_string(),
        branch: dashboard.branch.map(str::to_string),
        results: dashboard.results,
        series: dashboard.series.len(),
        change_points: dashboard.series.iter().map(|s| s.change_points.len()).sum(),
        groups,
    }
}

/// A row of the change table.
fn event(e: &history::ChangeEvent) -> Event {
    Event {
        new: e.new,
        when: time(&e.after.started_at),
        before: Commit::of(&e.before),
        after: Commit::of(&e.after),
        changes: e
            .changes
            .iter()
            .map(|c| Shift::new(c.metric, &c.scope, [c.change, c.low, c.high], 0))
            .collect(),
    }
}

/// A drift, per result.
fn drift(d: &history::DriftChange) -> Shift {
    Shift::new(d.metric, &d.scope, [d.per_result, d.low, d.high], d.results)
}

/// The charts of `series` (in their order: scope, then metric), by scope.
fn scopes<'a>(series: impl Iterator<Item = &'a Series>) -> Vec<Scope> {
    let mut scopes: Vec<Scope> = Vec::new();
    for s in series {
        let chart = Chart {
            metric: s.metric.to_string(),
            latest: s
                .points
                .last()
                .map(|p| format_value(s.metric, p.value))
                .unwrap_or_default(),
            svg: series_chart::render(s, &format!("{} of {}, {}", s.metric, s.scope, s.spec)),
        };
        match scopes.iter_mut().find(|scope| scope.name == s.scope) {
            Some(scope) => scope.charts.push(chart),
            None => scopes.push(Scope {
                name: s.scope.clone(),
                charts: vec![chart],
            }),
        }
    }
    scopes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Point;
    use crate::stats::changepoint::ChangePoint;
    use crate::stats::trend::Drift;

    /// A p95 series of 12 results, 10 ms then 13 ms from the 8th (index 7, commit `c07…`).
    fn stepped(spec: &str, scope: &str) -> Series {
        let points = (0..12)
            .map(|i| Point {
                started_at: format!("2026-11-{:02}T02:00:00.000Z", i + 1),
                branch: Some("main".to_string()),
                commit: Some(format!("c{i:02}{}", "ab".repeat(19))),
                commit_url: Some(format!("https://example.com/o/r/commit/c{i:02}")),
                value: if i < 7 { 10_000.0 } else { 13_000.0 } + f64::from(i % 3) * 100.0,
            })
            .collect();
        Series {
            spec: spec.to_string(),
            runner_type: "linux-x86_64, Test CPU, 4 CPUs".to_string(),
            scope: scope.to_string(),
            metric: SeriesMetric::P95,
            points,
            change_points: vec![ChangePoint {
                index: 7,
                p_value: 0.0001,
                mean_before: 10_000f64.ln(),
                mean_after: 13_000f64.ln(),
                low: 1.2f64.ln(),
                high: 1.4f64.ln(),
            }],
            drift: None,
        }
    }

    fn page(series: &[Series]) -> String {
        let dashboard = Dashboard {
            source: "history",
            branch: Some("main"),
            results: 12,
            series,
        };
        // minijinja writes `/` as `&#x2f;` (the same to a browser).
        render(&dashboard, None).unwrap().replace("&#x2f;", "/")
    }

    #[test]
    fn the_change_point_is_shown_at_its_commit() {
        let html = page(&[stepped("api", "total")]);
        // The table: the range from the last result before (c06) to the first after (c07),
        // each linked, and the change with its interval.
        let row = html
            .split("<tr><td data-label=\"when\">")
            .nth(1)
            .expect("a row of the change table");
        assert!(row.starts_with("2026-11-08 02:00 UTC"), "{row}");
        assert!(
            row.contains(r#"<a href="https://example.com/o/r/commit/c06" title="c06"#)
                && row.contains(">c06abab</a>..<a href=\"https://example.com/o/r/commit/c07\""),
            "{row}"
        );
        assert!(
            row.contains("+30.0%") && row.contains("+20.0% to +40.0%"),
            "{row}"
        );
        assert!(row.contains("worse"), "{row}");
        // Within the last 5 results: new.
        assert!(row.contains(r#"<strong class="new">new</strong>"#), "{row}");
        // The chart: one marker at the left edge of slot 7 of 12, named by the same commits.
        let svg = &html[html.find("<svg").unwrap()..];
        assert_eq!(svg.matches(r#"class="change-point""#).count(), 1);
        let plot_w = 480.0 - 64.0 - 26.0;
        let x = format!(r#"x1="{:.1}""#, 64.0 + plot_w * 7.0 / 12.0);
        let marker = &svg[svg.find(r#"class="change-point""#).unwrap()..];
        assert!(
            marker[..marker.find("</line>").unwrap()].contains(&x),
            "{marker}"
        );
        assert!(marker.contains("change point: p95 c06abab..c07abab, +30.0%"));
        // Two segment levels: about 10.1 ms and 13.1 ms.
        assert_eq!(svg.matches(r#"class="level""#).count(), 2);
        assert!(
            svg.contains("<title>level 10.09ms over results 1–7</title>"),
            "{svg}"
        );
        // Every point a link to its commit.
        assert_eq!(
            svg.matches(r#"<a class="point" href="https://example.com/o/r/commit/c"#)
                .count(),
            12
        );
    }

    #[test]
    fn a_significant_drift_is_listed_per_result() {
        let mut series = stepped("api", "total");
        series.drift = Some(Drift {
            slope: 1.01f64.ln(),
            low: 1.005f64.ln(),
            high: 1.015f64.ln(),
            p_value: 0.01,
            results: 5,
        });
        let mut calm = stepped("api", "GET /x");
        calm.drift = Some(Drift {
            p_value: 0.5,
            ..series.drift.unwrap()
        });
        let html = page(&[series, calm]);
        assert_eq!(
            html.matches("<h3>Drift since the last change point</h3>")
                .count(),
            1
        );
        assert!(
            html.contains(r#"p95 of total: <span class="worse">+1.0%</span> a result (+0.5% to +1.5%) over the last 5 results"#),
            "{html}"
        );
        // Not the one of p 0.5.
        assert_eq!(html.matches("</span> a result (").count(), 1);
    }

    #[test]
    fn hostile_names_and_links_stay_text() {
        let mut series = stepped("<script>alert(1)</script>", "<img src=x onerror=alert(2)>");
        series.points[3].commit_url = Some("javascript:alert(3)".to_string());
        series.points[4].branch = Some("\"><b>x</b>".to_string());
        series.runner_type = "linux & <i>cpu</i>".to_string();
        let html = page(&[series]);
        assert!(!html.contains("<script>alert") && !html.contains("<img src=x"));
        assert!(!html.contains("<i>cpu") && !html.contains("<b>x</b>"));
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("linux &amp; &lt;i&gt;cpu&lt;/i&gt;"));
        // The `javascript:` address is no link; the others are.
        assert!(!html.contains("javascript:"));
        assert_eq!(html.matches(r#"<a class="point""#).count(), 11);
        // Nothing fetched: no external script, style or image.
        assert!(!html.contains("<script") && !html.contains("<link") && !html.contains("url("));
    }

    #[test]
    fn series_group_by_spec_and_runner_type_then_scope() {
        let mut other = stepped("api", "GET /items");
        other.change_points.clear();
        let mut next = stepped("web", "total");
        next.metric = SeriesMetric::Throughput;
        let html = page(&[stepped("api", "total"), other, next]);
        assert_eq!(html.matches("<section id=").count(), 2);
        assert!(html.contains(r##"<a href="#g2">web</a>"##));
        assert_eq!(html.matches("<h3>total</h3>").count(), 2);
        assert!(html.contains("<h3>GET /items</h3>"));
        // The throughput series' change: 10 000 → 13 000 on −ln v is a drop.
        assert!(html.contains("−23.1%") || html.contains("-23.1%"), "{html}");
    }
}
