//! Simulations of a 33-rule gate (3 whole-run rules and 3 rules on each of 10 flow steps: p(50),
//! p(95), p(99)), every rule at the boundary of its allowance (the least favourable unchanged
//! build) and at twice it: the per-run false-alarm rate of [`decide`] and its power, for the
//! paired path (t across sub-runs, Holm) and the two-run path (circular block bootstrap,
//! max-T). `cargo test -p loadgate --lib stats::sims_family -- --nocapture` prints the figures.

use super::sims::{ar1, normal};
use super::{
    Evidence, MIN_SECONDS, Replicates, across_sub_runs, block_length, bootstrap_df,
    circular_indices, decide,
};

const STEPS: usize = 10;
const RULES: usize = 3 * (STEPS + 1);
/// Per quantile (p(50), p(95), p(99)): the noise's sd on the log scale, per sub-run or per second.
const SD: [f64; 3] = [0.02, 0.04, 0.08];
/// Per quantile: the allowance on the log scale, `ln(1.05)`, `ln(1.05)`, `ln(1.10)`.
const ALLOWANCE: [f64; 3] = [0.048_790_164, 0.048_790_164, 0.095_310_18];
/// Shares of each value's variance: a factor shared by every rule (the machine), one shared by a
/// step's three quantiles; the rest is the rule's own. So p(50)/p(95)/p(99) of one step
/// correlate 0.8, rules of different steps 0.4 (before the totals average the steps).
const SHARED: f64 = 0.4;
const STEP: f64 = 0.4;

/// The allowance of rule `r` (rules: the total's p(50), p(95), p(99), then each step's).
fn allowance(r: usize) -> f64 {
    ALLOWANCE[r % 3]
}

/// One observation of the 33 rules (a sub-run's changes, or a second's log latencies) around 0:
/// `shared` is the machine factor (unit variance); each step's factor and each rule's own noise
/// are drawn here. The totals are the mean of the steps' values of the same quantile.
fn observation(rng: &mut fastrand::Rng, shared: f64, out: &mut [f64; RULES]) {
    let own = (1.0 - SHARED - STEP).sqrt();
    out[..3].fill(0.0);
    for step in 0..STEPS {
        let step_factor = normal(rng);
        for q in 0..3 {
            let z = SHARED.sqrt() * shared + STEP.sqrt() * step_factor + own * normal(rng);
            let value = SD[q] * z;
            out[3 + 3 * step + q] = value;
            out[q] += value / STEPS as f64;
        }
    }
}

/// How often a simulated gate said "regressed": at least one rule per run, and per rule.
#[derive(Debug)]
struct Rates {
    runs: usize,
    any: usize,
    per_rule: [usize; RULES],
}

impl Rates {
    fn new() -> Self {
        Rates {
            runs: 0,
            any: 0,
            per_rule: [0; RULES],
        }
    }

    fn add(&mut self, regressed: impl Iterator<Item = bool>) {
        self.runs += 1;
        let mut any = false;
        for (r, regressed) in regressed.enumerate() {
            self.per_rule[r] += usize::from(regressed);
            any |= regressed;
        }
        self.any += usize::from(any);
    }

    fn any(&self) -> f64 {
        self.any as f64 / self.runs as f64
    }

    /// The mean share of runs in which a rule of quantile `q` (0: p(50), 1: p(95), 2: p(99))
    /// regressed.
    fn per_quantile(&self, q: usize) -> f64 {
        let hits: usize = (0..RULES)
            .filter(|r| r % 3 == q)
            .map(|r| self.per_rule[r])
            .sum();
        hits as f64 / (self.runs * (STEPS + 1)) as f64
    }

    fn print(&self, name: &str) {
        println!(
            "{name}: at least one rule regressed in {:.1}% of {} runs; per rule: p(50) {:.1}%, p(95) {:.1}%, p(99) {:.1}%",
            100.0 * self.any(),
            self.runs,
            100.0 * self.per_quantile(0),
            100.0 * self.per_quantile(1),
            100.0 * self.per_quantile(2),
        );
    }
}

/// The paired path: `sub_runs` sub-runs with a machine factor per sub-run, a position offset
/// (+0.5 sd of each rule when the baseline is first, −0.5 sd otherwise, alternating), every true
/// change `factor` × its allowance; t across sub-runs, Holm at α = 5%.
fn paired(sub_runs: usize, factor: f64, sims: usize, seed: u64) -> Rates {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut rates = Rates::new();
    let mut x = vec![[0.0; RULES]; sub_runs];
    for _ in 0..sims {
        let first = rng.bool();
        for (k, row) in x.iter_mut().enumerate() {
            let shared = normal(&mut rng);
            observation(&mut rng, shared, row);
            let sign = if (k % 2 == 0) == first { 0.5 } else { -0.5 };
            for (r, value) in row.iter_mut().enumerate() {
                *value += sign * SD[r % 3] + factor * allowance(r);
            }
        }
        let tests: Vec<Evidence> = (0..RULES)
            .map(|r| {
                let column: Vec<f64> = x.iter().map(|row| row[r]).collect();
                across_sub_runs(&column, allowance(r)).expect("enough sub-runs")
            })
            .collect();
        rates.add(decide(0.05, &tests, None).iter().map(|d| d.regressed));
    }
    rates
}

/// A run of `seconds` seconds: each second's 33 values (the machine factor an AR(1) series with
/// coefficient `phi`), shifted by `shift` × each rule's allowance.
fn seconds(rng: &mut fastrand::Rng, seconds: usize, phi: f64, shift: f64) -> Vec<[f64; RULES]> {
    ar1(rng, seconds, phi)
        .into_iter()
        .map(|shared| {
            let mut row = [0.0; RULES];
            observation(rng, shared, &mut row);
            for (r, value) in row.iter_mut().enumerate() {
                *value += shift * allowance(r);
            }
            row
        })
        .collect()
}

/// Each rule's mean over the seconds `picked` of `run`.
fn means(run: &[[f64; RULES]], picked: &[usize], weights: &mut Vec<u32>) -> [f64; RULES] {
    weights.clear();
    weights.resize(run.len(), 0);
    for &second in picked {
        weights[second] += 1;
    }
    let mut sums = [0.0; RULES];
    for (w, row) in weights.iter().zip(run) {
        if *w > 0 {
            for (sum, value) in sums.iter_mut().zip(row) {
                *sum += f64::from(*w) * value;
            }
        }
    }
    sums.map(|sum| sum / picked.len() as f64)
}

/// The two-run path: two runs of `length` seconds, the rules' statistics the means of their
/// per-second values (their coverage as percentiles of merged seconds is simulated in `sims.rs`),
/// every true change `factor` × its allowance; one set of circular block resamples per run
/// shared by all rules ([`block_length`] of the total's p(50) series, [`bootstrap_df`]),
/// `resamples` of them; max-T at α = 5%.
fn two_runs(
    length: usize,
    phi: f64,
    factor: f64,
    sims: usize,
    resamples: usize,
    seed: u64,
) -> Rates {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut rates = Rates::new();
    let (mut picked, mut weights) = (Vec::new(), Vec::new());
    let all: Vec<usize> = (0..length).collect();
    for _ in 0..sims {
        let base = seconds(&mut rng, length, phi, 0.0);
        let current = seconds(&mut rng, length, phi, factor);
        let block =
            |run: &[[f64; RULES]]| block_length(&run.iter().map(|row| row[0]).collect::<Vec<_>>());
        let blocks = [block(&base), block(&current)];
        let df = bootstrap_df(length, blocks[0]).min(bootstrap_df(length, blocks[1]));
        let rows = (0..resamples)
            .map(|_| {
                circular_indices(length, blocks[0], &mut rng, &mut picked);
                let b = means(&base, &picked, &mut weights);
                circular_indices(length, blocks[1], &mut rng, &mut picked);
                let c = means(&current, &picked, &mut weights);
                (0..RULES).map(|r| c[r] - b[r]).collect()
            })
            .collect();
        let replicates = Replicates { rows };
        let (b, c) = (
            means(&base, &all, &mut weights),
            means(&current, &all, &mut weights),
        );
        let tests: Vec<Evidence> = (0..RULES)
            .map(|r| Evidence {
                estimate: c[r] - b[r],
                se: replicates.se(r),
                df: Some(df),
                allowance: allowance(r),
            })
            .collect();
        rates.add(
            decide(0.05, &tests, Some(&replicates))
                .iter()
                .map(|d| d.regressed),
        );
    }
    rates
}

/// The largest per-run false-alarm rate asserted: 5% plus 2.58 binomial standard errors of 2,000
/// runs (99%).
fn fwer_bound(sims: usize) -> f64 {
    0.05 + 2.58 * (0.05 * 0.95 / sims as f64).sqrt()
}

/// Per-run false-alarm rate of the paired path (t across 4, 6 and 8 sub-runs, Holm), every rule
/// of the 33 at its allowance, with a position offset and a machine factor per sub-run: 2,000
/// runs each, ≤ 5% (+ the simulation error). Power at twice the allowance (every rule at 2A)
/// printed and asserted above each quantile's rate at the allowance.
#[test]
fn paired_gate_of_33_rules_holds_one_false_alarm_rate() {
    for (i, sub_runs) in [4, 6, 8].into_iter().enumerate() {
        let seed = 31 + 2 * i as u64;
        let null = paired(sub_runs, 1.0, 2000, seed);
        null.print(&format!(
            "paired, {sub_runs} sub-runs, Holm, every rule at its allowance"
        ));
        assert!(null.any() <= fwer_bound(null.runs), "{null:?}");
        let power = paired(sub_runs, 2.0, 2000, seed + 1);
        power.print(&format!(
            "paired, {sub_runs} sub-runs, Holm, every rule at twice its allowance"
        ));
        for q in 0..3 {
            assert!(power.per_quantile(q) > null.per_quantile(q), "{power:?}");
        }
    }
}

/// Per-run false-alarm rate of the two-run path (circular block bootstrap, max-T), two runs of
/// [`MIN_SECONDS`] seconds with an AR(1) (φ = 0.5) machine factor, every rule of the 33 at its
/// allowance: 2,000 runs of 100 resamples, ≤ 5% (+ the simulation error).
#[test]
fn two_run_gate_of_33_rules_holds_one_false_alarm_rate() {
    let null = two_runs(MIN_SECONDS, 0.5, 1.0, 2000, 100, 41);
    null.print(&format!(
        "two runs of {MIN_SECONDS} s, AR(1) 0.5, max-T, every rule at its allowance"
    ));
    assert!(null.any() <= fwer_bound(null.runs), "{null:?}");
}

/// Power of the two-run path of [`two_run_gate_of_33_rules_holds_one_false_alarm_rate`] with
/// every rule at twice its allowance: printed, and asserted above 5% for each quantile's rules.
#[test]
fn two_run_gate_of_33_rules_has_power_at_twice_the_allowance() {
    let power = two_runs(MIN_SECONDS, 0.5, 2.0, 2000, 100, 42);
    power.print(&format!(
        "two runs of {MIN_SECONDS} s, AR(1) 0.5, max-T, every rule at twice its allowance"
    ));
    for q in 0..3 {
        assert!(power.per_quantile(q) > 0.05, "{power:?}");
    }
}
