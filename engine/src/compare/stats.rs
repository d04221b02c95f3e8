//! The statistics of a comparison: a moving-block bootstrap confidence interval of the change
//! of a statistic between two runs, computed from each run's per-second samples.
//!
//! # Method
//!
//! Each run contributes one sample per second of its measured window (the result's
//! `time_series`): a latency percentile of that second, its responses, its errors. Seconds are
//! not independent (a slow spell lasts longer than a second), so the runs are resampled in
//! blocks of consecutive seconds: the *moving-block bootstrap* (Künsch, "The jackknife and the
//! bootstrap for general stationary observations", Ann. Statist. 17(3), 1989), with block length
//! `l = round(n^(1/3))`, the order Hall, Horowitz & Jing recommend for variances ("On blocking
//! rules for the bootstrap with dependent data", Biometrika 82(3), 1995).
//!
//! Each of [`RESAMPLES`] rounds resamples both runs independently, computes the statistic of
//! each (e.g. the mean of the per-second p95s), and records the change: `current / baseline - 1`
//! ([`Change::Relative`]) or `current - baseline` ([`Change::Absolute`]). The confidence
//! interval is the percentile interval of those changes (Efron & Tibshirani, *An Introduction
//! to the Bootstrap*, 1993, ch. 13), its bounds quantiles of them (Hyndman & Fan type 8, as
//! `statrs` computes them). The generator is seeded with [`SEED`], so the same two files always
//! give the same interval.
//!
//! Percentile intervals are too narrow on small samples, and a CI run of a few seconds gives
//! few samples. So the interval is the *expanded* percentile interval of Hesterberg ("What
//! teachers should know about the bootstrap", The American Statistician 69(4), 2015, §5.2):
//! its tails are `α' = Φ(−√(n/(n−1)) · t(n−1, 1−α/2))` instead of `α/2`, with `n` the smaller
//! run's sample count ([`expanded_tail`]; `statrs` gives Φ and Student's t). With 3 samples
//! the interval spans the whole bootstrap distribution; with 30 it is close to the plain one.
//!
//! This is the shape of criterion.rs's comparison (book, "Analysis Process", *Comparison*): a
//! bootstrap interval of the relative change, judged against a noise threshold; in loadgate the
//! threshold is the rule's allowed change and floor (`rules::judge`).

use statrs::statistics::{Data, OrderStatistics};

/// Bootstrap rounds per interval. With 10,000 rounds even the ~0.1% quantiles of the expanded
/// interval rest on about ten resamples (Efron & Tibshirani 1993, §19.3 ask ≥ 1,000 for
/// percentile intervals).
pub(crate) const RESAMPLES: usize = 10_000;
/// Confidence level of the intervals: 95%.
pub(crate) const CONFIDENCE: f64 = 0.95;
/// Seed of the bootstrap's generator (wyrand, `fastrand`): "loadgate" in ASCII.
pub(crate) const SEED: u64 = 0x6c6f_6164_6761_7465;
/// Fewest per-second samples a run needs for an interval; with fewer the verdict is
/// inconclusive.
pub(crate) const MIN_SAMPLES: usize = 3;

/// How the change between the two statistics is expressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    /// `current / baseline - 1`, a fraction. Resamples whose baseline statistic is 0 are
    /// skipped.
    Relative,
    /// `current - baseline`, in the statistic's unit.
    Absolute,
}

/// A confidence interval of a change.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Interval {
    /// Lower bound, in the change's unit.
    pub(crate) low: f64,
    /// Upper bound, in the change's unit.
    pub(crate) high: f64,
}

/// Block length of the moving-block bootstrap for `n` samples: `round(n^(1/3))`, at least 1.
pub(crate) fn block_length(n: usize) -> usize {
    ((n as f64).cbrt().round() as usize).clamp(1, n.max(1))
}

/// Appends to `out` a moving-block resample of `data` (same length as `data`): blocks of
/// [`block_length`] consecutive samples starting at uniformly drawn positions, the last block
/// cut short.
pub(crate) fn block_resample<T: Copy>(data: &[T], rng: &mut fastrand::Rng, out: &mut Vec<T>) {
    out.clear();
    let n = data.len();
    if n == 0 {
        return;
    }
    let l = block_length(n);
    while out.len() < n {
        let start = rng.usize(0..=n - l);
        let take = l.min(n - out.len());
        out.extend_from_slice(&data[start..start + take]);
    }
}

/// The [`CONFIDENCE`] bootstrap interval of the change of `statistic` from `baseline` to
/// `current` (see the module documentation). `None` when either side has fewer than
/// [`MIN_SAMPLES`] samples, or (relative) when no resample had a baseline statistic above 0.
pub(crate) fn change_interval<T: Copy>(
    baseline: &[T],
    current: &[T],
    statistic: &dyn Fn(&[T]) -> f64,
    change: Change,
) -> Option<Interval> {
    if baseline.len() < MIN_SAMPLES || current.len() < MIN_SAMPLES {
        return None;
    }
    let mut rng = fastrand::Rng::with_seed(SEED);
    let (mut b, mut c) = (Vec::with_capacity(baseline.len()), Vec::new());
    let mut changes = Vec::with_capacity(RESAMPLES);
    for _ in 0..RESAMPLES {
        block_resample(baseline, &mut rng, &mut b);
        block_resample(current, &mut rng, &mut c);
        let (sb, sc) = (statistic(&b), statistic(&c));
        let value = match change {
            Change::Relative if sb > 0.0 => sc / sb - 1.0,
            Change::Relative => continue,
            Change::Absolute => sc - sb,
        };
        if value.is_finite() {
            changes.push(value);
        }
    }
    if changes.len() < RESAMPLES / 2 {
        return None;
    }
    let mut data = Data::new(changes);
    let tail = expanded_tail(baseline.len().min(current.len()), CONFIDENCE);
    Some(Interval {
        low: data.quantile(tail),
        high: data.quantile(1.0 - tail),
    })
}

/// The lower tail probability of Hesterberg's expanded percentile interval at `confidence` for
/// `n` samples (n ≥ 2): `Φ(−√(n/(n−1)) · t(n−1, (1 + confidence)/2))`. It tends to
/// `(1 − confidence)/2` as `n` grows.
pub(crate) fn expanded_tail(n: usize, confidence: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal, StudentsT};
    let n = n.max(2) as f64;
    let t = StudentsT::new(0.0, 1.0, n - 1.0)
        .expect("valid Student's t")
        .inverse_cdf((1.0 + confidence) / 2.0);
    Normal::standard().cdf(-(n / (n - 1.0)).sqrt() * t)
}

/// The arithmetic mean of `values`; 0 when empty.
pub(crate) fn mean(values: &[f64]) -> f64 {
    use statrs::statistics::Statistics as _;
    if values.is_empty() {
        0.0
    } else {
        values.mean()
    }
}

/// The median of `values` (statrs); NaN when empty.
pub(crate) fn median(values: &[f64]) -> f64 {
    Data::new(values.to_vec()).median()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Normal samples (Box–Muller), seeded.
    fn normal(rng: &mut fastrand::Rng, n: usize, mean: f64, sd: f64) -> Vec<f64> {
        (0..n)
            .map(|_| {
                let (u1, u2) = (rng.f64().max(1e-12), rng.f64());
                mean + sd * (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
            })
            .collect()
    }

    #[test]
    fn expanded_tails_shrink_on_small_samples_and_tend_to_the_plain_ones() {
        // n = 5: t(4, 0.975) = 2.776, × √(5/4) = 3.104, Φ(−3.104) = 0.00095.
        assert!((expanded_tail(5, 0.95) - 0.000_95).abs() < 0.000_02);
        // n = 30: t(29, 0.975) = 2.045, × √(30/29) = 2.080, Φ(−2.080) = 0.0188.
        assert!((expanded_tail(30, 0.95) - 0.0188).abs() < 0.0002);
        assert!((expanded_tail(100_000, 0.95) - 0.025).abs() < 0.0001);
        assert!(expanded_tail(3, 0.95) < 1e-6);
    }

    #[test]
    fn block_length_grows_as_the_cube_root() {
        assert_eq!(block_length(1), 1);
        assert_eq!(block_length(5), 2);
        assert_eq!(block_length(27), 3);
        assert_eq!(block_length(1000), 10);
    }

    #[test]
    fn resamples_are_made_of_consecutive_blocks() {
        let data: Vec<u32> = (0..27).collect();
        let mut rng = fastrand::Rng::with_seed(1);
        let mut out = Vec::new();
        block_resample(&data, &mut rng, &mut out);
        assert_eq!(out.len(), 27);
        for block in out.chunks(3) {
            assert!(block.windows(2).all(|w| w[1] == w[0] + 1), "{out:?}");
        }
    }

    #[test]
    fn identical_constant_samples_give_a_zero_interval() {
        let a = [5.0; 10];
        let i = change_interval(&a, &a, &|s| mean(s), Change::Relative).unwrap();
        assert_eq!((i.low, i.high), (0.0, 0.0));
    }

    #[test]
    fn too_few_samples_give_no_interval() {
        let a = [5.0, 5.0];
        assert!(change_interval(&a, &[5.0; 10], &|s| mean(s), Change::Relative).is_none());
        assert!(change_interval(&[0.0; 5], &[1.0; 5], &|s| mean(s), Change::Relative).is_none());
    }

    #[test]
    fn a_known_shift_is_inside_the_interval_and_zero_is_not() {
        let mut rng = fastrand::Rng::with_seed(7);
        let base = normal(&mut rng, 60, 100.0, 2.0);
        let cur = normal(&mut rng, 60, 120.0, 2.0);
        let i = change_interval(&base, &cur, &|s| mean(s), Change::Relative).unwrap();
        assert!(i.low < 0.2 && 0.2 < i.high, "{i:?}");
        assert!(i.low > 0.17 && i.high < 0.23, "{i:?}");
        let i = change_interval(&base, &cur, &|s| mean(s), Change::Absolute).unwrap();
        assert!(i.low < 20.0 && 20.0 < i.high, "{i:?}");
    }

    /// For independent normal samples, the interval's width must match the textbook standard
    /// error of a difference of means, `sqrt(2) σ / sqrt(n)`: width ≈ 2 × 1.96 × that.
    #[test]
    fn interval_width_matches_the_standard_error_on_independent_samples() {
        let mut rng = fastrand::Rng::with_seed(11);
        let (n, sd) = (64, 5.0);
        let mut widths = Vec::new();
        for _ in 0..40 {
            let a = normal(&mut rng, n, 100.0, sd);
            let b = normal(&mut rng, n, 100.0, sd);
            let i = change_interval(&a, &b, &|s| mean(s), Change::Absolute).unwrap();
            widths.push(i.high - i.low);
        }
        let expected = 2.0 * 1.96 * (2.0f64).sqrt() * sd / (n as f64).sqrt();
        let got = median(&widths);
        assert!(
            (got / expected - 1.0).abs() < 0.2,
            "median width {got}, expected about {expected}"
        );
    }

    /// Coverage: over many pairs drawn from one distribution, the 95% interval holds 0 in
    /// about 95% of them (percentile intervals undercover a little on small samples).
    #[test]
    fn intervals_cover_zero_for_equal_distributions() {
        let mut rng = fastrand::Rng::with_seed(3);
        let trials = 200;
        let covered = (0..trials)
            .filter(|_| {
                let a = normal(&mut rng, 30, 50.0, 3.0);
                let b = normal(&mut rng, 30, 50.0, 3.0);
                let i = change_interval(&a, &b, &|s| mean(s), Change::Relative).unwrap();
                i.low <= 0.0 && 0.0 <= i.high
            })
            .count();
        let rate = covered as f64 / trials as f64;
        assert!((0.88..=0.99).contains(&rate), "coverage {rate}");
    }

    #[test]
    fn the_interval_is_reproducible() {
        let mut rng = fastrand::Rng::with_seed(5);
        let a = normal(&mut rng, 20, 10.0, 1.0);
        let b = normal(&mut rng, 20, 10.5, 1.0);
        let one = change_interval(&a, &b, &|s| mean(s), Change::Relative);
        let two = change_interval(&a, &b, &|s| mean(s), Change::Relative);
        assert_eq!(one, two);
    }
}
