//! The prediction bound of a stored baseline: how far a new run's value may lie from the level
//! of earlier runs of the same regime (the results since the last change point) before it is
//! worse than they predict.
//!
//! # Model
//!
//! The values `y_1 … y_k` of the segment (one per earlier run, on a worse-is-positive scale:
//! the log of a latency) are a stationary AR(1) series around a level `μ`: marginal standard
//! deviation `σ`, lag-`h` correlation `ρ^h` (successive runs share a machine's state: the review
//! measured `ρ` 0.3–0.5). A new run `y_c` of the same build is drawn from the same distribution,
//! independent of the segment (correlation with it would only narrow the difference, so taking
//! it as independent is conservative).
//!
//! - **Level**: `μ̂ = median(y)`, robust to a disturbed run.
//! - **Effective number of runs** (Bayley & Hammersley, "The effective number of independent
//!   observations in an autocorrelated time series", JRSS Suppl. 8(2), 1946; Box, Jenkins &
//!   Reinsel, *Time Series Analysis*, 4th ed., Wiley 2008, ch. 2): the mean of `k` AR(1) values
//!   has variance `σ²/k_eff` with
//!   `k_eff = k / (1 + 2·Σ_{h=1}^{k−1} (1 − h/k)·ρ^h)`.
//!   The median of normal values has `π/2` times the mean's variance (its asymptotic efficiency
//!   `2/π`; Cramér, *Mathematical Methods of Statistics*, 1946, §28.5), so
//!   `Var(μ̂) ≈ (π/2)·σ²/k_eff`.
//! - **Spread**: `ŝ = Qn(y)` (Rousseeuw & Croux, "Alternatives to the median absolute
//!   deviation", JASA 88, 1993; `MAD` when Qn is not defined), robust to a disturbed run. Values
//!   that move together lie closer to their own centre than independent ones: the deviations'
//!   expected sum of squares is `σ²·(k − k/k_eff)`, not `σ²·(k − 1)`, so
//!   `σ̂ = ŝ·√((k − 1)/(k − k/k_eff))`.
//! - **Prediction variance**: `Var(y_c − μ̂) = σ² + Var(μ̂)`, so the standard error of the change
//!   `y_c − μ̂` is `se = σ̂·√(1 + π/(2·k_eff))`, the Hahn & Meeker prediction bound's
//!   `s·√(1 + 1/k)` (*Statistical Intervals*, Wiley 1991, ch. 4) for correlated values and a
//!   median level; its reference distribution is Student's t with `k_eff − 1` degrees of freedom
//!   (at least 1), as `σ̂` comes from `k_eff` independent runs' worth of data.
//! - **ρ** is estimated from the whole series, not from the segment alone (five values cannot
//!   tell a correlation): the lag-1 correlation of the values' deviations from their segment's
//!   mean, pooled over the segments (pairs within a segment only), corrected for its bias with
//!   the segments' means estimated, `E[r] ≈ ρ − (1 + 4ρ)/n` per segment of `n` (Marriott &
//!   Pope, "Bias in the estimation of autocorrelations", Biometrika 41, 1954), kept within
//!   `[0, MAX_RHO]`; with fewer than 8 values a segment (a young history) [`PRIOR_RHO`], the
//!   review's measured correlation, is taken instead.
//!
//! The regression test is then `(y_c − μ̂) − a > t_{k_eff−1}(1 − α_r)·se` (`a` the rule's
//! allowance), which `stats::decide` runs for every rule of the family (Holm's step-down).
//! `sims_history.rs` simulates its false alarms and power.

/// Fewest results in the segment that give a level and a spread: fewer leave the rule
/// inconclusive (the review's §5: don't gate with fewer than 5 results).
pub(crate) const MIN_SEGMENT: usize = 5;

/// The largest lag-1 correlation used: beyond it a few runs say nothing of the level.
pub(crate) const MAX_RHO: f64 = 0.9;

/// The lag-1 correlation taken where the series is too short to estimate it (fewer than 8
/// values a segment): the middle of the 0.31–0.51 that the statistical review of 2026-11-27
/// (§5) measured between successive CI runs.
pub(crate) const PRIOR_RHO: f64 = 0.4;

/// What the segment predicts of a new run's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Prediction {
    /// The level `μ̂`: the segment's median, on the caller's scale.
    pub level: f64,
    /// The robust spread of the segment's values before the correlation correction (Qn, else
    /// MAD), on the caller's scale.
    pub spread: f64,
    /// The lag-1 correlation used (≥ 0).
    pub rho: f64,
    /// Values in the segment, `k`.
    pub k: usize,
    /// The effective number of independent values, `k_eff ≤ k`.
    pub k_eff: f64,
    /// The standard error of `y_c − level`: `σ̂·√(1 + π/(2·k_eff))`.
    pub se: f64,
    /// Degrees of freedom of the Student t reference distribution, `max(k_eff − 1, 1)`.
    pub df: f64,
}

/// The prediction from `values` (in time order, on the caller's scale) whose segments start at
/// `starts` (the indices of change points, ascending; the last segment runs from the last of
/// them to the end). Errors: the last segment's length `k` when it is below [`MIN_SEGMENT`].
pub(crate) fn predict(values: &[f64], starts: &[usize]) -> Result<Prediction, usize> {
    let start = starts.last().copied().unwrap_or(0).min(values.len());
    let segment = &values[start..];
    let k = segment.len();
    if k < MIN_SEGMENT {
        return Err(k);
    }
    let level = super::robust::median(segment).ok_or(k)?;
    let spread = super::robust::qn(segment)
        .filter(|s| s.is_finite() && *s > 0.0)
        .or_else(|| super::robust::mad(segment))
        .unwrap_or(0.0);
    let rho = pooled_rho(values, starts);
    let k_eff = effective_count(k, rho);
    let kf = k as f64;
    let sigma = spread * ((kf - 1.0) / (kf - kf / k_eff)).sqrt();
    let se = sigma * (1.0 + std::f64::consts::FRAC_PI_2 / k_eff).sqrt();
    Ok(Prediction {
        level,
        spread,
        rho,
        k,
        k_eff,
        se,
        df: (k_eff - 1.0).max(1.0),
    })
}

/// `k_eff = k / (1 + 2·Σ_{h=1}^{k−1} (1 − h/k)·ρ^h)` (Bayley & Hammersley 1946).
pub(crate) fn effective_count(k: usize, rho: f64) -> f64 {
    let kf = k as f64;
    let sum: f64 = (1..k)
        .map(|h| (1.0 - h as f64 / kf) * rho.powi(h as i32))
        .sum();
    kf / (1.0 + 2.0 * sum)
}

/// The lag-1 correlation of `values` within their segments (starting at `starts`), pooled over
/// the segments of 3 or more values and corrected for the bias of estimated means (Marriott &
/// Pope 1954), kept within `[0, MAX_RHO]`; [`PRIOR_RHO`] with fewer than 8 values a segment;
/// 0 when no segment has 3 values or the values do not vary.
pub(crate) fn pooled_rho(values: &[f64], starts: &[usize]) -> f64 {
    let mut bounds: Vec<usize> = std::iter::once(0)
        .chain(
            starts
                .iter()
                .copied()
                .filter(|s| *s > 0 && *s < values.len()),
        )
        .collect();
    bounds.push(values.len());
    let (mut products, mut squares, mut n, mut segments) = (0.0, 0.0, 0usize, 0usize);
    for pair in bounds.windows(2) {
        let segment = &values[pair[0]..pair[1]];
        if segment.len() < 3 {
            continue;
        }
        let mean = segment.iter().sum::<f64>() / segment.len() as f64;
        let deviations: Vec<f64> = segment.iter().map(|v| v - mean).collect();
        squares += deviations.iter().map(|d| d * d).sum::<f64>();
        products += deviations.windows(2).map(|d| d[0] * d[1]).sum::<f64>();
        n += segment.len();
        segments += 1;
    }
    if segments == 0 || squares <= 0.0 {
        return 0.0;
    }
    let r = products / squares;
    // E[r] ≈ ρ − (1 + 4ρ)·s/n over s segments of n values in all: solve for ρ where the
    // correction is small enough to trust (n ≥ 8s). Below that r says next to nothing (its
    // standard error is about 1/√n: ±0.45 at 5 values, and a chance 0.8 would leave one degree
    // of freedom and a blind bound), so the correlation the review measured is taken instead.
    let share = segments as f64 / n as f64;
    if share > 0.125 {
        return PRIOR_RHO;
    }
    ((r + share) / (1.0 - 4.0 * share)).clamp(0.0, MAX_RHO)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn independent_values_count_fully_and_correlated_ones_less() {
        assert!((effective_count(10, 0.0) - 10.0).abs() < 1e-12);
        // k = 3, ρ = 0.5: 1 + 2·((2/3)·0.5 + (1/3)·0.25) = 1.8333: k_eff = 1.6364.
        assert!(
            (effective_count(3, 0.5) - 3.0 / (1.0 + 2.0 * (1.0 / 3.0 + 0.25 / 3.0))).abs() < 1e-12
        );
        // Large k: k_eff → k·(1 − ρ)/(1 + ρ).
        let k_eff = effective_count(10_000, 0.4);
        assert!((k_eff / 10_000.0 - 0.6 / 1.4).abs() < 1e-3, "{k_eff}");
    }

    #[test]
    fn too_short_a_segment_gives_its_length() {
        let values = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
        assert_eq!(predict(&values, &[4]), Err(4));
        assert_eq!(predict(&values[..4], &[]), Err(4));
        let p = predict(&values, &[3]).unwrap();
        assert_eq!(p.k, 5);
        assert_eq!(p.level, 6.0);
    }

    #[test]
    fn the_standard_error_is_the_prediction_bound_of_the_corrected_spread() {
        // Alternating values: negative lag-1 correlation, used as 0.
        let values = [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0];
        let p = predict(&values, &[]).unwrap();
        assert_eq!(p.rho, 0.0);
        assert!((p.k_eff - 10.0).abs() < 1e-12);
        let sigma = p.spread * (9.0f64 / 9.0).sqrt();
        let want = sigma * (1.0 + std::f64::consts::FRAC_PI_2 / 10.0).sqrt();
        assert!((p.se - want).abs() < 1e-12, "{p:?}");
        assert_eq!(p.df, 9.0);
    }

    #[test]
    fn a_trending_series_reads_as_correlated() {
        let values: Vec<f64> = (0..40).map(|i| (i as f64 * 0.3).sin()).collect();
        let rho = pooled_rho(&values, &[]);
        assert!(rho > 0.8, "{rho}");
        let p = predict(&values, &[]).unwrap();
        assert!(p.k_eff < 10.0 && p.df < 9.0, "{p:?}");
    }
}
