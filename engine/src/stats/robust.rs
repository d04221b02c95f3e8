//! Robust location, scale and dependence of a series of results (one metric over runs, on the
//! metric's scale): the median, the MAD and Rousseeuw & Croux's Qn, and the lag-1
//! autocorrelation of successive results. Pure functions on numbers; non-finite values are the
//! caller's to remove.

/// The median of `values` (the mean of the two middle values for an even count); `None` when
/// empty.
pub(crate) fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    Some(if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    })
}

/// The normal-consistency factor of the MAD, `1 / Φ⁻¹(3/4)` (Hampel 1974; Rousseeuw & Croux
/// 1993, eq. 2.1).
const MAD_CONSISTENCY: f64 = 1.4826;

/// The median absolute deviation scaled to estimate a normal standard deviation:
/// `1.4826 · median|x − median(x)|` (Hampel 1974), on the values' scale; `None` with fewer than
/// two values.
pub(crate) fn mad(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let center = median(values)?;
    let deviations: Vec<f64> = values.iter().map(|v| (v - center).abs()).collect();
    Some(MAD_CONSISTENCY * median(&deviations)?)
}

/// The normal-consistency constant of Qn, `1 / (√2 · Φ⁻¹(5/8))` (Rousseeuw & Croux 1993, eq. 3.6).
const QN_CONSISTENCY: f64 = 2.21914;

/// Rousseeuw & Croux's (1993) Qn scale estimator, on the values' scale: `d · c_n` times the
/// `k`-th smallest of the `n(n−1)/2` pairwise distances `|x_i − x_j|` (i < j), `k = C(h, 2)`,
/// `h = ⌊n/2⌋ + 1`; `d = 2.21914` makes it consistent for a normal standard deviation and `c_n`
/// is the paper's small-sample correction (Croux & Rousseeuw 1992: tabled for n ≤ 9,
/// `n/(n + 1.4)` for odd and `n/(n + 3.8)` for even n above). Its breakdown point is 50% and its
/// Gaussian efficiency 82%, against the MAD's 37% (the paper's section 3). `None` with fewer than
/// two values. O(n²) time and memory: meant for series of results (tens to hundreds).
pub(crate) fn qn(values: &[f64]) -> Option<f64> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let mut distances: Vec<f64> = Vec::with_capacity(n * (n - 1) / 2);
    for (i, a) in values.iter().enumerate() {
        distances.extend(values[i + 1..].iter().map(|b| (a - b).abs()));
    }
    let h = n / 2 + 1;
    let k = h * (h - 1) / 2;
    let (_, kth, _) = distances.select_nth_unstable_by(k - 1, f64::total_cmp);
    Some(QN_CONSISTENCY * qn_small_sample(n) * *kth)
}

/// Qn's small-sample factor `c_n` (Croux & Rousseeuw 1992, as used by Rousseeuw & Croux 1993).
fn qn_small_sample(n: usize) -> f64 {
    match n {
        2 => 0.399,
        3 => 0.994,
        4 => 0.512,
        5 => 0.844,
        6 => 0.611,
        7 => 0.857,
        8 => 0.669,
        9 => 0.872,
        _ if n % 2 == 1 => n as f64 / (n as f64 + 1.4),
        _ => n as f64 / (n as f64 + 3.8),
    }
}

/// The lag-1 autocorrelation of `values` in time order,
/// `r₁ = Σ (x_t − x̄)(x_{t+1} − x̄) / Σ (x_t − x̄)²` (Box & Jenkins 1976, eq. 2.1.12): the
/// coefficient of an AR(1) model fitted by moments. It is biased towards 0 (about
/// `−(1 + 4ρ)/n`, Kendall 1954); callers that need less bias correct it. `None` with fewer than
/// three values or zero variance.
pub(crate) fn lag1_autocorrelation(values: &[f64]) -> Option<f64> {
    if values.len() < 3 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    let variance: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
    if variance <= 0.0 || !variance.is_finite() {
        return None;
    }
    let covariance: f64 = values
        .windows(2)
        .map(|pair| (pair[0] - mean) * (pair[1] - mean))
        .sum();
    Some(covariance / variance)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3.0]), Some(3.0));
        assert_eq!(median(&[5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }

    #[test]
    fn mad_is_scaled_and_ignores_an_outlier() {
        assert_eq!(mad(&[1.0]), None);
        // |x − 3| = 2, 1, 0, 1, 1000: median 1.
        let value = mad(&[1.0, 2.0, 3.0, 4.0, 1003.0]).unwrap();
        assert!((value - 1.4826).abs() < 1e-12, "{value}");
    }

    #[test]
    fn qn_matches_the_definition_on_small_samples() {
        assert_eq!(qn(&[1.0]), None);
        // n = 2: one distance, k = C(2, 2) = 1.
        let two = qn(&[1.0, 3.0]).unwrap();
        assert!((two - 2.21914 * 0.399 * 2.0).abs() < 1e-12, "{two}");
        // n = 5: h = 3, k = 3; distances of 1, 2, 4, 8, 16 sorted: 1, 2, 3, 4, 6, 7, 8, 12, 14, 15.
        let five = qn(&[1.0, 2.0, 4.0, 8.0, 16.0]).unwrap();
        assert!((five - 2.21914 * 0.844 * 3.0).abs() < 1e-12, "{five}");
        // n = 10 (even, above 9): h = 6, k = 15; values 0..9: distance d occurs 10 − d times, so
        // the 15th smallest is 2 (9 ones, 8 twos).
        let values: Vec<f64> = (0..10).map(f64::from).collect();
        let ten = qn(&values).unwrap();
        assert!((ten - 2.21914 * (10.0 / 13.8) * 2.0).abs() < 1e-12, "{ten}");
    }

    #[test]
    fn qn_estimates_a_normal_standard_deviation_robustly() {
        let mut rng = fastrand::Rng::with_seed(7);
        let mut values: Vec<f64> = (0..400)
            .map(|_| 2.0 * super::super::sims::normal(&mut rng))
            .collect();
        let clean = qn(&values).unwrap();
        assert!((clean - 2.0).abs() < 0.2, "{clean}");
        // A quarter of the values replaced by huge outliers moves it by little.
        for value in values.iter_mut().take(100) {
            *value = 1e6;
        }
        let dirty = mad(&values).unwrap().min(qn(&values).unwrap());
        assert!(dirty < 4.0, "{dirty}");
    }

    #[test]
    fn lag1_autocorrelation_of_known_series() {
        assert_eq!(lag1_autocorrelation(&[1.0, 2.0]), None);
        assert_eq!(lag1_autocorrelation(&[2.0, 2.0, 2.0]), None);
        // Alternating: mean 0, covariance −(n − 1), variance n.
        let alternating = [1.0, -1.0, 1.0, -1.0];
        assert!((lag1_autocorrelation(&alternating).unwrap() + 0.75).abs() < 1e-12);
        let mut rng = fastrand::Rng::with_seed(3);
        let series = super::super::sims::ar1(&mut rng, 5000, 0.4);
        let r = lag1_autocorrelation(&series).unwrap();
        assert!((r - 0.4).abs() < 0.05, "{r}");
    }
}
