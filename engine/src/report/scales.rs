//! The scales of the charts, from an HDR histogram to points: HdrHistogram's percentile
//! "nines" scale, and latency buckets evenly spaced on a log scale; the ticks of log axes and
//! the tick labels. The SVG charts (`svg.rs`) use this module, not the other way.

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

/// Ticks of the nines scale up to `max_nines`: 0%, 50%, 90%, 99%, 99.9%, ... (HdrHistogram's
/// percentile distribution plot).
pub(crate) fn nines_ticks(max_nines: f64) -> Vec<(f64, String)> {
    let fifty = (0.0, "50%".to_string());
    let nines = ["90%", "99%", "99.9%", "99.99%", "99.999%"]
        .iter()
        .enumerate()
        .map(|(i, l)| ((i + 1) as f64, l.to_string()));
    std::iter::once((0.0, "0%".to_string()))
        .chain(std::iter::once((2f64.log10(), fifty.1)))
        .chain(nines)
        .filter(|(x, _)| *x <= max_nines + 1e-9)
        .collect()
}

/// A percentile's name for a point of the nines scale: `p99.9` at x = 3.
pub(crate) fn nines_name(x: f64) -> String {
    let q = (1.0 - 10f64.powf(-x)) * 100.0;
    format!("p{}", trim_number(q))
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

/// A tick value without trailing zeros, so that it shows the step's precision: `2.5`, `10`,
/// `0.25` (at most three decimals).
pub(crate) fn trim_number(value: f64) -> String {
    let text = format!("{value:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" { "0" } else { text }.to_string()
}

/// A latency for an axis: as [`format_duration_us`], without trailing zeros (`10ms`,
/// `2.5ms`, `500us`).
pub(crate) fn short_duration(us: f64) -> String {
    let text = format_duration_us(us);
    let unit_at = text
        .find(|c: char| c.is_ascii_alphabetic())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(unit_at);
    let number = if number.contains('.') {
        number.trim_end_matches('0').trim_end_matches('.')
    } else {
        number
    };
    format!("{number}{unit}")
}

/// The values of a log axis from `low` to `high` (> 0), as log10: at its ends the values of
/// the `1, 2, 5 × 10^k` ladder at or below `low` and at or above `high`; between them every
/// value of that ladder, or fewer over a wide range (only `10^k`, then every other decade) so
/// that at most `most` remain, or more over a narrow one (`1, 1.5, 2, 3, 5, 7`). A value
/// closer to an end than a twelfth of the axis is left out, so that labels keep apart.
pub(crate) fn log_ticks(low: f64, high: f64, most: usize) -> Vec<f64> {
    let (low, high) = (low.max(1e-9), high.max(low.max(1e-9)));
    let ladder = |steps: &[f64], decades: i32| -> Vec<f64> {
        let first = low.log10().floor() as i32 - 1;
        let last = high.log10().ceil() as i32 + 1;
        (first..=last)
            .filter(|d| (d - first) % decades == 0)
            .flat_map(|d| steps.iter().map(move |m| (m * 10f64.powi(d)).log10()))
            .collect()
    };
    let one_two_five = ladder(&[1.0, 2.0, 5.0], 1);
    let eps = 1e-9;
    let bottom = one_two_five
        .iter()
        .rev()
        .find(|x| **x <= low.log10() + eps)
        .copied()
        .unwrap_or(low.log10());
    let top = one_two_five
        .iter()
        .find(|x| **x >= high.log10() - eps)
        .copied()
        .unwrap_or(high.log10());
    let top = if top > bottom { top } else { bottom + 1.0 };
    let gap = (top - bottom) / 12.0;
    let inner = |values: Vec<f64>| -> Vec<f64> {
        values
            .into_iter()
            .filter(|x| *x > bottom + gap && *x < top - gap)
            .collect()
    };
    let ladders: [(&[f64], i32); 4] =
        [(&[1.0, 2.0, 5.0], 1), (&[1.0], 1), (&[1.0], 2), (&[1.0], 3)];
    let mut between = inner(ladder(&[1.0, 1.5, 2.0, 3.0, 5.0, 7.0], 1));
    if inner(one_two_five.clone()).len() >= 2 {
        for (steps, decades) in ladders {
            between = inner(ladder(steps, decades));
            if between.len() + 2 <= most {
                break;
            }
        }
    }
    std::iter::once(bottom)
        .chain(between)
        .chain(std::iter::once(top))
        .collect()
}

/// Ticks for a log10 latency axis between `a` and `b` (log10 µs): the values of
/// [`log_ticks`] within it, at most `most`, labelled by [`short_duration`].
pub(crate) fn log_latency_ticks(a: f64, b: f64, most: usize) -> Vec<(f64, String)> {
    log_ticks(10f64.powf(a), 10f64.powf(b), most)
        .into_iter()
        .filter(|x| *x >= a - 1e-9 && *x <= b + 1e-9)
        .map(|x| (x, short_duration(10f64.powf(x))))
        .collect()
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

    #[test]
    fn log_ticks_step_1_2_5_and_thin_out_over_a_wide_range() {
        let values = |t: Vec<f64>| -> Vec<f64> {
            t.iter()
                .map(|x| (10f64.powf(*x) * 1e6).round() / 1e6)
                .collect()
        };
        // 120 µs to 3 ms: 100, 200, 500, 1000, 2000, 5000.
        assert_eq!(
            values(log_ticks(120.0, 3_000.0, 8)),
            [100.0, 200.0, 500.0, 1_000.0, 2_000.0, 5_000.0]
        );
        // 100 µs to 10 s: decades only.
        assert_eq!(
            values(log_ticks(100.0, 1e7, 8)),
            [100.0, 1e3, 1e4, 1e5, 1e6, 1e7]
        );
        // 900 µs to 120 ms: the ends on the 1-2-5 ladder, decades between.
        assert_eq!(
            values(log_ticks(900.0, 120_000.0, 7)),
            [500.0, 1e3, 1e4, 1e5, 200_000.0]
        );
        // A narrow range (6 to 14 ms) gets the finer ladder.
        assert_eq!(
            values(log_ticks(6_000.0, 14_000.0, 8)),
            [5_000.0, 7_000.0, 10_000.0, 15_000.0, 20_000.0]
        );
        let labels: Vec<String> = log_latency_ticks(2.0, 7.0, 8)
            .into_iter()
            .map(|t| t.1)
            .collect();
        assert_eq!(labels, ["100us", "1ms", "10ms", "100ms", "1s", "10s"]);
    }

    #[test]
    fn short_durations_and_percentile_names_have_no_trailing_zeros() {
        assert_eq!(short_duration(2_500.0), "2.5ms");
        assert_eq!(short_duration(10_000.0), "10ms");
        assert_eq!(short_duration(500.0), "500us");
        assert_eq!(short_duration(1_500_000.0), "1.5s");
        assert_eq!(nines_name(3.0), "p99.9");
        assert_eq!(nines_name(2f64.log10()), "p50");
        let ticks: Vec<String> = nines_ticks(3.0).into_iter().map(|t| t.1).collect();
        assert_eq!(ticks, ["0%", "50%", "90%", "99%", "99.9%"]);
    }
}
