//! Run-to-run variation: how much a rule's whole-run value moves from one run of the same build
//! to the next (another machine, other neighbours), estimated from earlier results of the spec
//! (`--baseline-history`), added to each rule's standard error.
//!
//! # Model
//!
//! A rule's whole-run value `y_j` of run `j` (its natural log for latency and throughput, whose
//! variation grows with their size; the value itself for the error rate, which is often 0)
//! follows the two-level, one-way random-effects model of variance components
//! (Searle, Casella & McCulloch, *Variance Components*, Wiley 1992, ch. 3):
//!
//! ```text
//! y_j = μ + u_j + e_j,   u_j ~ N(0, τ²) the run's machine,   e_j ~ N(0, σ²_w) the noise within the run
//! ```
//!
//! The change between a baseline run and a current run of the same build then has variance
//! `2(τ² + σ²_w)`. The block bootstrap of `two_run.rs` estimates the within-run part only: its
//! standard error `se` is about `√(2σ²_w)`.
//!
//! The sample variance `s²` of the whole-run values of `k` earlier runs (the history and the
//! baseline) estimates `τ² + σ²_w`, since each earlier value carries its own within-run noise.
//! The moment (ANOVA) estimate of the between-run part is `τ̂² = max(0, s² − σ̂²_w)` with
//! `σ̂²_w = se²/2` (Searle et al., ch. 3; truncated at 0 as in DerSimonian & Laird,
//! "Meta-analysis in clinical trials", Controlled Clinical Trials 7(3), 1986). Added to the
//! change's variance, `se'² = se² + 2τ̂² = max(se², 2s²)`: the standard error is at least
//! `√2·s`. Where the run-to-run part dominates (`√2·s > se`), the test's reference
//! distribution is Student's t with `k − 1` degrees of freedom, as `s` comes from `k` runs: for
//! two new runs from the same normal population as `k` others, `(y_a − y_b)/(√2·s)` follows
//! `t(k − 1)`, the pivot of a prediction interval (Hahn & Meeker, *Statistical Intervals*,
//! Wiley 1991, ch. 4); elsewhere Student's t with the bootstrap's degrees of freedom (its blocks
//! less one). The family is then decided by Holm's
//! step-down on those p-values (`stats::decide` without replicates), as the bootstrap's
//! replicates do not carry the run-to-run part.
//!
//! At least [`MIN_EARLIER`] earlier results are needed besides the baseline; with fewer, the
//! comparison says that its verdict assumes the two runs' machines were alike, and the rules are
//! judged on the runs alone.

use super::rules::{RuleTest, whole_run_value};
use super::scale::Scale;
use super::scoped::scoped;
use super::{CompareError, check_version};
use crate::plan::regression::RegressionRule;
use crate::result::RunResult;

/// Fewest earlier results (besides the baseline) that give a run-to-run estimate.
pub(crate) const MIN_EARLIER: usize = 3;

/// The run-to-run spread of one rule's whole-run value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Spread {
    /// Sample standard deviation (divisor `k − 1`) of the values over the runs: of `ln(value)`
    /// (a fraction, about the relative spread) or of the value (in its unit).
    pub(super) sd: f64,
    /// Runs the estimate comes from, `k` (earlier results and the baseline).
    pub(super) runs: usize,
}

impl Spread {
    /// The spread of `values` (one whole-run value per run), of their logs when `log`; `None`
    /// with fewer than [`MIN_EARLIER`] + 1 values, or (log) a value that is not above 0.
    pub(super) fn estimate(values: &[f64], log: bool) -> Option<Spread> {
        if values.len() < MIN_EARLIER + 1 {
            return None;
        }
        let on_scale: Vec<f64> = if log {
            if values.iter().any(|v| *v <= 0.0 || !v.is_finite()) {
                return None;
            }
            values.iter().map(|v| v.ln()).collect()
        } else {
            values.to_vec()
        };
        let k = on_scale.len() as f64;
        let mean = on_scale.iter().sum::<f64>() / k;
        let variance = on_scale.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / (k - 1.0);
        Some(Spread {
            sd: variance.sqrt(),
            runs: values.len(),
        })
    }

    /// The run-to-run standard error of a change between two runs, `√2·sd`.
    pub(super) fn se(&self) -> f64 {
        std::f64::consts::SQRT_2 * self.sd
    }
}

/// A standard error on a rule's scale in words: `±8.1%` (log scales: `e^se − 1`), or in
/// percentage points of the error rate.
fn format_se(scale: Scale, se: f64) -> String {
    if scale.relative() {
        format!("{:.1}%", se.exp_m1() * 100.0)
    } else {
        format!("{:.2} points", se * 100.0)
    }
}

/// Adds the run-to-run variation over `earlier` and the baseline to each tested rule's
/// standard error (see the module documentation): `se' = max(se, √2·s)`, Student t with
/// `k − 1` degrees of freedom where `√2·s` is the larger, the reason saying so. Returns the
/// comparison's note, and whether any rule's variation was estimated (then the family is
/// decided by Holm's step-down). With fewer than [`MIN_EARLIER`] earlier results, nothing is
/// changed and the note says what the verdict assumes.
pub(super) fn add_variation(
    rules: &[RegressionRule],
    tests: &mut [RuleTest],
    earlier: &[&RunResult],
    baseline: &RunResult,
) -> (String, bool) {
    if earlier.len() < MIN_EARLIER {
        return (
            format!(
                "the verdict assumes that the baseline's machine and this run's were alike: the \
                 intervals cover the noise within each run, not between runs; pass {MIN_EARLIER} \
                 or more earlier results of the spec to `compare --baseline-history` to add the \
                 run-to-run variation ({} given)",
                earlier.len()
            ),
            false,
        );
    }
    let mut parts = Vec::new();
    for (rule, test) in rules.iter().zip(tests.iter_mut()) {
        let Ok(evidence) = &mut test.evidence else {
            continue;
        };
        let scale = Scale::of(rule);
        let label = format!("{} {}", rule.metric, rule.expression);
        let values: Option<Vec<f64>> = earlier
            .iter()
            .copied()
            .chain([baseline])
            .map(|r| whole_run_value(rule, scoped(&rule.scope, r)?.as_ref()))
            .collect();
        let Some(spread) = values.and_then(|v| Spread::estimate(&v, scale.relative())) else {
            parts.push(format!("{label} not estimated (a run without a value)"));
            continue;
        };
        let (within, between) = (evidence.se, spread.se());
        if between > within {
            evidence.se = between;
            evidence.df = Some((spread.runs - 1) as f64);
            test.remark = format!(
                " (standard error widened by the run-to-run variation, {}, from the within-run \
                 {})",
                format_se(scale, between),
                format_se(scale, within)
            );
            parts.push(format!(
                "{label} {} (within-run {})",
                format_se(scale, between),
                format_se(scale, within)
            ));
        } else {
            parts.push(format!(
                "{label} not widened (run-to-run {}, within-run {})",
                format_se(scale, between),
                format_se(scale, within)
            ));
        }
    }
    if parts.is_empty() {
        parts.push("no rule was tested".to_string());
    }
    (
        format!(
            "standard errors widened by the run-to-run variation over {} earlier results and \
             the baseline (se' = max(se, √2·sd of the whole-run values), Student t with k − 1 \
             degrees of freedom where it is the larger; rules decided by Holm's step-down): {}",
            earlier.len(),
            parts.join(", ")
        ),
        true,
    )
}

/// The results of `history` that count as earlier runs: all but invalid measurements and the
/// baseline and current runs themselves (same `started_at` on the same host), with a note when
/// invalid ones were left out. Errors: a result of another version or another spec.
pub(super) fn earlier_results<'a>(
    history: &'a [RunResult],
    baseline: &RunResult,
    current: &RunResult,
) -> Result<(Vec<&'a RunResult>, Option<String>), CompareError> {
    let mut earlier = Vec::new();
    let mut invalid = 0;
    for result in history {
        check_version(result, "history")?;
        if result.spec.name != current.spec.name {
            return Err(CompareError::DifferentSpecs {
                baseline: result.spec.name.clone(),
                current: current.spec.name.clone(),
            });
        }
        let same_run = |r: &RunResult| {
            r.started_at == result.started_at
                && r.environment.hostname == result.environment.hostname
        };
        if !result.health.valid {
            invalid += 1;
        } else if !same_run(baseline) && !same_run(current) {
            earlier.push(result);
        }
    }
    let note = (invalid > 0).then(|| {
        format!(
            "{invalid} earlier result(s) left out of the run-to-run variation: invalid measurements"
        )
    });
    Ok((earlier, note))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    #[test]
    fn the_spread_is_the_sample_standard_deviation_on_its_scale() {
        // sd of 1, 2, 3, 4 (divisor 3) = √(5/3) = 1.290994.
        let s = Spread::estimate(&[1.0, 2.0, 3.0, 4.0], false).unwrap();
        assert!(close(s.sd, 1.290_994, 1e-6), "{s:?}");
        assert_eq!(s.runs, 4);
        assert!(close(s.se(), 1.290_994 * 2f64.sqrt(), 1e-6));
        // Log: e^0, e^0.1, e^0.2, e^0.3 have logs 0, 0.1, 0.2, 0.3: sd 0.1290994.
        let values: Vec<f64> = [0.0, 0.1, 0.2, 0.3]
            .iter()
            .map(|y: &f64| y.exp() * 500.0)
            .collect();
        let s = Spread::estimate(&values, true).unwrap();
        assert!(close(s.sd, 0.129_099_4, 1e-7), "{s:?}");
    }

    #[test]
    fn the_run_to_run_variation_is_added_where_it_is_the_larger() {
        use crate::compare::two_run::tests::{rule, run_of, seconds};
        use crate::plan::regression::RuleScope;
        use crate::plan::threshold::Metric;
        use crate::stats::Evidence;
        let rules = [
            rule(Metric::Latency, "p(50) +10%", RuleScope::Total),
            rule(Metric::Latency, "p(95) +10%", RuleScope::Total),
        ];
        let baseline = run_of(&seconds(1, 3, 1_000.0), &rules);
        let p50 = baseline.total.latency_us.as_ref().unwrap().p50_us as f64;
        let earlier: Vec<RunResult> = [1.1, 0.9, 1.2]
            .iter()
            .map(|f| {
                let mut r = baseline.clone();
                r.total.latency_us.as_mut().unwrap().p50_us = (p50 * f) as u64;
                r
            })
            .collect();
        let test = |se| {
            RuleTest::new(
                [Some(1.0), Some(1.0)],
                [30, 30],
                Ok(Evidence {
                    estimate: 0.0,
                    se,
                    df: None,
                    allowance: 0.1,
                }),
            )
        };
        let mut tests = [test(0.01), test(0.01)];
        let earlier: Vec<&RunResult> = earlier.iter().collect();
        let (note, estimated) = add_variation(&rules, &mut tests, &earlier, &baseline);
        assert!(estimated);
        // p50: the logs of 1.1, 0.9, 1.2 and 1 times the median.
        let logs: Vec<f64> = [1.1f64, 0.9, 1.2, 1.0].iter().map(|f| f.ln()).collect();
        let mean = logs.iter().sum::<f64>() / 4.0;
        let sd = (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / 3.0).sqrt();
        let e = tests[0].evidence.as_ref().unwrap();
        assert!((e.se - 2f64.sqrt() * sd).abs() < 1e-3, "{e:?} {sd}");
        assert_eq!(e.df, Some(3.0));
        assert!(
            tests[0]
                .remark
                .contains("widened by the run-to-run variation")
        );
        // p95 did not move between runs: the within-run se stays, on the normal.
        let e = tests[1].evidence.as_ref().unwrap();
        assert_eq!((e.se, e.df), (0.01, None));
        assert!(note.contains("over 3 earlier results") && note.contains("not widened"));

        let (note, estimated) = add_variation(&rules, &mut tests, &earlier[..2], &baseline);
        assert!(!estimated && note.contains("(2 given)"), "{note}");
    }

    #[test]
    fn too_few_runs_or_non_positive_values_give_no_estimate() {
        assert_eq!(Spread::estimate(&[1.0, 2.0, 3.0], false), None);
        assert_eq!(Spread::estimate(&[1.0, 2.0, 0.0, 3.0], true), None);
        assert!(Spread::estimate(&[0.0, 0.0, 0.0, 0.0], false).is_some());
    }
}
