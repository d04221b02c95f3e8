//! The scales of the latency charts, from an HDR histogram to points: HdrHistogram's
//! percentile "nines" scale, and latency buckets evenly spaced on a log scale, with their
//! axis ticks. Drawn by [`super::svg`].

use hdrhistogram::Histogram;

use crate::units::format_duration_us;

/// Percentiles on the "nines" scale of HdrHistogram's percentile plot: `x = log10(1 / (1 -
/// q))`, so 90% is 1, 99% is 2, 99.9% is 3. Returns `(x, latency µs)` from 0 to the last nine
/// the histogram can resolve (at most 99.999%).
pub(crate) fn percentile_points(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    if h.is_empty() {
        return Vec::new();
    }
    // Beyond log10(count) nines a quantile is the max: stop there.
    let max_nines = (h.len() as f64).log10().clamp(1.0, 5.0);
    let steps = (max_nines * 20.0).round() as usize;
    (0..=steps)
        .map(|i| {
            let x = max_nines * i as f64 / steps as f64;
            let q = 1.0 - 10f64.powf(-x);
            (x, h.value_at_quantile(q) as f64)
        })
        .collect()
}

/// Ticks of the nines scale up to `max_nines`.
pub(crate) fn nines_ticks(max_nines: f64) -> Vec<(f64, String)> {
    ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%"]
        .iter()
        .enumerate()
        .filter(|(i, _)| *i as f64 <= max_nines + 1e-9)
        .map(|(i, l)| (i as f64, l.to_string()))
        .collect()
}

/// The share of responses (%) per latency bucket, buckets evenly spaced on a log scale from
/// `low_us` to `high_us`: `(log10 of the bucket's upper bound, share)`.
pub(crate) fn histogram_points(
    h: &Histogram<u64>,
    low_us: f64,
    high_us: f64,
    buckets: usize,
) -> Vec<(f64, f64)> {
    if h.is_empty() || high_us <= low_us {
        return Vec::new();
    }
    let (a, b) = (low_us.max(1.0).log10(), high_us.log10());
    let total = h.len() as f64;
    let mut points = Vec::with_capacity(buckets + 1);
    let mut below = h.count_between(0, low_us as u64);
    points.push((a, 0.0));
    for i in 1..=buckets {
        let upper = 10f64.powf(a + (b - a) * i as f64 / buckets as f64);
        let upto = h.count_between(0, upper as u64);
        points.push((
            a + (b - a) * i as f64 / buckets as f64,
            (upto - below) as f64 / total * 100.0,
        ));
        below = upto;
    }
    points
}

/// Ticks for a log10 latency axis between `a` and `b` (log10 µs): 1-2-5 steps.
pub(crate) fn log_latency_ticks(a: f64, b: f64) -> Vec<(f64, String)> {
    let mut ticks = Vec::new();
    let mut decade = 10f64.powf(a.floor());
    while decade.log10() <= b + 1e-9 {
        for m in [1.0, 2.0, 5.0] {
            let v: f64 = decade * m;
            let x = v.log10();
            if x >= a - 1e-9 && x <= b + 1e-9 {
                ticks.push((x, format_duration_us(v)));
            }
        }
        decade *= 10.0;
    }
    ticks
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ranking docs/schemas.md states (and compares with HdrHistogram's ports): the
    /// result's percentile q is the value of rank `ceil(q × count)`. Of 16 values 1..16 µs,
    /// p90 is rank ceil(14.4) = 15 (HdrHistogram_py's `int(14.4 + 0.5)` = 14 would give
    /// 14 µs), p50 rank 8, p95 rank ceil(15.2) = 16.
    #[test]
    fn result_percentiles_rank_by_ceiling() {
        let mut h = crate::measure::latency_histogram();
        for v in 1..=16u64 {
            h.record(v).unwrap();
        }
        let s = crate::result::summary(&h).unwrap();
        assert_eq!((s.p50_us, s.p90_us, s.p95_us), (8, 15, 16));
    }

    #[test]
    fn percentile_points_follow_the_histogram() {
        let mut h = crate::measure::latency_histogram();
        for v in 1..=10_000u64 {
            h.record(v).unwrap();
        }
        let points = percentile_points(&h);
        assert_eq!(points.first().unwrap().0, 0.0);
        assert!((points.last().unwrap().0 - 4.0).abs() < 1e-9);
        // x = 1 is p90, x = 2 is p99.
        let at = |x: f64| points.iter().find(|p| (p.0 - x).abs() < 1e-9).unwrap().1;
        assert!((at(1.0) - 9_000.0).abs() < 20.0);
        assert!((at(2.0) - 9_900.0).abs() < 20.0);
        assert!(points.windows(2).all(|w| w[0].1 <= w[1].1));
    }

    #[test]
    fn histogram_shares_add_up() {
        let mut h = crate::measure::latency_histogram();
        for v in [100u64, 200, 400, 800, 1_600, 3_200] {
            h.record_n(v, 10).unwrap();
        }
        let points = histogram_points(&h, 90.0, 3_300.0, 20);
        let sum: f64 = points.iter().map(|p| p.1).sum();
        assert!((sum - 100.0).abs() < 1e-6, "{sum}");
    }
}
