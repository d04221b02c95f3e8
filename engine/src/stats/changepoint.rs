//! Change points in a series of results (one metric over runs, in time order, on the metric's
//! worse-is-positive scale): E-Divisive means (Matteson & James 2014) with the Student t-test
//! significance of Hunter / Apache Otava (Fleming et al., ICPE 2023, "Hunter: Using Change Point
//! Detection to Hunt for Performance Regressions"), windowed, split and merged as Otava 0.8
//! (`otava/analysis.py`) does; MongoDB's use of E-Divisive for performance results is Daly et
//! al. (ICPE 2020).
//!
//! The algorithm ([`detect`]):
//! 1. **Split.** Windows of `window` values start at 0 and move on by `⌊window/2⌋` (or to the
//!    last change point the window found, if that is further). In each window, E-Divisive
//!    repeatedly takes, over the window's current segments, the split `τ` (and end `κ`) that
//!    maximises the energy statistic
//!    `Q(X, Y) = 2/(m+n)·Σ|X_i − Y_j| − 2m/((m+n)(n−1))·Σ_{i<k}|X_i − X_k| − 2n/((m+n)(m−1))·Σ_{j<k}|Y_j − Y_k|`
//!    (X the segment's values before τ, n of them; Y those from τ to κ, m of them; Matteson &
//!    James 2014, eq. 7 with α = 1), and keeps it while the t-test of the two parts of its
//!    segment has a p-value ≤ 10·`max_p` (Otava's relaxed first pass; 2·`max_p` from 0.05,
//!    `max_p` itself from 0.5). The union over windows are the "weak" change points.
//! 2. **Merge.** Each weak change point is tested between its neighbours (the values from the
//!    previous change point to it, and from it to the next). While one has a p-value ≥ `max_p`,
//!    the one with the largest is removed and its two neighbours re-tested; then, while the
//!    smallest change `|mean_after − mean_before|` is ≤ `min_magnitude`, that one is removed the
//!    same way. (Otava re-tests the change points at the removed one's index and the next, which
//!    leaves the left neighbour's statistics stale, as its authors note in apache/otava#96; here
//!    the left and right neighbours are re-tested.)
//!
//! The t-test (Otava's `TTestSignificanceTester`): Student's two-sample test with a pooled
//! variance, as `scipy.stats.ttest_ind_from_stats(equal_var=True)` computes it from the
//! segments' means and population (divisor n) standard deviations:
//! `t = (x̄₂ − x̄₁)/√(s²·(1/n₁ + 1/n₂))`, `s² = ((n₁−1)·v₁ + (n₂−1)·v₂)/(n₁ + n₂ − 2)`, two-sided,
//! `n₁ + n₂ − 2` degrees of freedom.
//!
//! **Serial correlation** (`serial_correlation: true`). Successive results are correlated (0.3–0.5
//! measured, the review of 2026-11-27, §5); a test that takes them as independent splits A/A
//! series. The two segments are modelled as AR(1) with one coefficient ρ, estimated by the
//! pooled lag-1 autocorrelation of the two segments, each about its own mean,
//! `r = Σ_seg Σ_t (x_t − x̄_seg)(x_{t+1} − x̄_seg) / Σ_seg Σ_t (x_t − x̄_seg)²` over the N values
//! of both segments (a segment of fewer than 3 values is left out), corrected for its bias
//! (about `−(1 + 4ρ)/n` per segment of n values, Kendall 1954: `(r + g/N)/(1 − 4g/N)` for g
//! segments, where N ≥ 8g; below that r and its correction are too noisy to trust — at 14
//! values the correction turned r = 0.16 into 0.71 and hid a +20% step — and the 0.4 the
//! review measured between CI runs is taken, `prediction::PRIOR_RHO`), and
//! kept in [0, 0.9]: the stored baseline's estimate, `prediction::pooled_rho`. The
//! variance of a segment's mean is then `s²/n · f(n, ρ)` with the exact AR(1) factor
//! `f(n, ρ) = 1 + 2·Σ_{k=1}^{n−1} (1 − k/n)·ρ^k` (Box & Jenkins 1976), so
//! `t = (x̄₂ − x̄₁)/√(s²·(f₁/n₁ + f₂/n₂))` with `n₁/f₁ + n₂/f₂ − 2` degrees of freedom (the
//! effective sample sizes). With ρ̂ = 0 this is Otava's test.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// The detector's parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Options {
    /// Values per window of the split step (≥ 2; smaller is taken as 2). Default 60: the review's
    /// 60–100 results (Otava's default is 50).
    pub window: usize,
    /// The largest p-value of a change point that is kept (0 < max_p < 1). Default 0.001,
    /// Otava's: with tens of series per run (metrics × scopes) checked every night, a per-series
    /// rate of 0.001 keeps false change points rare across all of them.
    pub max_p: f64,
    /// The smallest change kept, `|mean_after − mean_before|` on the caller's scale (about the
    /// relative change on a log scale; Otava compares the larger of the two relative changes of
    /// the means). Default 0.
    pub min_magnitude: f64,
    /// Whether the t-test's variance is inflated for the lag-1 (AR(1)) correlation of successive
    /// results (see the module's documentation). Default true; false is Otava's test.
    pub serial_correlation: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            window: 60,
            max_p: 0.001,
            min_magnitude: 0.0,
            serial_correlation: true,
        }
    }
}

/// A change in a series' level between two adjacent segments.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ChangePoint {
    /// The first index of the new segment: `values[index]` is the first value after the change.
    pub index: usize,
    /// The two-sided p-value of the t-test between the adjacent segments.
    pub p_value: f64,
    /// The mean of the segment before (from the previous change point, or the start), on the
    /// caller's scale.
    pub mean_before: f64,
    /// The mean of the segment after (up to the next change point, or the end).
    pub mean_after: f64,
    /// The lower bound of the two-sided 95% t interval of `mean_after − mean_before`, with the
    /// test's standard error and degrees of freedom (inflated for serial correlation when asked).
    pub low: f64,
    /// The upper bound of that interval.
    pub high: f64,
}

/// The change points of `values` (in time order), ascending by index, found as the module's
/// documentation says. Empty with fewer than 3 values or when any value is not finite.
pub(crate) fn detect(values: &[f64], options: &Options) -> Vec<ChangePoint> {
    if values.len() < 3 || values.iter().any(|v| !v.is_finite()) {
        return Vec::new();
    }
    let max_p = options.max_p;
    let first_pass = if max_p < 0.05 {
        max_p * 10.0
    } else if max_p < 0.5 {
        max_p * 2.0
    } else {
        max_p
    };
    let weak = split(
        values,
        options.window.max(2),
        first_pass,
        options.serial_correlation,
    );
    merge(values, &weak, options)
}

/// The weak change points: E-Divisive over sliding windows (Otava's `split`), ascending.
fn split(values: &[f64], window: usize, max_p: f64, serial: bool) -> Vec<usize> {
    let step = window / 2;
    let mut found: Vec<usize> = Vec::new();
    let mut start = 0;
    while start < values.len() {
        let end = (start + window).min(values.len());
        let new = divisive(&values[start..end], max_p, serial);
        let last = new.last().map_or(0, |index| index + start);
        for index in new {
            if !found.contains(&(index + start)) {
                found.push(index + start);
            }
        }
        start = last.max(start + step);
    }
    found.sort_unstable();
    found
}

/// E-Divisive on one window: the significant change points, ascending, as window indices.
fn divisive(window: &[f64], max_p: f64, serial: bool) -> Vec<usize> {
    let mut points: Vec<usize> = Vec::new();
    loop {
        let bounds = boundaries(&points, window.len());
        let mut best: Option<(usize, usize, usize, f64)> = None;
        for pair in bounds.windows(2) {
            if pair[1] - pair[0] < 2 {
                continue;
            }
            let (tau, q) = candidate(&window[pair[0]..pair[1]]);
            if best.is_none_or(|(.., best_q)| q > best_q) {
                best = Some((pair[0], tau + pair[0], pair[1], q));
            }
        }
        let Some((low, tau, high, _)) = best else {
            return points;
        };
        let test = t_test(&window[low..tau], &window[tau..high], serial);
        if test.p_value <= max_p {
            points.push(tau);
            points.sort_unstable();
        } else {
            return points;
        }
    }
}

/// 0, the change points, and `len`: the segments' boundaries.
fn boundaries(points: &[usize], len: usize) -> Vec<usize> {
    let mut bounds = Vec::with_capacity(points.len() + 2);
    bounds.push(0);
    bounds.extend_from_slice(points);
    bounds.push(len);
    bounds
}

/// The split `τ` (1 ≤ τ < len) of `segment` (≥ 2 values) that maximises E-Divisive's `Q` over
/// `τ < κ ≤ len`, and that maximum; ties go to the smallest τ, then κ (numpy's `argmax`, as
/// Otava).
fn candidate(segment: &[f64]) -> (usize, f64) {
    let len = segment.len();
    let mut best = (1, f64::NEG_INFINITY);
    // Σ_{i<k<τ} |x_i − x_k|, grown with τ.
    let mut within_x = 0.0;
    for tau in 1..len {
        within_x += segment[..tau - 1]
            .iter()
            .map(|x| (x - segment[tau - 1]).abs())
            .sum::<f64>();
        let n = tau as f64;
        let mut cross = 0.0;
        let mut within_y = 0.0;
        for kappa in tau + 1..=len {
            let y = segment[kappa - 1];
            cross += segment[..tau].iter().map(|x| (x - y).abs()).sum::<f64>();
            within_y += segment[tau..kappa - 1]
                .iter()
                .map(|x| (x - y).abs())
                .sum::<f64>();
            let m = (kappa - tau) as f64;
            let mut q = 2.0 / (m + n) * cross;
            if tau > 1 {
                q -= 2.0 * m / ((m + n) * (n - 1.0)) * within_x;
            }
            if m > 1.0 {
                q -= 2.0 * n / ((m + n) * (m - 1.0)) * within_y;
            }
            if q > best.1 {
                best = (tau, q);
            }
        }
    }
    best
}

/// The merge step: tests each weak change point between its neighbours and removes the weakest
/// until every one is significant and large enough (see the module's documentation).
fn merge(values: &[f64], weak: &[usize], options: &Options) -> Vec<ChangePoint> {
    let serial = options.serial_correlation;
    let mut points: Vec<ChangePoint> = weak
        .iter()
        .enumerate()
        .map(|(k, &index)| {
            let before = if k == 0 { 0 } else { weak[k - 1] };
            let after = weak.get(k + 1).copied().unwrap_or(values.len());
            test_between(values, before, index, after, serial)
        })
        .collect();
    while !points.is_empty() {
        let weakest = first_extreme(&points, |p| p.p_value, |a, b| a > b);
        let remove = if points[weakest].p_value < options.max_p {
            let smallest = first_extreme(&points, magnitude, |a, b| a < b);
            if magnitude(&points[smallest]) > options.min_magnitude {
                break;
            }
            smallest
        } else {
            weakest
        };
        points.remove(remove);
        // Re-test the neighbours of the removed point: the left one's right segment and the
        // right one's left segment now span it.
        for k in [remove.checked_sub(1), Some(remove)].into_iter().flatten() {
            if k < points.len() {
                let before = if k == 0 { 0 } else { points[k - 1].index };
                let after = points.get(k + 1).map_or(values.len(), |p| p.index);
                points[k] = test_between(values, before, points[k].index, after, serial);
            }
        }
    }
    points
}

/// The index of the first point whose `key` is the most extreme by `better` (strictly).
fn first_extreme(
    points: &[ChangePoint],
    key: impl Fn(&ChangePoint) -> f64,
    better: impl Fn(f64, f64) -> bool,
) -> usize {
    let mut best = 0;
    for (k, point) in points.iter().enumerate().skip(1) {
        if better(key(point), key(&points[best])) {
            best = k;
        }
    }
    best
}

fn magnitude(point: &ChangePoint) -> f64 {
    (point.mean_after - point.mean_before).abs()
}

/// The change point at `index` tested between `values[before..index]` and
/// `values[index..after]`.
fn test_between(
    values: &[f64],
    before: usize,
    index: usize,
    after: usize,
    serial: bool,
) -> ChangePoint {
    let test = t_test(&values[before..index], &values[index..after], serial);
    ChangePoint {
        index,
        p_value: test.p_value,
        mean_before: test.mean_before,
        mean_after: test.mean_after,
        low: test.low,
        high: test.high,
    }
}

/// The result of the two-sample t-test.
#[derive(Debug, Clone, Copy)]
struct TTest {
    p_value: f64,
    mean_before: f64,
    mean_after: f64,
    low: f64,
    high: f64,
}

/// Student's pooled two-sample t-test of `before` against `after` (both non-empty), as the
/// module's documentation says; with `serial`, the variance inflated for AR(1) correlation.
/// Zero variance: p = 0 when the means differ, 1 when they do not (scipy gives an infinite t,
/// or NaN, which Otava never keeps); fewer than 3 values in all: p = 1 (Otava's rule).
fn t_test(before: &[f64], after: &[f64], serial: bool) -> TTest {
    let (n1, n2) = (before.len() as f64, after.len() as f64);
    let (mean_before, v1) = mean_and_population_variance(before);
    let (mean_after, v2) = mean_and_population_variance(after);
    let difference = mean_after - mean_before;
    let pooled = ((n1 - 1.0) * v1 + (n2 - 1.0) * v2) / (n1 + n2 - 2.0);
    let rho = if serial {
        pooled_ar1(before, after)
    } else {
        0.0
    };
    let (f1, f2) = (ar1_factor(before.len(), rho), ar1_factor(after.len(), rho));
    let df = (n1 / f1 + n2 / f2 - 2.0).max(1.0);
    let se = (pooled * (f1 / n1 + f2 / n2)).sqrt();
    let result = |p_value, half_width: f64| TTest {
        p_value,
        mean_before,
        mean_after,
        low: difference - half_width,
        high: difference + half_width,
    };
    if before.len() + after.len() <= 2 {
        return result(1.0, f64::INFINITY);
    }
    if se.is_nan() || se <= 0.0 {
        return result(if difference == 0.0 { 1.0 } else { 0.0 }, 0.0);
    }
    let t = StudentsT::new(0.0, 1.0, df).expect("positive degrees of freedom");
    let p_value = (2.0 * t.sf((difference / se).abs())).min(1.0);
    result(p_value, t.inverse_cdf(0.975) * se)
}

fn mean_and_population_variance(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    (mean, variance)
}

/// The pooled lag-1 autocorrelation of two segments, each about its own mean, corrected for its
/// bias and kept in [0, 0.9]: [`super::prediction::pooled_rho`], the stored baseline's estimate
/// (see the module's documentation); 0 when neither segment has 3 values.
fn pooled_ar1(before: &[f64], after: &[f64]) -> f64 {
    super::prediction::pooled_rho(&[before, after].concat(), &[before.len()])
}

/// The variance factor of the mean of `n` values of an AR(1) series with coefficient `rho`:
/// `1 + 2·Σ_{k=1}^{n−1} (1 − k/n)·ρ^k` (1 for ρ = 0), `n` over
/// [`super::prediction::effective_count`].
fn ar1_factor(n: usize, rho: f64) -> f64 {
    if rho == 0.0 || n < 2 {
        return 1.0;
    }
    n as f64 / super::prediction::effective_count(n, rho)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain() -> Options {
        Options {
            serial_correlation: false,
            ..Options::default()
        }
    }

    #[test]
    fn a_clear_step_is_found_where_it_is() {
        let mut rng = fastrand::Rng::with_seed(11);
        let values: Vec<f64> = (0..40)
            .map(|t| if t < 25 { 0.0 } else { 1.0 } + 0.1 * super::super::sims::normal(&mut rng))
            .collect();
        for options in [plain(), Options::default()] {
            let points = detect(&values, &options);
            assert_eq!(points.len(), 1, "{points:?}");
            let point = points[0];
            assert_eq!(point.index, 25);
            assert!(point.p_value < 0.001);
            assert!(point.low < point.mean_after - point.mean_before);
            assert!(point.low > 0.8 && point.high < 1.2, "{point:?}");
        }
    }

    #[test]
    fn short_non_finite_and_constant_series_have_none() {
        assert!(detect(&[1.0, 2.0], &plain()).is_empty());
        assert!(detect(&[1.0, f64::NAN, 1.0, 1.0], &plain()).is_empty());
        assert!(detect(&[3.0; 30], &plain()).is_empty());
    }

    #[test]
    fn two_steps_are_both_found() {
        let mut values = vec![0.0; 20];
        values.extend([1.0; 20]);
        values.extend([0.3; 20]);
        let mut rng = fastrand::Rng::with_seed(5);
        for value in &mut values {
            *value += 0.05 * super::super::sims::normal(&mut rng);
        }
        let indices: Vec<usize> = detect(&values, &plain()).iter().map(|p| p.index).collect();
        assert_eq!(indices, vec![20, 40]);
    }

    #[test]
    fn the_energy_statistic_picks_the_split_of_a_step() {
        let (tau, q) = candidate(&[0.0, 0.0, 0.0, 5.0, 5.0]);
        assert_eq!(tau, 3);
        // X = 0,0,0 and Y = 5,5: Q = 2/5·6·5 = 12.
        assert!((q - 12.0).abs() < 1e-12);
    }

    #[test]
    fn the_t_test_matches_scipy() {
        // scipy's ttest_ind_from_stats(2, np.std([1, 2, 3]), 3, 5, np.std([4, 5, 6, 5]), 4):
        // population variances 2/3 and 1/2 pooled with n − 1 weights over 5 degrees of freedom.
        let test = t_test(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0, 5.0], false);
        let pooled: f64 = (2.0 * (2.0 / 3.0) + 3.0 * 0.5) / 5.0;
        let t = 3.0 / (pooled * (1.0 / 3.0 + 1.0 / 4.0)).sqrt();
        let expected = 2.0 * StudentsT::new(0.0, 1.0, 5.0).unwrap().sf(t);
        assert!((test.p_value - expected).abs() < 1e-12);
        assert!(test.p_value > 0.001 && test.p_value < 0.01, "{test:?}");
    }

    #[test]
    fn the_serial_correction_estimates_rho_and_widens_the_test() {
        let mut rng = fastrand::Rng::with_seed(21);
        let series = super::super::sims::ar1(&mut rng, 4000, 0.4);
        let (before, after) = series.split_at(2000);
        let rho = pooled_ar1(before, after);
        assert!((rho - 0.4).abs() < 0.05, "{rho}");
        // Segments shorter than 3 are left out; a constant one gives 0.
        assert_eq!(pooled_ar1(&[1.0, 2.0], &[3.0, 4.0]), 0.0);
        assert_eq!(pooled_ar1(&[1.0; 5], &[2.0; 5]), 0.0);
        let shifted: Vec<f64> = after[..30].iter().map(|v| v + 0.8).collect();
        let plain = t_test(&before[..30], &shifted, false);
        let serial = t_test(&before[..30], &shifted, true);
        assert!(serial.p_value > plain.p_value, "{serial:?} {plain:?}");
        assert!(serial.high - serial.low > plain.high - plain.low);
    }

    #[test]
    fn a_step_in_a_short_history_is_found_with_the_serial_correction() {
        // 9 nights, then 5 nights 20% slower, ±2% noise (log scale): 14 values are too few to
        // correct the lag-1 estimate for its bias, which would otherwise inflate it enough to
        // hide the step.
        let mut rng = fastrand::Rng::with_seed(14);
        let values: Vec<f64> = (0..14)
            .map(|i| {
                let step = if i >= 9 { 1.2f64.ln() } else { 0.0 };
                step + 0.02 * (rng.f64() * 2.0 - 1.0)
            })
            .collect();
        let found = detect(&values, &Options::default());
        assert_eq!(
            found.iter().map(|c| c.index).collect::<Vec<_>>(),
            vec![9],
            "{found:?}"
        );
    }

    #[test]
    fn the_ar1_factor_is_exact_and_grows_with_rho() {
        assert_eq!(ar1_factor(10, 0.0), 1.0);
        // n = 3, ρ = 0.5: 1 + 2·(2/3·0.5 + 1/3·0.25) = 1.8333…
        assert!((ar1_factor(3, 0.5) - (1.0 + 2.0 * (1.0 / 3.0 + 1.0 / 12.0))).abs() < 1e-12);
        // Large n: (1 + ρ)/(1 − ρ) = 2.333… at ρ = 0.4.
        assert!((ar1_factor(5000, 0.4) - 7.0 / 3.0).abs() < 1e-3);
    }
}
