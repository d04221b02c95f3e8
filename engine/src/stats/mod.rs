//! The statistics of the regression verdict, pure functions on numbers: no spec, no result, no
//! report. `compare/` turns runs into [`Evidence`] (one per regression rule) and asks [`decide`]
//! for the rules' verdicts as one family; `ab` and `compare` share the sub-run and bootstrap
//! helpers.
//!
//! Every test is on a scale where **worse is positive** (a latency's log-ratio
//! `ln(current / baseline)`, a throughput's `−ln(current / baseline)`, an error rate's
//! difference), and tests `H0: change ≤ allowance` (the change is within the rule's allowance)
//! against "regressed". One per-run level α is shared by every rule of the family, so that an
//! unchanged build (every true change at most its allowance) fails on at least one rule with
//! probability at most α:
//! - paired sub-runs (`loadgate ab`): a Student t test across sub-runs per rule
//!   ([`across_sub_runs`]; Kalibera & Jones 2013; Bulej et al. 2020), Holm's step-down over the
//!   one-sided p-values (Holm 1979);
//! - two runs: a circular block bootstrap of seconds ([`block_length`], [`circular_indices`];
//!   Künsch 1989; Politis & Romano 1992; Politis & White 2004; Patton, Politis & White 2009),
//!   with the max-T step-down on the studentized replicates (Westfall & Young 1993; Romano & Wolf
//!   2005).
//!
//! Per rule ([`Decision`]): **regressed** iff the lower bound exceeds the allowance (the rule was
//! rejected in the step-down), **improved** iff the upper bound is below −allowance,
//! **unchanged** iff the upper bound is within the allowance (two one-sided tests, Schuirmann
//! 1987; Lakens 2017), inconclusive otherwise; the minimum detectable effect at 80% power is
//! `allowance + (q(1 − level) + q(0.8))·se` (Bloom 1995).
//!
//! Series of results over runs (one metric of one spec, in time order) have their own tools:
//! robust level and spread ([`robust`]: median, MAD, Qn, lag-1 autocorrelation), change points
//! ([`changepoint`]: E-Divisive means with Apache Otava's t-test, corrected for serial
//! correlation) and drift ([`trend`]: Theil–Sen with a corrected Mann–Kendall test); their
//! simulations are in `sims_changes.rs`, the agreement with Apache Otava in `otava_agreement.rs`.
//! A stored baseline's prediction bound ([`prediction`]: the level of the segment since the last
//! change point, its robust spread inflated for AR(1) correlation) is simulated in
//! `sims_history.rs` against the earlier `√2·sd` widening and two runs alone.
//!
//! The simulations behind the constants ([`MIN_SECONDS`], [`MIN_SUB_RUNS`]) and the stated
//! levels are unit tests in `sims.rs` (intervals) and `sims_family.rs` (the 33-rule gate):
//! `cargo test -p loadgate --lib stats:: -- --nocapture` prints their figures.

mod bootstrap;
mod family;
#[cfg(test)]
mod otava_agreement;
pub(crate) mod prediction;
#[cfg(test)]
mod sims;
#[cfg(test)]
mod sims_changes;
#[cfg(test)]
mod sims_family;
#[cfg(test)]
mod sims_history;
mod sub_runs;

// Series of results (issue 33): the history's change points and drifts, the stored-baseline
// verdict's segment (`history`, `compare::between_runs`).
pub(crate) mod changepoint;
pub(crate) mod robust;
pub(crate) mod trend;

pub(crate) use bootstrap::{MIN_SECONDS, block_length, bootstrap_df, circular_indices};
pub(crate) use sub_runs::{MIN_SUB_RUNS, across_sub_runs};

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// One rule's test, on the worse-is-positive scale (a latency's `ln(current / baseline)`, a
/// throughput's `−ln(current / baseline)`, an error rate's difference as a fraction).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Evidence {
    /// The estimated change `d̂`, on the test's scale.
    pub estimate: f64,
    /// Its standard error, on the same scale (> 0 to be testable; 0 makes the test decide from
    /// the estimate alone). For the bootstrap: the standard deviation of the rule's replicates.
    pub se: f64,
    /// Degrees of freedom. Holm's path (no replicates): of the Student t reference distribution
    /// (sub-runs: R − 1, [`across_sub_runs`]); `None`: the standard normal. The bootstrap's path:
    /// the resampled blocks less one, the smaller of the two runs' [`bootstrap_df`], which widens
    /// the critical values for few blocks (`family.rs`, `expanded`); `None`: no widening (the
    /// plain max-T, for many blocks).
    pub df: Option<f64>,
    /// The allowance `a` on the test's scale (≥ 0): the largest change that is not a regression
    /// (a latency's `ln(1 + A/b)`).
    pub allowance: f64,
}

/// Resampled estimates of every test of a family: one row per resample, one column per test (the
/// same resample of the data for every column, so that the rules' joint distribution is kept);
/// the values are the bootstrap's `d*` on each test's scale. Every row has one value per test.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Replicates {
    /// `rows[b][r]`: resample `b`'s estimate of test `r`.
    pub rows: Vec<Vec<f64>>,
}

impl Replicates {
    /// The standard deviation of test `column`'s replicates ([`sd`]): the bootstrap standard
    /// error of its estimate (Efron & Tibshirani 1993, eq. 6.6).
    #[cfg(test)]
    pub(crate) fn se(&self, column: usize) -> f64 {
        sd(&self.rows.iter().map(|row| row[column]).collect::<Vec<_>>())
    }
}

/// The sample standard deviation (n − 1 divisor) of `values`; 0 with fewer than two.
pub(crate) fn sd(values: &[f64]) -> f64 {
    let n = values.len();
    if n < 2 {
        return 0.0;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
}

/// A rule decided within its family. At most one of `regressed`, `improved`, `unchanged` is true;
/// none: inconclusive.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Decision {
    /// The lower bound exceeds the allowance: `H0: change ≤ allowance` was rejected in the
    /// family's step-down.
    pub regressed: bool,
    /// The upper bound is below −allowance: better by more than the allowance.
    pub improved: bool,
    /// The upper bound is within the allowance and the rule did not improve (TOST: Schuirmann
    /// 1987; Lakens 2017).
    pub unchanged: bool,
    /// One-sided level of `low` and of `high`, a fraction: Holm's `α/(m − j)` at the (0-based)
    /// step `j` that rejected the rule or where the step-down stopped; max-T: the share of the
    /// rule's own studentized replicates above the critical value of that step.
    pub level: f64,
    /// Lower bound of the change at `level`, on the test's scale.
    pub low: f64,
    /// Upper bound of the change at `level`, on the test's scale.
    pub high: f64,
    /// Minimum detectable effect at 80% power at `level`, on the test's scale:
    /// `allowance + (q(1 − level) + q(0.8))·se` (Bloom 1995), q the reference distribution's
    /// quantile (max-T: the step's critical value for q(1 − level), the normal's for q(0.8)).
    pub mde: f64,
}

/// The power at which [`Decision::mde`] is stated: 80% (Cohen 1988; Bloom 1995).
pub(crate) const POWER: f64 = 0.8;

/// The family's verdicts, in the order of `tests`, at the per-run false-alarm rate `alpha` (a
/// fraction, 0 < alpha < 1): Holm's step-down (Holm 1979) over the one-sided p-values
/// `1 − F((d̂ − a)/se)` (F: Student t with `df`, or the standard normal) when `replicates` is
/// `None`; else the max-T step-down (Westfall & Young 1993, algorithm 2.8; Romano & Wolf 2005,
/// algorithm 3.1) on the studentized replicates `(d* − d̂)/se`, whose columns must be `tests`'
/// (their `se` the replicates' standard deviation, [`Replicates::se`]). Either way the
/// probability that a rule whose true change is within its allowance is called regressed is at
/// most `alpha` for the whole family (asymptotically, for the bootstrap).
pub(crate) fn decide(
    alpha: f64,
    tests: &[Evidence],
    replicates: Option<&Replicates>,
) -> Vec<Decision> {
    match replicates {
        None => family::holm(alpha, tests),
        Some(replicates) => family::max_t(alpha, tests, replicates),
    }
}

/// The reference distribution's CDF at `x`: Student t with `df` degrees of freedom, or the
/// standard normal (`df` None or not finite and positive).
fn cdf(df: Option<f64>, x: f64) -> f64 {
    match df.filter(|df| df.is_finite() && *df > 0.0) {
        Some(df) => StudentsT::new(0.0, 1.0, df)
            .expect("valid Student t")
            .cdf(x),
        None => Normal::standard().cdf(x),
    }
}

/// The reference distribution's quantile at probability `p` (0 < p < 1); see [`cdf`].
fn quantile(df: Option<f64>, p: f64) -> f64 {
    match df.filter(|df| df.is_finite() && *df > 0.0) {
        Some(df) => StudentsT::new(0.0, 1.0, df)
            .expect("valid Student t")
            .inverse_cdf(p),
        None => Normal::standard().inverse_cdf(p),
    }
}

/// The decision of a test whose bounds at `level` are `low`/`high`, with `critical` the quantile
/// that placed `low` (`low = d̂ − critical·se`), for the MDE; q(0.8) is the test's reference
/// distribution's (Student t with `df`, or the normal).
fn decision(test: &Evidence, level: f64, low: f64, high: f64, critical: f64) -> Decision {
    let regressed = low > test.allowance;
    let improved = !regressed && high < -test.allowance;
    let unchanged = !regressed && !improved && high <= test.allowance;
    Decision {
        regressed,
        improved,
        unchanged,
        level,
        low,
        high,
        mde: test.allowance + (critical + quantile(test.df, POWER)) * test.se,
    }
}
