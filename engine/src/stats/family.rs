//! One per-run false-alarm rate for a family of rules: Holm's step-down over one-sided p-values,
//! and the max-T step-down on bootstrap replicates. Both control the family-wise error rate
//! (the probability of at least one false "regressed") at α in the strong sense: whichever rules
//! are truly within their allowance.

use statrs::distribution::{ContinuousCDF, Normal};

use super::{Decision, Evidence, Replicates, cdf, decision, quantile};

/// Holm's step-down (Holm 1979) over the one-sided margin p-values
/// `p_r = 1 − F((d̂_r − a_r)/se_r)`, F the Student t with the test's `df` (or the normal): the
/// tests sorted by p, step `j` (0-based) rejects the next test iff its lower bound at level
/// `α/(m − j)` exceeds its allowance (that is, `p < α/(m − j)`); the first test not rejected stops
/// the step-down, and it and every later test get the level of that step, so that no bound shown
/// contradicts the decision. A test with `se == 0` has the bounds `[d̂, d̂]`.
pub(super) fn holm(alpha: f64, tests: &[Evidence]) -> Vec<Decision> {
    let m = tests.len();
    let p_value = |t: &Evidence| {
        if t.se > 0.0 {
            1.0 - cdf(t.df, (t.estimate - t.allowance) / t.se)
        } else if t.estimate > t.allowance {
            0.0
        } else {
            1.0
        }
    };
    let mut order: Vec<usize> = (0..m).collect();
    let p: Vec<f64> = tests.iter().map(p_value).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let mut out = vec![None; m];
    let mut stopped_at = None;
    for (step, &i) in order.iter().enumerate() {
        let level = stopped_at.unwrap_or(alpha / (m - step) as f64);
        let test = &tests[i];
        let critical = quantile(test.df, 1.0 - level);
        let half = critical * test.se;
        let decided = decision(
            test,
            level,
            test.estimate - half,
            test.estimate + half,
            critical,
        );
        if !decided.regressed {
            stopped_at.get_or_insert(level);
        }
        out[i] = Some(decided);
    }
    out.into_iter()
        .map(|d| d.expect("every test decided"))
        .collect()
}

/// The max-T step-down (Westfall & Young 1993, algorithm 2.8; Romano & Wolf 2005, algorithm 3.1)
/// on studentized bootstrap replicates `T*_r = (d*_r − d̂_r)/se_r`: at each step, `c` is the
/// `(1 − α)` quantile (the `⌈(1 − α)·B⌉`-th smallest of B) of `max_r T*_r` over the tests not
/// yet rejected; a test is rejected iff `(d̂_r − a_r)/se_r > e_r(c)`, that is iff its lower bound
/// `d̂_r − e_r(c)·se_r` exceeds its allowance (`e_r`: [`expanded`] for the test's `df`; the
/// identity without); the step-down repeats on the rest until a step rejects nothing, whose `c` the
/// remaining tests keep. A test's `level` is the share of its own `T*_r`
/// above its step's `c`; its upper bound is the basic bootstrap bound at that level,
/// `d̂_r − e_r(Q_r(level))·se_r` (Q_r: the quantile of its `T*_r`; Davison & Hinkley 1997, §5.2),
/// so that a skewed statistic gets an asymmetric interval. Tests with `se_r == 0` (or no
/// replicates) are decided from the estimate alone, outside the maximum.
pub(super) fn max_t(alpha: f64, tests: &[Evidence], replicates: &Replicates) -> Vec<Decision> {
    let b = replicates.rows.len();
    let testable: Vec<bool> = tests
        .iter()
        .map(|t| t.se > 0.0 && t.se.is_finite() && b > 0)
        .collect();
    // Studentized replicates, one column per test (testable columns only are read).
    let columns: Vec<Vec<f64>> = (0..tests.len())
        .map(|r| {
            if !testable[r] {
                return Vec::new();
            }
            let t = &tests[r];
            replicates
                .rows
                .iter()
                .map(|row| (row[r] - t.estimate) / t.se)
                .collect()
        })
        .collect();
    let mut critical = vec![None; tests.len()];
    let mut active: Vec<usize> = (0..tests.len()).filter(|&r| testable[r]).collect();
    while !active.is_empty() {
        let mut maxima: Vec<f64> = (0..b)
            .map(|row| {
                active
                    .iter()
                    .map(|&r| columns[r][row])
                    .fold(f64::NEG_INFINITY, f64::max)
            })
            .collect();
        let c = upper_quantile(&mut maxima, alpha);
        let (rejected, kept): (Vec<usize>, Vec<usize>) = active.iter().partition(|&&r| {
            let t = &tests[r];
            t.estimate - expanded(c, t.df, alpha) * t.se > t.allowance
        });
        for &r in &rejected {
            critical[r] = Some(c);
        }
        if rejected.is_empty() {
            for &r in &kept {
                critical[r] = Some(c);
            }
            break;
        }
        active = kept;
    }
    tests
        .iter()
        .enumerate()
        .map(|(r, test)| match critical[r] {
            Some(c) => bootstrap_decision(test, &columns[r], c, |x| expanded(x, test.df, alpha)),
            None => decision(test, alpha, test.estimate, test.estimate, 0.0),
        })
        .collect()
}

/// The decision of a bootstrap test whose step's critical value is `c`, from its studentized
/// replicates `t_star`: the level is the share of them above `c` (at least one replicate's
/// worth, 1/B), the upper bound the basic bootstrap bound at that level.
fn bootstrap_decision(
    test: &Evidence,
    t_star: &[f64],
    c: f64,
    expand: impl Fn(f64) -> f64,
) -> Decision {
    let b = t_star.len();
    let above = t_star.iter().filter(|&&t| t > c).count();
    let level = above.max(1) as f64 / b as f64;
    let mut sorted = t_star.to_vec();
    sorted.sort_by(f64::total_cmp);
    let k = ((level * (b + 1) as f64).floor() as usize).clamp(1, b);
    let lower_tail = expand(sorted[k - 1].min(0.0));
    let c = expand(c);
    let low = test.estimate - c * test.se;
    let high = (test.estimate - lower_tail * test.se).max(low);
    decision(test, level, low, high, c)
}

/// A studentized bootstrap quantile `x` widened for a resample of few independent units, the
/// blocks (`df`: their number less one, [`bootstrap_df`](super::bootstrap_df)); `x` itself when
/// `df` is `None`. The larger in magnitude of:
/// - Hesterberg's expansion at the family's level α (Hesterberg 2015, §5.1, "expanded
///   percentile interval"): `x · √((df + 1)/df) · t_df(1 − α) / z(1 − α)`, for the bootstrap's
///   narrowness with few blocks at the levels of one rule;
/// - the Student t tail: `x`'s normal probability as a t quantile, `√((ν + 1)/ν) · t_ν⁻¹(Φ(x))`,
///   with ν = 1.5·(df + 1) − 1 the equivalent degrees of freedom of the overlapping-block
///   (Bartlett-window) variance estimate (Künsch 1989; Priestley 1981, §6.2.3), for the extreme
///   quantiles of a large family's maximum, which the few blocks' bootstrap makes too light.
///
/// Both tend to `x` as the blocks grow in number. `sims.rs` and `sims_family.rs` simulate the
/// result: each alone fails one of them (one rule's bound, or the 33-rule family).
fn expanded(x: f64, df: Option<f64>, alpha: f64) -> f64 {
    let Some(df) = df.filter(|df| df.is_finite() && *df > 0.0) else {
        return x;
    };
    let linear = x * ((df + 1.0) / df).sqrt() * quantile(Some(df), 1.0 - alpha)
        / quantile(None, 1.0 - alpha);
    let nu = 1.5 * (df + 1.0) - 1.0;
    let p = Normal::standard().cdf(x).clamp(1e-12, 1.0 - 1e-12);
    let tail = ((nu + 1.0) / nu).sqrt() * quantile(Some(nu), p);
    if x >= 0.0 {
        linear.max(tail)
    } else {
        linear.min(tail)
    }
}

/// The `(1 − alpha)` quantile of `values`: the `⌈(1 − alpha)·B⌉`-th smallest of the B values
/// (clamped to `[1, B]`), so that at most `alpha·B` of them lie above it. `values` is reordered.
fn upper_quantile(values: &mut [f64], alpha: f64) -> f64 {
    let b = values.len();
    let k = (((1.0 - alpha) * b as f64).ceil() as usize).clamp(1, b);
    let (_, kth, _) = values.select_nth_unstable_by(k - 1, f64::total_cmp);
    *kth
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evidence(estimate: f64, se: f64) -> Evidence {
        Evidence {
            estimate,
            se,
            df: Some(5.0),
            allowance: 0.05,
        }
    }

    #[test]
    fn holm_rejects_step_by_step_and_gives_the_rest_the_stopping_level() {
        // p-values: clear regression, borderline, nothing.
        let tests = [
            evidence(0.5, 0.05),
            evidence(0.15, 0.03),
            evidence(0.0, 0.05),
        ];
        let d = holm(0.05, &tests);
        assert!(d[0].regressed);
        assert!((d[0].level - 0.05 / 3.0).abs() < 1e-12);
        // Step 1: level 0.025, t = (0.15 - 0.05)/0.03 = 3.33 > t(5, 0.975) = 2.57: rejected.
        assert!(d[1].regressed);
        assert!((d[1].level - 0.025).abs() < 1e-12);
        assert!(!d[2].regressed);
        assert!((d[2].level - 0.05).abs() < 1e-12);
        assert!(d[2].low < 0.05 && d[2].high > 0.05 && !d[2].unchanged);
    }

    #[test]
    fn holm_stops_at_the_first_failure_and_later_tests_share_its_level() {
        let tests = [
            evidence(0.07, 0.01),
            evidence(0.2, 0.01),
            evidence(0.06, 0.01),
        ];
        let d = holm(0.05, &tests);
        assert!(d[1].regressed);
        // Next: 0.07 at level 0.025: t = 2 < 2.57: stops; 0.06 gets 0.025 too.
        assert!(!d[0].regressed && !d[2].regressed);
        assert_eq!(d[0].level, 0.025);
        assert_eq!(d[2].level, 0.025);
        for x in &d {
            assert_eq!(x.regressed, x.low > 0.05);
        }
    }

    #[test]
    fn unchanged_needs_the_upper_bound_within_the_allowance() {
        let d = holm(
            0.05,
            &[
                evidence(0.0, 0.01),
                evidence(-0.2, 0.01),
                evidence(0.0, 0.03),
            ],
        );
        assert!(d[0].unchanged && !d[0].improved);
        assert!(d[1].improved && !d[1].unchanged);
        assert!(!d[2].unchanged && !d[2].regressed && !d[2].improved);
    }

    #[test]
    fn mde_is_the_allowance_plus_both_quantiles_times_se() {
        let d = holm(0.05, &[evidence(0.0, 0.01)]);
        let q = |p| quantile(Some(5.0), p);
        let want = 0.05 + (q(0.95) + q(0.8)) * 0.01;
        assert!((d[0].mde - want).abs() < 1e-12);
    }

    #[test]
    fn max_t_with_normal_replicates_matches_the_normal_test() {
        let mut rng = fastrand::Rng::with_seed(7);
        let rows: Vec<Vec<f64>> = (0..4000)
            .map(|_| vec![0.09 + super::super::sims::normal(&mut rng) * 0.02])
            .collect();
        let replicates = Replicates { rows };
        let test = Evidence {
            estimate: 0.09,
            se: replicates.se(0),
            df: None,
            allowance: 0.05,
        };
        let d = max_t(0.05, &[test], &replicates);
        // c ≈ 1.645: low ≈ 0.09 − 0.033 = 0.057 > 0.05.
        assert!(d[0].regressed, "{:?}", d[0]);
        assert!((d[0].level - 0.05).abs() < 0.01, "{:?}", d[0]);
        assert!(
            (d[0].high - (0.09 + 1.645 * 0.02)).abs() < 0.004,
            "{:?}",
            d[0]
        );
    }
}
