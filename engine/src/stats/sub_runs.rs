//! Paired sub-runs: the change of a rule in each sub-run of `loadgate ab` (the sides swapped
//! between sub-runs), and the Student t evidence across them.

use super::Evidence;

/// The fewest valid sub-runs for a paired verdict: with fewer, [`across_sub_runs`] gives no
/// evidence and the rule is inconclusive. With 4, the t interval has 3 degrees of freedom and two
/// of each side's positions, so a position offset cancels in the mean (Kalibera & Jones 2013;
/// Bulej et al. 2020).
pub(crate) const MIN_SUB_RUNS: usize = 4;

/// The t evidence of one rule from its per-sub-run changes `x` (one per valid sub-run, on the
/// worse-is-positive scale, e.g. `ln(candidate / baseline)` of the sub-run's p(95)): estimate the
/// mean of x, se = s/√R (s the sample standard deviation), df = R − 1 (the one-sample t test of
/// the sub-run means: Kalibera & Jones 2013, §6; Bulej et al. 2020, §4), with the given
/// `allowance` on the same scale. `None` with fewer than [`MIN_SUB_RUNS`] values or a value that
/// is not finite.
pub(crate) fn across_sub_runs(x: &[f64], allowance: f64) -> Option<Evidence> {
    let r = x.len();
    if r < MIN_SUB_RUNS || x.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let n = r as f64;
    let mean = x.iter().sum::<f64>() / n;
    let variance = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    Some(Evidence {
        estimate: mean,
        se: (variance / n).sqrt(),
        df: Some(n - 1.0),
        allowance,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_standard_error_and_degrees_of_freedom() {
        let e = across_sub_runs(&[0.01, 0.03, 0.02, 0.04], 0.05).expect("four sub-runs");
        assert!((e.estimate - 0.025).abs() < 1e-12);
        // s² = (0.015² + 0.005² + 0.005² + 0.015²)/3 = 0.0005/3.
        assert!((e.se - (0.0005_f64 / 3.0 / 4.0).sqrt()).abs() < 1e-12);
        assert_eq!(e.df, Some(3.0));
        assert_eq!(e.allowance, 0.05);
    }

    #[test]
    fn too_few_or_invalid_sub_runs_give_no_evidence() {
        assert_eq!(across_sub_runs(&[0.0; 3], 0.05), None);
        assert_eq!(across_sub_runs(&[0.0, 0.1, f64::NAN, 0.2], 0.05), None);
    }
}
