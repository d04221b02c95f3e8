//! Simulations with known answers behind the stated levels and constants of `stats/` (unit tests,
//! seeded): `cargo test -p loadgate --lib stats:: -- --nocapture` prints the figures.

/// A standard normal draw (Box–Muller).
pub(super) fn normal(rng: &mut fastrand::Rng) -> f64 {
    let u = 1.0 - rng.f64();
    let v = rng.f64();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// `n` values of a stationary AR(1) series `x_t = φ·x_{t−1} + √(1 − φ²)·e_t` (unit variance,
/// lag-k autocorrelation φ^k), started from its stationary distribution.
pub(super) fn ar1(rng: &mut fastrand::Rng, n: usize, phi: f64) -> Vec<f64> {
    let innovation = (1.0 - phi * phi).sqrt();
    let mut x = normal(rng);
    (0..n)
        .map(|_| {
            let value = x;
            x = phi * x + innovation * normal(rng);
            value
        })
        .collect()
}

use super::{
    Decision, Evidence, MIN_SECONDS, Replicates, across_sub_runs, block_length, bootstrap_df,
    circular_indices, decide,
};

/// How often simulated intervals missed the true change, and the level they stated.
#[derive(Debug, Default, Clone, Copy)]
struct Coverage {
    sims: usize,
    /// The lower bound was above the true change.
    below: usize,
    /// The upper bound was below the true change.
    above: usize,
    /// The sum of the stated one-sided levels (for their mean).
    level_sum: f64,
}

impl Coverage {
    fn add(&mut self, decision: &Decision, truth: f64) {
        self.sims += 1;
        self.below += usize::from(decision.low > truth);
        self.above += usize::from(decision.high < truth);
        self.level_sum += decision.level;
    }

    /// The mean stated one-sided level.
    fn level(&self) -> f64 {
        self.level_sum / self.sims as f64
    }

    /// The share of intervals that held the truth.
    fn covered(&self) -> f64 {
        1.0 - (self.below + self.above) as f64 / self.sims as f64
    }

    /// The stated two-sided coverage, `1 − 2·level`.
    fn stated(&self) -> f64 {
        1.0 - 2.0 * self.level()
    }

    fn print(&self, name: &str) {
        println!(
            "{name}: covered {:.1}% (stated {:.1}%), lower bound above the truth {:.1}%, upper below {:.1}% (stated {:.1}% each), {} simulations",
            100.0 * self.covered(),
            100.0 * self.stated(),
            100.0 * self.below as f64 / self.sims as f64,
            100.0 * self.above as f64 / self.sims as f64,
            100.0 * self.level(),
            self.sims
        );
    }
}

/// The tolerance of a simulated rate: 2 points (the issue's), or the binomial simulation error at
/// 99% (2.58 standard errors) where that is larger.
fn tolerance(rate: f64, sims: usize) -> f64 {
    (2.58 * (rate * (1.0 - rate) / sims as f64).sqrt()).max(0.02)
}

// ---------------------------------------------------------------------------------------------
// (a) The t interval across sub-runs.

/// A paired `ab` invocation of `sub_runs` sub-runs of `epochs` epochs each: the epochs'
/// log-ratios (candidate over baseline) are one AR(1) series with coefficient `phi` and unit
/// variance running through all sub-runs (the machine's state carries over), a sub-run's change
/// is the mean of its epochs, plus `position` × (+1 when the baseline held the first position,
/// −1 otherwise; alternating, the first drawn at random) plus a random per-sub-run offset of sd
/// `offset_sd`. The true change is 0.
#[derive(Debug, Clone, Copy)]
struct SubRunCase {
    name: &'static str,
    sub_runs: usize,
    epochs: usize,
    phi: f64,
    position: f64,
    offset_sd: f64,
}

fn sub_run_coverage(case: SubRunCase, sims: usize, seed: u64) -> Coverage {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut coverage = Coverage::default();
    for _ in 0..sims {
        let epochs = ar1(&mut rng, case.sub_runs * case.epochs, case.phi);
        let first = rng.bool();
        let x: Vec<f64> = epochs
            .chunks(case.epochs)
            .enumerate()
            .map(|(k, chunk)| {
                let sign = if (k % 2 == 0) == first { 1.0 } else { -1.0 };
                let mean = chunk.iter().sum::<f64>() / chunk.len() as f64;
                mean + sign * case.position + case.offset_sd * normal(&mut rng)
            })
            .collect();
        let evidence = across_sub_runs(&x, 0.0).expect("enough sub-runs");
        // One rule at a 2.5% per-run level: a two-sided 95% interval.
        coverage.add(&decide(0.025, &[evidence], None)[0], 0.0);
    }
    coverage
}

/// Coverage of the across-sub-runs t interval (two-sided 95%: each bound at 2.5%, one rule),
/// 2,000 simulated invocations per case, with 4 and 6 sub-runs of 10 epochs: independent epochs;
/// AR(1) φ = 0.5 epochs (through all sub-runs); AR(1) φ = 0.3 and a random per-sub-run offset
/// (sd 0.5, about the sd of a sub-run's mean); AR(1) φ = 0.5 and a position offset of ±0.3 that
/// alternates with the swapped sides. Asserted within 2 points (or the 99% simulation error) of
/// 95% (the position offset cancels in the mean of an even number of sub-runs and widens their
/// sd: that case over-covers a little).
#[test]
fn across_sub_runs_t_interval_holds_its_level() {
    let base = SubRunCase {
        name: "",
        sub_runs: 4,
        epochs: 10,
        phi: 0.0,
        position: 0.0,
        offset_sd: 0.0,
    };
    let cases = [
        SubRunCase {
            name: "independent epochs",
            ..base
        },
        SubRunCase {
            name: "AR(1) 0.5 epochs",
            phi: 0.5,
            ..base
        },
        SubRunCase {
            name: "AR(1) 0.3 + random offset",
            phi: 0.3,
            offset_sd: 0.5,
            ..base
        },
        SubRunCase {
            name: "AR(1) 0.5 + position offset",
            phi: 0.5,
            position: 0.3,
            ..base
        },
    ];
    for (i, case) in cases.iter().enumerate() {
        for sub_runs in [4, 6] {
            let case = SubRunCase { sub_runs, ..*case };
            let c = sub_run_coverage(case, 2000, 100 + i as u64 * 10 + sub_runs as u64);
            c.print(&format!("t across {sub_runs} sub-runs, {}", case.name));
            let tol = tolerance(c.stated(), c.sims);
            assert!((c.covered() - c.stated()).abs() <= tol, "{case:?}: {c:?}");
        }
    }
}

/// The stated minimum detectable effect means what it says: one rule tested across 6 sub-runs
/// (sd 1 each, allowance 0.5, α = 5%) whose true change is the MDE computed from the true se
/// (`a + (t₅(0.95) + t₅(0.8))·1/√6`) is called regressed in about 80% of 2,000 runs (the t test's
/// power there is 77-80%: its se is estimated); asserted within 5 points of 80%.
#[test]
fn a_change_of_the_mde_is_caught_four_times_in_five() {
    let mut rng = fastrand::Rng::with_seed(61);
    let se = 1.0 / 6f64.sqrt();
    let evidence = Evidence {
        estimate: 0.0,
        se,
        df: Some(5.0),
        allowance: 0.5,
    };
    let mde = decide(0.05, &[evidence], None)[0].mde;
    let caught = (0..2000)
        .filter(|_| {
            let x: Vec<f64> = (0..6).map(|_| mde + normal(&mut rng)).collect();
            let evidence = across_sub_runs(&x, 0.5).expect("six sub-runs");
            decide(0.05, &[evidence], None)[0].regressed
        })
        .count();
    let power = caught as f64 / 2000.0;
    println!(
        "t across 6 sub-runs: a true change of the MDE ({mde:.3}, allowance 0.5, se {se:.3}) caught in {:.1}% of 2000 runs",
        100.0 * power
    );
    assert!((power - 0.8).abs() <= 0.05, "{power}");
}

// ---------------------------------------------------------------------------------------------
// (b) The two-run circular block bootstrap of a percentile of merged seconds.

/// Two runs of `seconds` seconds with `per_second` responses each: a second's log latencies are
/// its level (an AR(1) series with coefficient `phi` and sd `level_sd`) plus independent normal
/// noise of sd 1; the rule's statistic is the `quantile` of the merged log latencies (a
/// percentile of the merged per-second histograms, 128 bins over ±6 sd, interpolated within a
/// bin). Both runs come from the same process, so the true change is 0.
#[derive(Debug, Clone, Copy)]
struct SecondsCase {
    seconds: usize,
    per_second: usize,
    phi: f64,
    level_sd: f64,
    quantile: f64,
}

const BINS: usize = 128;

/// A simulated run: per second, the cumulative counts of its log latencies at the bins' lower
/// edges (`BINS + 1` each: 0 at the first edge, the second's count at the last); and its mean log
/// latency (the series the block length is chosen from).
struct Run {
    cumulative: Vec<[u32; BINS + 1]>,
    means: Vec<f64>,
}

fn simulated_run(rng: &mut fastrand::Rng, case: SecondsCase) -> Run {
    let spread = 6.0 * (1.0 + case.level_sd * case.level_sd).sqrt();
    let mut run = Run {
        cumulative: Vec::with_capacity(case.seconds),
        means: Vec::with_capacity(case.seconds),
    };
    for level in ar1(rng, case.seconds, case.phi) {
        let mut counts = [0u32; BINS + 1];
        let mut sum = 0.0;
        for _ in 0..case.per_second {
            let value = case.level_sd * level + normal(rng);
            sum += value;
            let bin = ((value + spread) / (2.0 * spread) * BINS as f64).floor();
            counts[bin.clamp(0.0, (BINS - 1) as f64) as usize + 1] += 1;
        }
        for bin in 1..=BINS {
            counts[bin] += counts[bin - 1];
        }
        run.cumulative.push(counts);
        run.means.push(sum / case.per_second as f64);
    }
    run
}

/// The `quantile` of the merged histogram of the seconds `picked` (indices into the run, with
/// repeats), in bins, interpolated linearly within its bin: the statistic up to a constant
/// factor. Finds the bin by bisection on the merged cumulative counts `Σ_t w_t·cumulative_t`.
fn merged_quantile(run: &Run, picked: &[usize], quantile: f64, weights: &mut Vec<u32>) -> f64 {
    weights.clear();
    weights.resize(run.cumulative.len(), 0);
    for &second in picked {
        weights[second] += 1;
    }
    let below = |edge: usize| -> f64 {
        let total: u64 = weights
            .iter()
            .zip(&run.cumulative)
            .filter(|(w, _)| **w > 0)
            .map(|(w, c)| u64::from(*w) * u64::from(c[edge]))
            .sum();
        total as f64
    };
    let target = quantile * below(BINS);
    // The last edge whose count is below the target: the quantile lies in its bin.
    let (mut lo, mut hi) = (0, BINS);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if below(mid) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let (at_lo, at_hi) = (below(lo), below(hi));
    lo as f64 + (target - at_lo) / (at_hi - at_lo).max(1.0)
}

/// Simulates `sims` pairs of runs and decides each one's single rule (α = 5%: each bound at 5%,
/// a two-sided 90% interval) with the max-T path on `resamples` circular block bootstrap
/// resamples (each run its own [`block_length`] from its per-second mean log latency).
fn seconds_coverage(
    case: SecondsCase,
    sims: usize,
    resamples: usize,
    seed: u64,
) -> (Coverage, f64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut coverage = Coverage::default();
    let mut weights = Vec::new();
    let mut picked = Vec::new();
    let all: Vec<usize> = (0..case.seconds).collect();
    let mut block_sum = 0usize;
    for _ in 0..sims {
        let base = simulated_run(&mut rng, case);
        let current = simulated_run(&mut rng, case);
        let blocks = [block_length(&base.means), block_length(&current.means)];
        let df = bootstrap_df(case.seconds, blocks[0]).min(bootstrap_df(case.seconds, blocks[1]));
        block_sum += blocks[0] + blocks[1];
        let statistic = |run: &Run, picked: &[usize], weights: &mut Vec<u32>| {
            merged_quantile(run, picked, case.quantile, weights)
        };
        let estimate =
            statistic(&current, &all, &mut weights) - statistic(&base, &all, &mut weights);
        let rows = (0..resamples)
            .map(|_| {
                circular_indices(case.seconds, blocks[0], &mut rng, &mut picked);
                let b = statistic(&base, &picked, &mut weights);
                circular_indices(case.seconds, blocks[1], &mut rng, &mut picked);
                vec![statistic(&current, &picked, &mut weights) - b]
            })
            .collect();
        let replicates = Replicates { rows };
        let evidence = Evidence {
            estimate,
            se: replicates.se(0),
            df: Some(df),
            allowance: 0.0,
        };
        coverage.add(&decide(0.05, &[evidence], Some(&replicates))[0], 0.0);
    }
    (coverage, block_sum as f64 / (2 * sims) as f64)
}

/// Checks the two-run bootstrap at `seconds` per run, 30 responses per second whose level (sd
/// 0.5, against 1 within a second) is an AR(1) series with coefficient `phi`: 2,000 simulated
/// pairs of runs of 100 resamples, each bound at 5% (one rule at α = 5%): each bound misses the
/// truth at most 2 points (or the 99% simulation error) more often than its stated level, and the
/// lower bound (the false-alarm side) within 2 points of it either way.
fn check_seconds(seconds: usize, phi: f64, seed: u64) {
    let case = SecondsCase {
        seconds,
        per_second: 30,
        phi,
        level_sd: 0.5,
        quantile: 0.95,
    };
    let (c, block) = seconds_coverage(case, 2000, 100, seed);
    c.print(&format!(
        "p(95) of merged seconds, two runs of {seconds} s, AR(1) {phi}, mean block {block:.2} s"
    ));
    let level = c.level();
    let tol = tolerance(level, c.sims);
    let below = c.below as f64 / c.sims as f64;
    let above = c.above as f64 / c.sims as f64;
    assert!((below - level).abs() <= tol, "{case:?}: {c:?}");
    assert!(above <= level + tol, "{case:?}: {c:?}");
}

/// The two-run bootstrap interval at [`MIN_SECONDS`], independent seconds.

#[test]
fn bootstrap_holds_its_level_at_min_seconds_independent() {
    check_seconds(MIN_SECONDS, 0.0, 51);
}

/// The two-run bootstrap interval at [`MIN_SECONDS`], AR(1) φ = 0.3 seconds.
#[test]
fn bootstrap_holds_its_level_at_min_seconds_ar_0_3() {
    check_seconds(MIN_SECONDS, 0.3, 52);
}

/// The two-run bootstrap interval at [`MIN_SECONDS`], AR(1) φ = 0.5 seconds.
#[test]
fn bootstrap_holds_its_level_at_min_seconds_ar_0_5() {
    check_seconds(MIN_SECONDS, 0.5, 53);
}

/// The two-run bootstrap interval at twice [`MIN_SECONDS`], independent seconds.
#[test]
fn bootstrap_holds_its_level_at_twice_min_seconds_independent() {
    check_seconds(2 * MIN_SECONDS, 0.0, 54);
}

/// The two-run bootstrap interval at twice [`MIN_SECONDS`], AR(1) φ = 0.5 seconds.
#[test]
fn bootstrap_holds_its_level_at_twice_min_seconds_ar_0_5() {
    check_seconds(2 * MIN_SECONDS, 0.5, 55);
}
