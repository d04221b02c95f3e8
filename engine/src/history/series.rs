//! The series of a history: one metric of one scope over the comparable results of one spec,
//! in time order, with its change points and the drift of its current segment.

use std::collections::BTreeMap;
use std::fmt;

use crate::result::{RunResult, TargetResult};
use crate::stats::changepoint::{self, ChangePoint};
use crate::stats::trend::{self, Drift};

/// A metric followed over results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SeriesMetric {
    /// The median latency, µs.
    P50,
    /// The 95th-percentile latency, µs.
    P95,
    /// The 99th-percentile latency, µs.
    P99,
    /// Complete responses per second.
    Throughput,
    /// Failed requests over requests, a fraction.
    ErrorRate,
}

impl SeriesMetric {
    /// Every metric, in the order reports list them.
    pub(crate) const ALL: [SeriesMetric; 5] = [
        SeriesMetric::P50,
        SeriesMetric::P95,
        SeriesMetric::P99,
        SeriesMetric::Throughput,
        SeriesMetric::ErrorRate,
    ];

    /// The metric's value for a target (or `total`), in its natural unit: µs, requests/s or a
    /// fraction; `None` for latency without a complete response.
    pub(crate) fn value(self, target: &TargetResult) -> Option<f64> {
        let latency = target.latency_us.as_ref();
        #[allow(clippy::cast_precision_loss)] // microseconds, far below 2^52
        match self {
            SeriesMetric::P50 => latency.map(|l| l.p50_us as f64),
            SeriesMetric::P95 => latency.map(|l| l.p95_us as f64),
            SeriesMetric::P99 => latency.map(|l| l.p99_us as f64),
            SeriesMetric::Throughput => Some(target.rps),
            SeriesMetric::ErrorRate => Some(target.error_rate),
        }
    }

    /// Whether the metric is judged on a log scale (a change is relative, `e^d − 1`).
    pub(crate) fn is_relative(self) -> bool {
        self != SeriesMetric::ErrorRate
    }

    /// `value` on the worse-is-positive scale of `compare::scale` (latency `ln v`, throughput
    /// `−ln v`, error rate `v`); `None` where a log scale meets a value not above 0.
    pub(crate) fn on_scale(self, value: f64) -> Option<f64> {
        let scaled = match self {
            SeriesMetric::P50 | SeriesMetric::P95 | SeriesMetric::P99 => value.ln(),
            SeriesMetric::Throughput => -value.ln(),
            SeriesMetric::ErrorRate => value,
        };
        scaled.is_finite().then_some(scaled)
    }

    /// A level on the scale back in the natural unit (the inverse of [`Self::on_scale`]).
    pub(crate) fn to_unit(self, scaled: f64) -> f64 {
        match self {
            SeriesMetric::P50 | SeriesMetric::P95 | SeriesMetric::P99 => scaled.exp(),
            SeriesMetric::Throughput => (-scaled).exp(),
            SeriesMetric::ErrorRate => scaled,
        }
    }

    /// A change `d` on the scale as reports show it: relative (`after / before − 1`, so a
    /// throughput drop is negative) on the log scales, the difference of fractions for the
    /// error rate.
    pub(crate) fn shown_change(self, d: f64) -> f64 {
        match self {
            SeriesMetric::P50 | SeriesMetric::P95 | SeriesMetric::P99 => d.exp_m1(),
            SeriesMetric::Throughput => (-d).exp_m1(),
            SeriesMetric::ErrorRate => d,
        }
    }
}

impl fmt::Display for SeriesMetric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SeriesMetric::P50 => "p50",
            SeriesMetric::P95 => "p95",
            SeriesMetric::P99 => "p99",
            SeriesMetric::Throughput => "throughput",
            SeriesMetric::ErrorRate => "error rate",
        })
    }
}

/// One result's value in a series.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Point {
    /// When the result started measuring (its `started_at`, RFC 3339 UTC).
    pub started_at: String,
    /// The measured code's branch, when recorded.
    pub branch: Option<String>,
    /// The measured code's commit, when recorded.
    pub commit: Option<String>,
    /// A web page of the commit, when recorded.
    pub commit_url: Option<String>,
    /// The value in the metric's natural unit: µs, requests/s or a fraction.
    pub value: f64,
}

/// One metric of one scope over the comparable results of one spec (same spec name, same
/// runner type), in time order.
#[derive(Debug, Clone)]
pub(crate) struct Series {
    /// The spec's name.
    pub spec: String,
    /// The runner type (`Environment::runner_type`) of every result of the series.
    pub runner_type: String,
    /// `total`, a target's name, or `flow/step` for a flow's step.
    pub scope: String,
    /// The metric.
    pub metric: SeriesMetric,
    /// The values, in time order.
    pub points: Vec<Point>,
    /// Its change points (`stats::changepoint::detect` with its default options), on the
    /// metric's scale ([`SeriesMetric::on_scale`]); `index` is an index into `points`.
    pub change_points: Vec<ChangePoint>,
    /// The drift of the current segment (the points after the last change point), on the
    /// metric's scale; `None` when the segment is too short.
    pub drift: Option<Drift>,
}

impl Series {
    /// The values on the metric's scale, one per point.
    pub(crate) fn scaled(&self) -> Vec<f64> {
        self.points
            .iter()
            .map(|p| self.metric.on_scale(p.value).unwrap_or(f64::NAN))
            .collect()
    }
}

/// The series of `results` (in any order), one per spec × runner type × scope × metric, with
/// their change points and drifts. Only results of `branch` count when it is given (results
/// that record none do not); results that measured the load generator rather than the service
/// do not count either: interrupted runs, invalid measurements, single shards of a sharded run.
/// A point whose value cannot be put on the scale (a latency without responses, a throughput
/// of 0) is left out of its series. Ordered by spec, runner type, scope (`total`, then the
/// targets in the order they first appear), metric ([`SeriesMetric::ALL`]).
pub(crate) fn series(results: &[RunResult], branch: Option<&str>) -> Vec<Series> {
    let mut kept: Vec<&RunResult> = results
        .iter()
        .filter(|r| !r.interrupted && r.health.valid && r.shard.is_none())
        .filter(|r| {
            branch.is_none_or(|b| r.source.as_ref().and_then(|s| s.branch.as_deref()) == Some(b))
        })
        .collect();
    kept.sort_by_cached_key(|r| {
        (
            humantime::parse_rfc3339_weak(&r.started_at).ok(),
            r.started_at.clone(),
        )
    });
    // (spec, runner type) → scope order and the points of each (scope, metric).
    let mut groups: BTreeMap<(String, String), Group> = BTreeMap::new();
    for result in kept {
        let key = (result.spec.name.clone(), result.environment.runner_type());
        let group = groups.entry(key).or_default();
        for target in std::iter::once(&result.total).chain(&result.targets) {
            let scope = if std::ptr::eq(target, &result.total) {
                "total"
            } else {
                target.name.as_str()
            };
            if !group.scopes.iter().any(|s| s == scope) {
                group.scopes.push(scope.to_string());
            }
            for metric in SeriesMetric::ALL {
                let Some(value) = metric
                    .value(target)
                    .filter(|v| metric.on_scale(*v).is_some())
                else {
                    continue;
                };
                group
                    .points
                    .entry((scope.to_string(), metric))
                    .or_default()
                    .push(point(result, value));
            }
        }
    }
    let mut out = Vec::new();
    for ((spec, runner_type), mut group) in groups {
        for scope in &group.scopes {
            for metric in SeriesMetric::ALL {
                let Some(points) = group.points.remove(&(scope.clone(), metric)) else {
                    continue;
                };
                out.push(analysed(Series {
                    spec: spec.clone(),
                    runner_type: runner_type.clone(),
                    scope: scope.clone(),
                    metric,
                    points,
                    change_points: Vec::new(),
                    drift: None,
                }));
            }
        }
    }
    out
}

/// The results of one spec and runner type: scopes in order of appearance, points per scope
/// and metric.
#[derive(Default)]
struct Group {
    scopes: Vec<String>,
    points: BTreeMap<(String, SeriesMetric), Vec<Point>>,
}

/// A result's point with `value`.
fn point(result: &RunResult, value: f64) -> Point {
    let source = result.source.as_ref();
    Point {
        started_at: result.started_at.clone(),
        branch: source.and_then(|s| s.branch.clone()),
        commit: source.and_then(|s| s.commit.clone()),
        commit_url: source.and_then(|s| s.commit_url.clone()),
        value,
    }
}

/// `series` with its change points and the drift of its current segment.
fn analysed(mut series: Series) -> Series {
    let values = series.scaled();
    series.change_points = changepoint::detect(&values, &changepoint::Options::default());
    let start = series.change_points.last().map_or(0, |c| c.index);
    series.drift = trend::drift(&values[start..]);
    series
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::SourceInfo;

    /// The committed result `long-baseline.json` (targets `api` and `static`) on night `day`,
    /// of `spec` on a CPU `cpu`, branch `branch`, its total p95 times `factor`.
    fn night(day: u32, spec: &str, cpu: &str, branch: &str, factor: f64) -> RunResult {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/results/long-baseline.json");
        let mut r = crate::result::read(&path).unwrap();
        r.started_at = format!("2026-11-{day:02}T02:00:00.000000Z");
        r.spec.name = spec.to_string();
        r.environment.cpu_model = Some(cpu.to_string());
        r.source = Some(SourceInfo {
            branch: Some(branch.to_string()),
            commit: Some(format!("{day:040x}")),
            commit_url: None,
        });
        let latency = r.total.latency_us.as_mut().unwrap();
        latency.p95_us = (latency.p95_us as f64 * factor).round() as u64;
        r
    }

    #[test]
    fn series_are_per_spec_runner_type_scope_and_metric_in_time_order() {
        let mut results = vec![
            night(3, "shop", "A", "main", 1.02),
            night(1, "shop", "A", "main", 1.0),
            night(2, "shop", "B", "main", 1.0),
            night(2, "shop", "A", "main", 1.01),
            night(1, "cart", "A", "main", 1.0),
            night(4, "shop", "A", "feature", 1.0),
        ];
        // Results that measured the generator, not the service, do not count.
        let mut interrupted = night(5, "shop", "A", "main", 1.0);
        interrupted.interrupted = true;
        let mut invalid = night(6, "shop", "A", "main", 1.0);
        invalid.health.valid = false;
        // A target without responses has no latency points, but its throughput and errors.
        let mut silent = night(7, "shop", "A", "main", 1.0);
        silent.targets[1].latency_us = None;
        silent.targets[1].rps = 0.0;
        results.extend([interrupted, invalid, silent]);

        let all = series(&results, None);
        // cart on A, shop on A, shop on B (by spec, then runner type) × total, api, static ×
        // five metrics.
        let groups: Vec<(&str, bool)> = all
            .iter()
            .step_by(15)
            .map(|s| (s.spec.as_str(), s.runner_type.contains(", A,")))
            .collect();
        assert_eq!(groups, [("cart", true), ("shop", true), ("shop", false)]);
        assert_eq!(all.len(), 3 * 3 * 5);
        let shop_a: Vec<&Series> = all
            .iter()
            .filter(|s| s.spec == "shop" && s.runner_type.contains(", A,"))
            .collect();
        assert_eq!(
            shop_a
                .iter()
                .map(|s| (s.scope.as_str(), s.metric.to_string()))
                .take(6)
                .collect::<Vec<_>>(),
            [
                ("total", "p50".to_string()),
                ("total", "p95".to_string()),
                ("total", "p99".to_string()),
                ("total", "throughput".to_string()),
                ("total", "error rate".to_string()),
                ("api", "p50".to_string()),
            ]
        );
        let p95 = shop_a
            .iter()
            .find(|s| s.scope == "total" && s.metric == SeriesMetric::P95)
            .unwrap();
        let days: Vec<&str> = p95.points.iter().map(|p| &p.started_at[8..10]).collect();
        assert_eq!(
            days,
            ["01", "02", "03", "04", "07"],
            "time order, both branches"
        );
        assert!(p95.points[2].value > p95.points[1].value);
        assert_eq!(
            p95.points[0].commit.as_deref(),
            Some(&*format!("{:040x}", 1))
        );
        let static_p50 = shop_a
            .iter()
            .find(|s| s.scope == "static" && s.metric == SeriesMetric::P50)
            .unwrap();
        assert_eq!(static_p50.points.len(), 4, "night 7 has no latency there");
        let static_rps = shop_a
            .iter()
            .find(|s| s.scope == "static" && s.metric == SeriesMetric::Throughput)
            .unwrap();
        assert_eq!(static_rps.points.len(), 4, "a throughput of 0 has no log");

        // One branch: the feature branch's result is left out.
        let main = series(&results, Some("main"));
        let p95 = main
            .iter()
            .find(|s| {
                s.spec == "shop"
                    && s.runner_type.contains(", A,")
                    && s.scope == "total"
                    && s.metric == SeriesMetric::P95
            })
            .unwrap();
        assert_eq!(p95.points.len(), 4);
        assert!(
            p95.points
                .iter()
                .all(|p| p.branch.as_deref() == Some("main"))
        );
        assert!(series(&results, Some("gone")).is_empty());
    }

    #[test]
    fn scales_are_worse_is_positive_and_come_back() {
        for metric in SeriesMetric::ALL {
            let v = 0.25;
            let back = metric.to_unit(metric.on_scale(v).unwrap());
            assert!((back - v).abs() < 1e-12, "{metric}");
        }
        // Latency up and throughput down are both positive changes on the scale.
        let up =
            SeriesMetric::P95.on_scale(120.0).unwrap() - SeriesMetric::P95.on_scale(100.0).unwrap();
        let down = SeriesMetric::Throughput.on_scale(80.0).unwrap()
            - SeriesMetric::Throughput.on_scale(100.0).unwrap();
        assert!(up > 0.0 && down > 0.0);
        assert!((SeriesMetric::P95.shown_change(up) - 0.2).abs() < 1e-12);
        assert!((SeriesMetric::Throughput.shown_change(down) + 0.2).abs() < 1e-12);
        assert_eq!(SeriesMetric::Throughput.on_scale(0.0), None);
        assert_eq!(SeriesMetric::ErrorRate.on_scale(0.0), Some(0.0));
    }
}
