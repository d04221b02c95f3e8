//! A slow drift of a series of results: the Theil–Sen slope (Theil 1950; Sen 1968) with the
//! Mann–Kendall trend test (Mann 1945; Kendall 1975), whose variance is corrected for the serial
//! correlation of successive results by Hamed & Rao's (1998) effective sample size, for an AR(1)
//! model of the detrended series. Pure functions on numbers, on the
//! caller's scale (worse-is-positive logs for latencies: a slope of 0.01 is about +1% a result).

use statrs::distribution::{ContinuousCDF, Normal};

use super::robust::lag1_autocorrelation;

/// The fewest values [`drift`] tests: 8. Below it the normal approximation of Mann–Kendall's S
/// and the autocorrelations of Hamed & Rao's correction are too rough (with 8 values the
/// smallest two-sided p-value is still below 0.001).
pub(crate) const MIN_DRIFT_VALUES: usize = 8;

/// A monotonic trend of a series of results in time order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Drift {
    /// The Theil–Sen slope (Sen 1968): the median of the pairwise slopes
    /// `(x_j − x_i)/(j − i)`, i < j, per result on the caller's scale.
    pub slope: f64,
    /// The lower bound of Sen's (1968) distribution-free 95% interval of the slope: the order
    /// statistics of the pairwise slopes at `(N ∓ z₀.₉₇₅·√Var*(S))/2`, N the number of pairwise
    /// slopes, with the serially corrected variance of `p_value`.
    pub low: f64,
    /// The upper bound of that interval.
    pub high: f64,
    /// The two-sided p-value of Mann–Kendall's test of "no monotonic trend":
    /// `Z = (S − sign S)/√Var*(S)`, `Var*(S) = Var(S)·n/n*` with Hamed & Rao's (1998, eq. 18)
    /// effective-sample-size factor for an AR(1) model of the detrended series (its lag-1
    /// autocorrelation, bias-corrected; the factor is kept ≥ 1: negative correlation never
    /// narrows the test).
    pub p_value: f64,
    /// How many results the drift was estimated from.
    pub results: usize,
}

/// The drift of `values` (in time order, equally spaced: one result each), or `None` with fewer
/// than [`MIN_DRIFT_VALUES`] values or any that is not finite.
pub(crate) fn drift(values: &[f64]) -> Option<Drift> {
    let n = values.len();
    if n < MIN_DRIFT_VALUES || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut slopes = Vec::with_capacity(n * (n - 1) / 2);
    let mut s = 0.0;
    for i in 0..n {
        for j in i + 1..n {
            let difference = values[j] - values[i];
            slopes.push(difference / (j - i) as f64);
            s += sign(difference);
        }
    }
    slopes.sort_by(f64::total_cmp);
    let slope = median_of_sorted(&slopes);
    let variance = mann_kendall_variance(values) * hamed_rao_factor(values, slope);
    let normal = Normal::standard();
    let p_value = if variance > 0.0 {
        let z = (s - sign(s)) / variance.sqrt();
        (2.0 * normal.sf(z.abs())).min(1.0)
    } else {
        1.0
    };
    // Sen (1968): the interval's ends are the slopes of ranks (N − C)/2 and (N + C)/2 + 1
    // (1-based), C = z₀.₉₇₅·√Var(S).
    let count = slopes.len() as f64;
    let c = normal.inverse_cdf(0.975) * variance.sqrt();
    let rank = |r: f64| slopes[(r.round().clamp(1.0, count) as usize) - 1];
    Some(Drift {
        slope,
        low: rank((count - c) / 2.0),
        high: rank((count + c) / 2.0 + 1.0),
        p_value,
        results: n,
    })
}

fn sign(value: f64) -> f64 {
    if value > 0.0 {
        1.0
    } else if value < 0.0 {
        -1.0
    } else {
        0.0
    }
}

fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// The variance of Mann–Kendall's S under independence, with Kendall's (1975) correction for
/// tied values: `[n(n−1)(2n+5) − Σ t(t−1)(2t+5)]/18`, t the size of each group of ties.
fn mann_kendall_variance(values: &[f64]) -> f64 {
    let n = values.len() as f64;
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let ties: f64 = sorted
        .chunk_by(|a, b| a == b)
        .map(|group| {
            let t = group.len() as f64;
            t * (t - 1.0) * (2.0 * t + 5.0)
        })
        .sum();
    (n * (n - 1.0) * (2.0 * n + 5.0) - ties) / 18.0
}

/// Hamed & Rao's (1998, eq. 18) correction `n/n*` of Var(S) for serial correlation,
/// `1 + 2/(n(n−1)(n−2)) · Σ_{k=1}^{n−1} (n−k)(n−k−1)(n−k−2)·ρˢ_k`, with the rank
/// autocorrelations ρˢ_k of an AR(1) model: `ρˢ_k = (6/π)·asin(ρ^k/2)` (Hamed & Rao's relation
/// `ρ = 2·sin(π·ρˢ/6)` for normal data, inverted) and ρ the lag-1 autocorrelation r of the
/// detrended series `x_t − slope·t`, corrected for its bias as `(r + 2/n)/(1 − 4/n)` and kept in
/// [0, 0.9]. The bias of a lag-1 estimate about a fitted mean is about `−(1 + 4ρ)/n` (Kendall
/// 1954); about a fitted line it is about `−(2 + 4ρ)/n` (checked by simulation: −0.185 for
/// independent series of 10 values, −0.063 of 30). The original screens the lags, keeping those
/// with `|ρ_k| > 1.96/√n`; with 8 to 30 results that lets almost all correlation through
/// uncorrected (flat AR(1) series with ρ = 0.4 were reported 13.5% of the time at 5%), so the
/// AR(1) model takes the lag-1 estimate for every lag instead. At least 1.
fn hamed_rao_factor(values: &[f64], slope: f64) -> f64 {
    let n = values.len();
    let detrended: Vec<f64> = values
        .iter()
        .enumerate()
        .map(|(t, v)| v - slope * t as f64)
        .collect();
    let Some(r) = lag1_autocorrelation(&detrended) else {
        return 1.0;
    };
    let nf = n as f64;
    let rho = ((r + 2.0 / nf) / (1.0 - 4.0 / nf)).clamp(0.0, 0.9);
    let mut power = 1.0;
    let sum: f64 = (1..n)
        .map(|k| {
            power *= rho;
            let m = (n - k) as f64;
            m * (m - 1.0) * (m - 2.0) * (6.0 / std::f64::consts::PI) * (power / 2.0).asin()
        })
        .sum();
    (1.0 + 2.0 / (nf * (nf - 1.0) * (nf - 2.0)) * sum).max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_few_or_non_finite_values_give_none() {
        assert_eq!(drift(&[1.0; 7]), None);
        let mut values = vec![1.0; 10];
        values[3] = f64::NAN;
        assert_eq!(drift(&values), None);
    }

    #[test]
    fn a_straight_line_has_its_slope_and_mann_kendalls_p_value() {
        // Exact binary fractions: every pairwise slope is 0.25 and the detrended series is
        // constant (no correlation to correct for).
        let values: Vec<f64> = (0..10).map(|t| 0.5 + 0.25 * f64::from(t)).collect();
        let drift = drift(&values).unwrap();
        assert_eq!((drift.slope, drift.low, drift.high), (0.25, 0.25, 0.25));
        // S = 45, Var(S) = 10·9·25/18 = 125: Z = 44/√125.
        let expected = 2.0 * Normal::standard().sf(44.0 / 125.0_f64.sqrt());
        assert!((drift.p_value - expected).abs() < 1e-12, "{drift:?}");
        assert_eq!(drift.results, 10);
    }

    #[test]
    fn correlated_residuals_widen_the_test_and_alternating_ones_do_not() {
        let n = 20;
        // A slow wave about a line: neighbours alike.
        let wave: Vec<f64> = (0..n)
            .map(|t| 0.01 * t as f64 + 0.05 * (t as f64 / 3.0).sin())
            .collect();
        assert!(hamed_rao_factor(&wave, 0.01) > 2.0);
        let alternating: Vec<f64> = (0..n)
            .map(|t| 0.01 * t as f64 + if t % 2 == 0 { 0.05 } else { -0.05 })
            .collect();
        assert_eq!(hamed_rao_factor(&alternating, 0.01), 1.0);
        assert!(drift(&wave).unwrap().p_value > drift(&alternating).unwrap().p_value);
    }

    #[test]
    fn a_flat_constant_series_has_no_drift() {
        let drift = drift(&[2.0; 12]).unwrap();
        assert_eq!(drift.slope, 0.0);
        assert_eq!(drift.p_value, 1.0);
    }
}
