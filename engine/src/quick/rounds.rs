//! The summary across rounds (`--rounds N`, rewrk's): for the throughput and each latency
//! percentile, the mean over the rounds and their sample standard deviation
//! `sqrt(Σ(x − mean)² / (n − 1))`, beside the lowest and highest round.

use std::fmt::Write as _;

use statrs::statistics::Statistics as _;

use crate::result::{LatencySummary, RunResult};
use crate::units::format_duration_us;

/// The metrics summarised: name, and its value in one result (`None` without responses).
type Metric = (&'static str, fn(&RunResult) -> Option<f64>);

const METRICS: [Metric; 6] = [
    ("rps", |r| Some(r.total.rps)),
    ("p50", |r| percentile(r, |l| l.p50_us)),
    ("p90", |r| percentile(r, |l| l.p90_us)),
    ("p95", |r| percentile(r, |l| l.p95_us)),
    ("p99", |r| percentile(r, |l| l.p99_us)),
    ("p99.9", |r| percentile(r, |l| l.p99_9_us)),
];

fn percentile(r: &RunResult, p: fn(&LatencySummary) -> u64) -> Option<f64> {
    r.total.latency_us.as_ref().map(|l| p(l) as f64)
}

/// Mean and sample standard deviation (statrs; 0 for one value) of `values`.
pub(crate) fn mean_stdev(values: &[f64]) -> (f64, f64) {
    let stdev = if values.len() < 2 {
        0.0
    } else {
        values.std_dev()
    };
    (values.mean(), stdev)
}

/// The summary of `results` (rounds of one run), as text.
pub(crate) fn summary(results: &[RunResult]) -> String {
    let mut out = format!("\nAcross {} rounds:\n", results.len());
    let _ = writeln!(
        out,
        "  {:<6} {:>12} {:>12} {:>12} {:>12}",
        "", "mean", "stdev", "min", "max"
    );
    for (name, value) in METRICS {
        let values: Vec<f64> = results.iter().filter_map(value).collect();
        if values.is_empty() {
            continue;
        }
        let (mean, stdev) = mean_stdev(&values);
        let (min, max) = (values.as_slice().min(), values.as_slice().max());
        let show = |x: f64| {
            if name == "rps" {
                format!("{x:.1}/s")
            } else {
                format_duration_us(x)
            }
        };
        let _ = writeln!(
            out,
            "  {name:<6} {:>12} {:>12} {:>12} {:>12}",
            show(mean),
            show(stdev),
            show(min),
            show(max)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn sample_standard_deviation() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, squares 32, sample variance 32/7.
        let (mean, stdev) = super::mean_stdev(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(mean, 5.0);
        assert!((stdev - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert_eq!(super::mean_stdev(&[3.0]), (3.0, 0.0));
    }
}
