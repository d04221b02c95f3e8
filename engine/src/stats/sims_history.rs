//! Simulations of the stored-baseline verdict (`compare --baseline-history`): a synthetic nightly
//! history (seeded; run-to-run noise 1–5% log-normal, lag-1 correlation 0.4, a +8% step inside
//! the window or a drift of 1% a night for 10 nights), then pull-request runs compared with it,
//! unchanged (A/A) and 15% slower, by three methods side by side:
//!
//! - **segment**: the level of the segment since the last change point, the prediction bound of
//!   `prediction.rs`, or the within-run standard error where that is the wider (the verdict of
//!   `compare/between_runs.rs`);
//! - **widened**: the verdict before it, reimplemented here only: the change from the latest run
//!   (the baseline), its within-run standard error widened to `√2·sd` of the last 30 results;
//! - **two-run**: the change from the latest run with the within-run standard error alone.
//!
//! Every comparison judges a family of 15 rules (p(50), p(95), p(99), throughput and error rate
//! of the total and two targets) with Holm's step-down at α = 5% per run (`decide`); a
//! comparison "fails" when any rule regressed. `cargo test -p loadgate --lib
//! stats::sims_history -- --nocapture` prints the figures.

use super::changepoint::{Options, detect};
use super::prediction::{MIN_SEGMENT, predict};
use super::sims::ar1;
use super::{Evidence, decide};

/// The per-run false-alarm rate of the family.
const ALPHA: f64 = 0.05;
/// Nights of history before the first comparison's step (the step is at this night).
const STEP_AT: usize = 40;
/// Comparisons per history: one a night from `MIN_SEGMENT` nights after the step on.
const COMPARISONS: usize = 20;
/// The change points' and the widened method's windows: the last 60 results for the segment
/// (the review's 60–100), the last 30 for the widening (the action's artifact window).
const SEGMENT_WINDOW: usize = 60;
const WIDENED_WINDOW: usize = 30;
/// Share of a run's noise that is within the run (what the block bootstrap of one run sees).
const WITHIN: f64 = 0.5;
/// Lag-1 correlation of successive runs (the review measured 0.31–0.51).
const RHO: f64 = 0.4;
/// Share of the noise's variance that a run's rules share (the machine).
const SHARED: f64 = 0.5;

/// One rule of the simulated spec, on its worse-is-positive scale.
#[derive(Debug, Clone, Copy)]
struct Rule {
    /// Run-to-run standard deviation: of the log for latency and throughput, of the rate.
    sd: f64,
    /// The allowance on the scale: `ln(1.05)` for `p(50) +5%`.
    allowance: f64,
    /// A latency: moved by the step, the drift and the regression (throughput and errors are
    /// not, as in an open model).
    latency: bool,
}

/// p(50) +5%, p(95) +5%, p(99) +10%, throughput −10%, error rate +0.1 points, for the total
/// and two targets: noise 1% (p(50), throughput), 2.5% (p(95)), 5% (p(99)), 0.03 points.
fn spec() -> Vec<Rule> {
    let lat = |sd: f64, allowed: f64| Rule {
        sd,
        allowance: allowed.ln_1p(),
        latency: true,
    };
    let mut rules = Vec::new();
    for scope in 0..3 {
        // The targets are noisier than the total.
        let f = if scope == 0 { 1.0 } else { 1.5 };
        rules.extend([
            lat(0.01 * f, 0.05),
            lat(0.025 * f, 0.05),
            lat(0.05 * f, 0.10),
            Rule {
                sd: 0.01 * f,
                allowance: -(-0.10f64).ln_1p(),
                latency: false,
            },
            Rule {
                sd: 0.0003 * f,
                allowance: 0.001,
                latency: false,
            },
        ]);
    }
    rules
}

/// The history's shape besides the noise.
#[derive(Debug, Clone, Copy)]
enum Shape {
    /// +8% latency from night `STEP_AT` on.
    Step,
    /// +1% latency a night for 10 nights from `STEP_AT`, then flat.
    Drift,
    /// No change: stationary noise (for the level at the allowance's boundary).
    Flat,
}

impl Shape {
    /// The latency's shift on the log scale at `night`.
    fn shift(self, night: usize) -> f64 {
        match self {
            Shape::Step if night >= STEP_AT => 1.08f64.ln(),
            Shape::Drift => (night.saturating_sub(STEP_AT).min(10) as f64) * 1.01f64.ln(),
            _ => 0.0,
        }
    }
}

/// `nights` values per rule: shift plus noise, every series AR(1) with lag-1 correlation `RHO`
/// (a machine factor shared by the rules, and each rule's own, both AR(1)).
fn history(rng: &mut fastrand::Rng, rules: &[Rule], shape: Shape, nights: usize) -> Vec<Vec<f64>> {
    let machine = ar1(rng, nights, RHO);
    rules
        .iter()
        .map(|rule| {
            let own = ar1(rng, nights, RHO);
            (0..nights)
                .map(|t| {
                    let z = SHARED.sqrt() * machine[t] + (1.0 - SHARED).sqrt() * own[t];
                    let shift = if rule.latency { shape.shift(t) } else { 0.0 };
                    shift + rule.sd * z
                })
                .collect()
        })
        .collect()
}

/// The three methods.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Method {
    Segment,
    Widened,
    TwoRun,
}

/// What `method` compares a current value with, from a rule's `past` values (time order): the
/// reference value on the scale, the standard error and the degrees of freedom of the change;
/// `None` when the method does not test the rule (fewer than `MIN_SEGMENT` values in the
/// segment).
fn reference(method: Method, rule: &Rule, past: &[f64]) -> Option<(f64, f64, Option<f64>)> {
    let baseline = *past.last()?;
    let within = std::f64::consts::SQRT_2 * WITHIN * rule.sd;
    match method {
        Method::Segment => {
            let window = &past[past.len().saturating_sub(SEGMENT_WINDOW)..];
            let starts: Vec<usize> = detect(window, &Options::default())
                .iter()
                .map(|c| c.index)
                .collect();
            let p = predict(window, &starts).ok()?;
            // The runs' own standard error where it is the wider (`between_runs.rs`).
            Some(if within > p.se {
                (p.level, within, None)
            } else {
                (p.level, p.se, Some(p.df))
            })
        }
        Method::Widened => {
            let window = &past[past.len().saturating_sub(WIDENED_WINDOW)..];
            let between = std::f64::consts::SQRT_2 * super::sd(window);
            Some(if between > within {
                (baseline, between, Some((window.len() - 1) as f64))
            } else {
                (baseline, within, None)
            })
        }
        Method::TwoRun => Some((baseline, within, None)),
    }
}

const METHODS: [Method; 3] = [Method::Segment, Method::Widened, Method::TwoRun];

/// Comparisons that failed (any rule regressed), per method (segment, widened, two-run).
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    comparisons: usize,
    failed: [usize; 3],
    /// Segment only: rules left untested (too few results since the last change point).
    untested: usize,
}

impl Tally {
    fn rate(&self, m: usize) -> f64 {
        self.failed[m] as f64 / self.comparisons as f64
    }

    fn add(&mut self, other: &Tally) {
        self.comparisons += other.comparisons;
        self.untested += other.untested;
        for m in 0..3 {
            self.failed[m] += other.failed[m];
        }
    }
}

/// The current runs of one comparison: the change on the latency rules (on the log scale), and
/// whether every rule is also moved by its allowance (the least favourable unchanged build).
#[derive(Debug, Clone, Copy)]
struct Current {
    change: f64,
    boundary: bool,
}

/// `replications` histories of `shape` (seeded by `seed`); after each, `COMPARISONS`
/// pull-request runs, one a night from `MIN_SEGMENT` nights after `STEP_AT`, each compared with
/// the history up to that night: the current run is the series' next value, moved as each of
/// `currents` says. One tally per current.
fn replicate(shape: Shape, currents: &[Current], replications: usize, seed: u64) -> Vec<Tally> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let rules = spec();
    let mut tallies = vec![Tally::default(); currents.len()];
    let first = STEP_AT + MIN_SEGMENT;
    for _ in 0..replications {
        let series = history(&mut rng, &rules, shape, first + COMPARISONS);
        for night in first..first + COMPARISONS {
            for (m, method) in METHODS.iter().enumerate() {
                let references: Vec<Option<(f64, f64, Option<f64>)>> = rules
                    .iter()
                    .zip(&series)
                    .map(|(rule, values)| reference(*method, rule, &values[..night]))
                    .collect();
                for (current, tally) in currents.iter().zip(tallies.iter_mut()) {
                    let tests: Vec<Evidence> = rules
                        .iter()
                        .zip(&series)
                        .zip(&references)
                        .filter_map(|((rule, values), reference)| {
                            let (center, se, df) = (*reference)?;
                            let mut y = values[night];
                            if rule.latency {
                                y += current.change;
                            }
                            if current.boundary {
                                y += rule.allowance;
                            }
                            Some(Evidence {
                                estimate: y - center,
                                se,
                                df,
                                allowance: rule.allowance,
                            })
                        })
                        .collect();
                    if m == 0 {
                        tally.comparisons += 1;
                        tally.untested += rules.len() - tests.len();
                    }
                    let decided = decide(ALPHA, &tests, None);
                    if decided.iter().any(|d| d.regressed) {
                        tally.failed[m] += 1;
                    }
                }
            }
        }
    }
    tallies
}

/// [`replicate`] in `CHUNKS` seeded chunks of the replications, run on threads (the figures do
/// not depend on the machine's cores).
fn simulate(shape: Shape, currents: &[Current], replications: usize, seed: u64) -> Vec<Tally> {
    const CHUNKS: u64 = 10;
    let per_chunk = replications.div_ceil(CHUNKS as usize);
    let chunks: Vec<Vec<Tally>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..CHUNKS)
            .map(|chunk| {
                scope.spawn(move || replicate(shape, currents, per_chunk, seed * 1_000 + chunk))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("simulation thread"))
            .collect()
    });
    let mut tallies = vec![Tally::default(); currents.len()];
    for chunk in &chunks {
        for (all, part) in tallies.iter_mut().zip(chunk) {
            all.add(part);
        }
    }
    tallies
}

/// Histories per case: 40 (800 comparisons; about a minute of a debug build's CPU per test),
/// or `LOADGATE_SIMS_HISTORY` when set (docs/statistics.md quotes 500: 10,000 comparisons).
fn replications() -> usize {
    std::env::var("LOADGATE_SIMS_HISTORY")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40)
}

fn print(name: &str, tally: &Tally) {
    println!(
        "{name:<34} segment {:>5.1}%  widened {:>5.1}%  two-run {:>5.1}%  ({} comparisons; \
         segment rules untested {:.1}%)",
        100.0 * tally.rate(0),
        100.0 * tally.rate(1),
        100.0 * tally.rate(2),
        tally.comparisons,
        100.0 * tally.untested as f64 / (tally.comparisons * spec().len()) as f64,
    );
}

/// The tolerance of a simulated rate: 1.5 points, or the binomial simulation error at 99%
/// (2.58 standard errors, counting the 20 comparisons of one history as 5 independent ones)
/// where that is larger.
fn tolerance(rate: f64, comparisons: usize) -> f64 {
    (2.58 * (rate * (1.0 - rate) / (comparisons / 4) as f64).sqrt()).max(0.015)
}

/// The goals with a step inside the window and with the drift: at most 1 false alarm in
/// 20 A/A comparisons (a rate ≤ 5%) and at least 14 of 20 15%-slower builds caught (a rate ≥
/// 70%), once 5 results follow the change; asserted within the simulation's tolerance. The
/// widening catches fewer than the segment level.
#[test]
fn the_segment_level_meets_the_goals_where_the_widening_is_blind() {
    let n = replications();
    let currents = [
        Current {
            change: 0.0,
            boundary: false,
        },
        Current {
            change: 1.15f64.ln(),
            boundary: false,
        },
    ];
    for (shape, seed) in [(Shape::Step, 11), (Shape::Drift, 12)] {
        let tallies = simulate(shape, &currents, n, seed);
        let (aa, slower) = (&tallies[0], &tallies[1]);
        print(&format!("{shape:?}: A/A false alarms"), aa);
        print(&format!("{shape:?}: +15% caught"), slower);
        let margin = tolerance(0.05, aa.comparisons);
        assert!(aa.rate(0) <= 0.05 + margin, "{shape:?} A/A: {aa:?}");
        assert!(
            slower.rate(0) >= 0.70 - margin,
            "{shape:?} +15%: {slower:?}"
        );
        assert!(slower.rate(1) < slower.rate(0), "{shape:?}: {slower:?}");
    }
}

/// The level held: with every rule's true change at its allowance (the least favourable
/// unchanged build) on a stationary history, the family fails at most α = 5% of comparisons
/// (within the simulation's tolerance), although its runs are correlated (ρ = 0.4).
#[test]
fn the_segment_level_holds_its_false_alarm_rate_at_the_boundary() {
    let n = replications();
    let current = Current {
        change: 0.0,
        boundary: true,
    };
    let tally = simulate(Shape::Flat, &[current], n, 21)[0];
    print("Flat: every rule at its allowance", &tally);
    assert!(
        tally.rate(0) <= ALPHA + tolerance(ALPHA, tally.comparisons),
        "{tally:?}"
    );
}
