//! The change-point report of `loadgate history show`, as data (its JSON form is this
//! module's types): per spec and runner type, each change point with the commits around it and
//! the series that changed there, and the significant drifts of the current segments.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Point, Series, SeriesMetric};

/// The level below which a drift's Mann–Kendall p-value makes it reported: 5%.
pub(crate) const DRIFT_ALPHA: f64 = 0.05;

/// The change-point report (`loadgate history show --format json`).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ChangeReport {
    /// A change point is new when its first result after is one of the last `recent` results
    /// of its spec and runner type (`--recent`).
    pub recent: usize,
    /// Per spec and runner type, ordered by spec then runner type.
    pub groups: Vec<GroupChanges>,
}

/// The change points and drifts of one spec on one runner type.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct GroupChanges {
    /// The spec's name.
    pub spec: String,
    /// The runner type (`linux-x86_64, <CPU model>, 4 CPUs`).
    pub runner_type: String,
    /// How many results the series cover.
    pub results: usize,
    /// When the first of them started measuring (RFC 3339 UTC).
    pub first: String,
    /// When the last of them started measuring.
    pub last: String,
    /// The change points, the series that changed at one result gathered into one event: new
    /// ones first, each part latest first.
    pub events: Vec<ChangeEvent>,
    /// The drifts of the series' current segments (the results since their last change
    /// point) whose Mann–Kendall p-value is below [`DRIFT_ALPHA`].
    pub drifts: Vec<DriftChange>,
}

/// One or more series changing at the same result.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ChangeEvent {
    /// Whether the change is within the last `recent` results.
    pub new: bool,
    /// The first result after the change: its position among the group's `results`, from 1.
    pub result: usize,
    /// The last result before the change.
    pub before: Commit,
    /// The first result after the change.
    pub after: Commit,
    /// The series that changed, in the order of the report's series (scope, then metric).
    pub changes: Vec<Change>,
}

/// The code a result measured, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Commit {
    /// When the result started measuring (RFC 3339 UTC).
    pub started_at: String,
    /// The branch, when recorded.
    pub branch: Option<String>,
    /// The commit, when recorded.
    pub commit: Option<String>,
    /// A web page of the commit, when recorded.
    pub commit_url: Option<String>,
}

/// How one series changed at a change point.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Change {
    /// `total`, a target, or `flow/step`.
    pub scope: String,
    /// The metric (`p50`, `p95`, `p99`, `throughput`, `error_rate`).
    pub metric: SeriesMetric,
    /// Whether `change`, `low` and `high` are relative (`after / before − 1`: latency and
    /// throughput) or differences of fractions (the error rate).
    pub relative: bool,
    /// The change of the segments' levels (a throughput drop is negative).
    pub change: f64,
    /// The 95% interval of the change: low end.
    pub low: f64,
    /// The 95% interval of the change: high end.
    pub high: f64,
    /// The level of the segment before, in the metric's unit (µs, requests/s, fraction): the
    /// back-transformed mean on the scale (a geometric mean for latency and throughput).
    pub before: f64,
    /// The level of the segment after, in the metric's unit.
    pub after: f64,
    /// The change point's p-value.
    pub p_value: f64,
}

/// A significant drift of a series' current segment.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct DriftChange {
    /// `total`, a target, or `flow/step`.
    pub scope: String,
    /// The metric.
    pub metric: SeriesMetric,
    /// Whether `per_result`, `low` and `high` are relative (per result, compounded) or
    /// differences of fractions.
    pub relative: bool,
    /// The change per result (Theil–Sen slope, shown as `change` is).
    pub per_result: f64,
    /// The 95% interval of `per_result`: low end.
    pub low: f64,
    /// The 95% interval of `per_result`: high end.
    pub high: f64,
    /// The Mann–Kendall p-value, corrected for serial correlation.
    pub p_value: f64,
    /// How many results the drift was measured over (the current segment).
    pub results: usize,
}

/// The change-point report of `series` (as [`super::series`] makes them): a change point is
/// new when its first result after is among the last `recent` results of its group.
pub(crate) fn changes(series: &[Series], recent: usize) -> ChangeReport {
    let mut groups: BTreeMap<(&str, &str), Vec<&Series>> = BTreeMap::new();
    for s in series {
        groups
            .entry((s.spec.as_str(), s.runner_type.as_str()))
            .or_default()
            .push(s);
    }
    let groups = groups
        .into_iter()
        .map(|((spec, runner_type), series)| group(spec, runner_type, &series, recent))
        .collect();
    ChangeReport { recent, groups }
}

/// The report of one spec and runner type.
fn group(spec: &str, runner_type: &str, series: &[&Series], recent: usize) -> GroupChanges {
    // The group's results in time order: every series' points, by time (series are in time
    // order, and each result gives at most one point to a series).
    let mut times: Vec<&str> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.started_at.as_str()))
        .collect();
    times.sort_by_cached_key(|t| (humantime::parse_rfc3339_weak(t).ok(), t.to_string()));
    times.dedup();
    let position = |time: &str| times.iter().position(|t| *t == time).unwrap_or(0);
    let mut events: BTreeMap<usize, ChangeEvent> = BTreeMap::new();
    for s in series {
        for cp in &s.change_points {
            let (Some(before), Some(after)) = (
                s.points.get(cp.index.wrapping_sub(1)),
                s.points.get(cp.index),
            ) else {
                continue;
            };
            let at = position(&after.started_at);
            let event = events.entry(at).or_insert_with(|| ChangeEvent {
                new: at + recent >= times.len(),
                result: at + 1,
                before: commit(before),
                after: commit(after),
                changes: Vec::new(),
            });
            let shown = |d: f64| s.metric.shown_change(d);
            let (a, b) = (shown(cp.low), shown(cp.high));
            event.changes.push(Change {
                scope: s.scope.clone(),
                metric: s.metric,
                relative: s.metric.is_relative(),
                change: shown(cp.mean_after - cp.mean_before),
                low: a.min(b),
                high: a.max(b),
                before: s.metric.to_unit(cp.mean_before),
                after: s.metric.to_unit(cp.mean_after),
                p_value: cp.p_value,
            });
        }
    }
    let mut events: Vec<ChangeEvent> = events.into_values().rev().collect();
    events.sort_by_key(|e| !e.new); // stable: new first, each part latest first
    GroupChanges {
        spec: spec.to_string(),
        runner_type: runner_type.to_string(),
        results: times.len(),
        first: times.first().map(|t| (*t).to_string()).unwrap_or_default(),
        last: times.last().map(|t| (*t).to_string()).unwrap_or_default(),
        events,
        drifts: series.iter().filter_map(|s| drift(s)).collect(),
    }
}

/// The code and time of a point.
fn commit(point: &Point) -> Commit {
    Commit {
        started_at: point.started_at.clone(),
        branch: point.branch.clone(),
        commit: point.commit.clone(),
        commit_url: point.commit_url.clone(),
    }
}

/// The drift of a series' current segment, when significant.
fn drift(s: &Series) -> Option<DriftChange> {
    let d = s.drift.as_ref().filter(|d| d.p_value < DRIFT_ALPHA)?;
    let shown = |x: f64| s.metric.shown_change(x);
    let (a, b) = (shown(d.low), shown(d.high));
    Some(DriftChange {
        scope: s.scope.clone(),
        metric: s.metric,
        relative: s.metric.is_relative(),
        per_result: shown(d.slope),
        low: a.min(b),
        high: a.max(b),
        p_value: d.p_value,
        results: d.results,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::changepoint::ChangePoint;

    /// A series of `n` results (night `i` from commit `c{i}`) with a change point at `at`.
    fn stepped(scope: &str, metric: SeriesMetric, n: usize, at: usize) -> Series {
        Series {
            spec: "shop".to_string(),
            runner_type: "linux-x86_64, A, 4 CPUs".to_string(),
            scope: scope.to_string(),
            metric,
            points: (0..n)
                .map(|i| Point {
                    started_at: format!("2026-11-{:02}T02:00:00Z", i + 1),
                    branch: None,
                    commit: Some(format!("c{i}")),
                    commit_url: None,
                    value: 1.0,
                })
                .collect(),
            change_points: vec![ChangePoint {
                index: at,
                p_value: 1e-6,
                mean_before: 0.0,
                mean_after: 0.2,
                low: 0.1,
                high: 0.3,
            }],
            drift: None,
        }
    }

    #[test]
    fn series_changing_at_one_result_are_one_event_new_ones_first() {
        let series = [
            stepped("total", SeriesMetric::P95, 12, 9),
            stepped("api", SeriesMetric::P95, 12, 9),
            stepped("total", SeriesMetric::Throughput, 12, 3),
        ];
        let report = changes(&series, 5);
        let group = &report.groups[0];
        assert_eq!(group.results, 12);
        let events: Vec<(usize, bool, usize)> = group
            .events
            .iter()
            .map(|e| (e.result, e.new, e.changes.len()))
            .collect();
        assert_eq!(events, [(10, true, 2), (4, false, 1)]);
        let new = &group.events[0];
        assert_eq!(new.before.commit.as_deref(), Some("c8"));
        assert_eq!(new.after.commit.as_deref(), Some("c9"));
        assert!((new.changes[0].change - 0.2f64.exp_m1()).abs() < 1e-12);
        // Throughput: a rise on the worse-is-positive scale is a drop, shown negative, its
        // interval in order.
        let drop = &group.events[1].changes[0];
        assert!(drop.change < 0.0 && drop.low < drop.change && drop.change < drop.high);
    }
}
