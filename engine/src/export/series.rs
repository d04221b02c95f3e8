//! What an export sends, whatever the protocol: a result as gauge series, named and labelled in
//! Prometheus' conventions (base units, `snake_case`, no `_total` on a gauge).
//!
//! Per second of the measured window (the result's `time_series`, and each target's), at
//! `started_at` + the second's index:
//! - `loadgate_requests_per_second`: requests that ended in that second (responses and
//!   transport errors);
//! - `loadgate_errors_per_second`: failed requests that ended in that second;
//! - `loadgate_latency_seconds{quantile}`: that second's 0.5, 0.9, 0.95, 0.99 and 0.999
//!   quantiles (seconds without responses have none).
//!
//! Whole run, once, at the end of the measured window (`started_at` + `duration_s`):
//! - `loadgate_run_requests_per_second`, `loadgate_run_error_ratio` (a fraction, 0 to 1);
//! - `loadgate_run_latency_seconds{quantile}`: the run's 0.5, 0.9, 0.95, 0.99 and 0.999
//!   quantiles.
//!
//! Every series has the labels `spec` (the spec's name) and `scope` (`total`, or a target's
//! name: a flow's step is `flow/step`), and a shard's (`run --shard K/N`) `shard` (`K/N`), so
//! that the shards of one run make distinct series (their merge has none).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::result::{LatencySummary, RunResult, TargetResult, TimeSample};

/// One metric: its name, its unit (UCUM, as OTLP names units) and its help text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Metric {
    /// The metric's name in Prometheus' conventions, e.g. `loadgate_latency_seconds`.
    pub(crate) name: &'static str,
    /// Its unit in UCUM (`s`, `1/s`, `1`).
    pub(crate) unit: &'static str,
    /// One line on what it is.
    pub(crate) help: &'static str,
}

/// Requests ended per second, per second of the run.
pub(crate) const REQUESTS_PER_SECOND: Metric = Metric {
    name: "loadgate_requests_per_second",
    unit: "1/s",
    help: "Requests that ended in this second of the run (responses and transport errors).",
};
/// Failed requests per second, per second of the run.
pub(crate) const ERRORS_PER_SECOND: Metric = Metric {
    name: "loadgate_errors_per_second",
    unit: "1/s",
    help: "Failed requests that ended in this second of the run.",
};
/// Latency quantiles, per second of the run.
pub(crate) const LATENCY_SECONDS: Metric = Metric {
    name: "loadgate_latency_seconds",
    unit: "s",
    help: "Latency quantile of the responses that ended in this second of the run.",
};
/// Throughput of the whole run.
pub(crate) const RUN_REQUESTS_PER_SECOND: Metric = Metric {
    name: "loadgate_run_requests_per_second",
    unit: "1/s",
    help: "Complete responses per second over the run's measured window.",
};
/// Error ratio of the whole run.
pub(crate) const RUN_ERROR_RATIO: Metric = Metric {
    name: "loadgate_run_error_ratio",
    unit: "1",
    help: "Failed requests over all requests of the run, 0 to 1.",
};
/// Latency quantiles of the whole run.
pub(crate) const RUN_LATENCY_SECONDS: Metric = Metric {
    name: "loadgate_run_latency_seconds",
    unit: "s",
    help: "Latency quantile over the run's measured window.",
};

/// The quantiles exported, as their label values, with the field of a summary that holds each.
const QUANTILES: [&str; 5] = ["0.5", "0.9", "0.95", "0.99", "0.999"];

/// One value at one time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Point {
    /// Milliseconds since the Unix epoch.
    pub(crate) time_ms: i64,
    /// The value, in the metric's unit.
    pub(crate) value: f64,
}

/// One series: a metric, its labels (`spec`, `scope`, and `quantile` for latencies), and its
/// points in time order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Series {
    /// What is measured.
    pub(crate) metric: Metric,
    /// Label names and values: `spec`, `scope`, then `shard` and `quantile` when they apply.
    pub(crate) labels: Vec<(&'static str, String)>,
    /// Points in time order, at most one per millisecond.
    pub(crate) points: Vec<Point>,
}

/// The most points sent in one request: a long run is sent in several, each series whole in
/// one of them. 10,000 points are about 0.3 MB of remote write before snappy and 2 to 4 MB of
/// OTLP JSON (each point repeats its attributes), well within the collector's default limit
/// of 20 MiB; a run of 60 s with 10 targets (4,620 points) is one request.
pub(crate) const MAX_POINTS_PER_REQUEST: usize = 10_000;

/// `all` in consecutive batches of at most [`MAX_POINTS_PER_REQUEST`] points (a series of
/// more is a batch alone), one request each.
pub(crate) fn batches(all: &[Series]) -> Vec<&[Series]> {
    let mut batches = Vec::new();
    let mut start = 0;
    while start < all.len() {
        let mut end = start + 1;
        let mut points = all[start].points.len();
        while end < all.len() && points + all[end].points.len() <= MAX_POINTS_PER_REQUEST {
            points += all[end].points.len();
            end += 1;
        }
        batches.push(&all[start..end]);
        start = end;
    }
    batches
}

/// The series of `result` (see the module's doc). Errors: a `started_at` that is not an RFC
/// 3339 time.
pub(crate) fn series(result: &RunResult) -> Result<Vec<Series>, humantime::TimestampError> {
    let started = humantime::parse_rfc3339(&result.started_at)?;
    let start_ms = millis(started);
    let end_ms = millis(started + Duration::from_secs_f64(result.duration_s.max(0.0)));
    let mut all = Vec::new();
    let scopes = std::iter::once((&result.total, &result.time_series))
        .chain(result.targets.iter().map(|t| (t, &t.time_series)));
    for (target, seconds) in scopes {
        let mut labels = vec![
            ("spec", result.spec.name.clone()),
            ("scope", target.name.clone()),
        ];
        if let Some(shard) = result.shard {
            labels.push(("shard", format!("{}/{}", shard.index, shard.count)));
        }
        per_second(&mut all, &labels, seconds, start_ms);
        whole_run(&mut all, &labels, target, end_ms);
    }
    all.retain(|s| !s.points.is_empty());
    Ok(all)
}

/// The per-second series of one scope.
fn per_second(
    all: &mut Vec<Series>,
    labels: &[(&'static str, String)],
    seconds: &[TimeSample],
    start_ms: i64,
) {
    let at = |s: &TimeSample| start_ms.saturating_add(i64::from(s.second) * 1000);
    let count = |metric, value: fn(&TimeSample) -> u64| Series {
        metric,
        labels: labels.to_vec(),
        points: seconds
            .iter()
            .map(|s| Point {
                time_ms: at(s),
                value: value(s) as f64,
            })
            .collect(),
    };
    all.push(count(REQUESTS_PER_SECOND, |s| {
        s.requests.unwrap_or(s.responses + s.errors)
    }));
    all.push(count(ERRORS_PER_SECOND, |s| s.errors));
    for (i, quantile) in QUANTILES.iter().enumerate() {
        let points = seconds
            .iter()
            .filter(|s| s.responses > 0)
            .filter_map(|s| {
                let us = [
                    Some(s.p50_us),
                    s.p90_us,
                    s.p95_us,
                    Some(s.p99_us),
                    s.p99_9_us,
                ][i]?;
                Some(Point {
                    time_ms: at(s),
                    value: seconds_of(us),
                })
            })
            .collect();
        all.push(quantile_series(LATENCY_SECONDS, labels, quantile, points));
    }
}

/// The whole-run series of one scope: one point each, at `end_ms`.
fn whole_run(
    all: &mut Vec<Series>,
    labels: &[(&'static str, String)],
    target: &TargetResult,
    end_ms: i64,
) {
    let point = |value| {
        vec![Point {
            time_ms: end_ms,
            value,
        }]
    };
    all.push(Series {
        metric: RUN_REQUESTS_PER_SECOND,
        labels: labels.to_vec(),
        points: point(target.rps),
    });
    all.push(Series {
        metric: RUN_ERROR_RATIO,
        labels: labels.to_vec(),
        points: point(target.error_rate),
    });
    if let Some(latency) = &target.latency_us {
        for (quantile, us) in QUANTILES.iter().zip(run_quantiles_us(latency)) {
            let points = point(seconds_of(us));
            all.push(quantile_series(
                RUN_LATENCY_SECONDS,
                labels,
                quantile,
                points,
            ));
        }
    }
}

/// A summary's quantiles, in the order of [`QUANTILES`], in microseconds.
fn run_quantiles_us(latency: &LatencySummary) -> [u64; 5] {
    [
        latency.p50_us,
        latency.p90_us,
        latency.p95_us,
        latency.p99_us,
        latency.p99_9_us,
    ]
}

/// A series of `metric` with `labels` and a `quantile` label.
fn quantile_series(
    metric: Metric,
    labels: &[(&'static str, String)],
    quantile: &str,
    points: Vec<Point>,
) -> Series {
    let mut labels = labels.to_vec();
    labels.push(("quantile", quantile.to_string()));
    Series {
        metric,
        labels,
        points,
    }
}

/// Microseconds as seconds.
fn seconds_of(us: u64) -> f64 {
    us as f64 / 1e6
}

/// Milliseconds since the Unix epoch (negative before it).
fn millis(time: SystemTime) -> i64 {
    match time.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_millis()).unwrap_or(i64::MAX),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed `current.json` (a version-1 result: no seconds per target) with a known
    /// start and duration, and its first target only.
    fn result() -> RunResult {
        let fixture = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/results/current.json"
        );
        let mut result = crate::result::read(std::path::Path::new(fixture)).unwrap();
        result.started_at = "2026-11-27T10:00:00.000500Z".into();
        result.duration_s = 2.5;
        result.targets.truncate(1);
        result
    }

    #[test]
    fn seconds_are_stamped_from_the_start_and_summaries_at_the_end() {
        let result = result();
        let all = series(&result).unwrap();
        let start = 1_795_773_600_000; // 2026-11-27T10:00:00Z, the microseconds dropped
        let find = |name: &str, scope: &str, quantile: Option<&str>| {
            all.iter()
                .find(|s| {
                    s.metric.name == name
                        && s.labels[1].1 == scope
                        && s.labels
                            .iter()
                            .find(|l| l.0 == "quantile")
                            .map(|l| l.1.as_str())
                            == quantile
                })
                .unwrap_or_else(|| panic!("{name} {scope} {quantile:?}"))
        };
        let rps = find("loadgate_requests_per_second", "total", None);
        assert_eq!(rps.points.len(), result.time_series.len());
        for (point, second) in rps.points.iter().zip(&result.time_series) {
            assert_eq!(point.time_ms, start + i64::from(second.second) * 1000);
            assert_eq!(point.value, second.requests.unwrap() as f64);
        }
        let p99 = find("loadgate_run_latency_seconds", "total", Some("0.99"));
        let latency = result.total.latency_us.as_ref().unwrap();
        assert_eq!(
            p99.points,
            [Point {
                time_ms: start + 2500,
                value: latency.p99_us as f64 / 1e6
            }]
        );
        assert_eq!(p99.labels[0], ("spec", result.spec.name.clone()));
        // The target has no seconds of its own (a version-1 result): its summaries only.
        let target = &result.targets[0].name;
        assert!(all.iter().all(|s| !s.points.is_empty()));
        let of_target: Vec<_> = all.iter().filter(|s| &s.labels[1].1 == target).collect();
        assert_eq!(of_target.len(), 2 + QUANTILES.len());
        assert!(
            of_target
                .iter()
                .all(|s| s.metric.name.starts_with("loadgate_run_"))
        );
    }

    #[test]
    fn batches_keep_series_whole_and_under_the_limit() {
        let of = |points: usize| Series {
            metric: LATENCY_SECONDS,
            labels: Vec::new(),
            points: vec![
                Point {
                    time_ms: 0,
                    value: 0.0
                };
                points
            ],
        };
        let max = MAX_POINTS_PER_REQUEST;
        let all = [of(max / 2), of(max / 2), of(1), of(2 * max), of(5)];
        let sizes: Vec<usize> = batches(&all).iter().map(|b| b.len()).collect();
        assert_eq!(sizes, [2, 1, 1, 1], "two halves fit; twice the most alone");
        assert!(batches(&[]).is_empty());
    }

    #[test]
    fn a_shard_is_labelled_and_a_bad_start_is_an_error() {
        let mut result = result();
        result.shard = Some(crate::result::ShardInfo { index: 2, count: 4 });
        let all = series(&result).unwrap();
        assert!(
            all.iter()
                .all(|s| s.labels[2] == ("shard", "2/4".to_string()))
        );
        result.started_at = "yesterday".into();
        assert!(series(&result).is_err());
    }
}
