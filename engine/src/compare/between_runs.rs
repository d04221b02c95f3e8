//! Run-to-run variation: how much a rule's whole-run value moves from one run of the same build
//! to the next (another machine, other neighbours), estimated from earlier results of the spec
//! (`--baseline-history`), and the widening of the rule's interval by it.
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
//! `2(τ² + σ²_w)`: twice a run's. The bootstrap interval of `stats.rs` covers the within-run part
//! only: its half-width is about `z·√(2σ²_w)`.
//!
//! The sample variance `s²` of the whole-run values of `k` earlier runs (the history and the
//! baseline) estimates `τ² + σ²_w`, since each earlier value carries its own within-run noise.
//! The moment (ANOVA) estimate of the between-run part is `τ̂² = max(0, s² − σ²_w)` (Searle et
//! al., ch. 3; truncated at 0 as in DerSimonian & Laird, "Meta-analysis in clinical trials",
//! Controlled Clinical Trials 7(3), 1986). Added to the interval in quadrature,
//! `h'² = h² + 2z²τ̂² = max(h², 2z²s²)`: each side of the interval reaches at least `z·√2·s`
//! from its centre, and is left alone when the within-run interval is already wider. As `s`
//! comes from `k` runs, `z` is Student's `t` quantile with `k − 1` degrees of freedom: for two
//! new runs `a`, `b` from the same normal population as `k` others, `(y_a − y_b)/(√2·s)` follows
//! `t(k − 1)`, the pivot of a prediction interval (Hahn & Meeker, *Statistical Intervals*,
//! Wiley 1991, ch. 4).
//!
//! At least [`MIN_EARLIER`] earlier results are needed besides the baseline; with fewer, the
//! comparison says that its verdict assumes the two runs' machines were alike.

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::stats::{CONFIDENCE, Interval};
use super::{CompareError, check_version};
use crate::plan::threshold::Metric;
use crate::result::RunResult;
use crate::units::Unit;

/// Fewest earlier results (besides the baseline) that give a run-to-run estimate.
pub(crate) const MIN_EARLIER: usize = 3;

/// The scale on which a rule's whole-run values vary from run to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scale {
    /// Natural log of the value: latency and throughput (a spread in relative terms).
    Log,
    /// The value itself: the error rate (a fraction, often 0).
    Linear,
}

impl Scale {
    /// The scale of a metric's values.
    pub(super) fn of(metric: Metric) -> Scale {
        match metric {
            Metric::Errors | Metric::Checks => Scale::Linear,
            Metric::Latency | Metric::Responses => Scale::Log,
        }
    }
}

/// The run-to-run spread of one rule's whole-run value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Spread {
    /// The scale of `sd`.
    pub(super) scale: Scale,
    /// Sample standard deviation (divisor `k − 1`) of the values over the runs: of `ln(value)`
    /// (a fraction, about the relative spread) or of the value (in its unit).
    pub(super) sd: f64,
    /// Runs the estimate comes from, `k` (earlier results and the baseline).
    pub(super) runs: usize,
}

/// How a rule's interval was widened, on its [`Scale`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Widening {
    /// The widened interval of the change, in the rule's unit (`current − baseline`).
    pub(super) interval: Interval,
    /// The larger half-width of the within-run interval, on the scale (log ratio, or unit).
    pub(super) within: f64,
    /// The run-to-run half-width `t(k−1)·√2·sd`, on the scale.
    pub(super) between: f64,
}

impl Widening {
    /// Whether the run-to-run half-width exceeds the within-run one (so the interval grew).
    pub(super) fn widened(&self) -> bool {
        self.between > self.within
    }
}

impl Spread {
    /// The spread of `values` (one whole-run value per run) on `scale`; `None` with fewer than
    /// [`MIN_EARLIER`] + 1 values, or (log) a value that is not above 0.
    pub(super) fn estimate(values: &[f64], scale: Scale) -> Option<Spread> {
        if values.len() < MIN_EARLIER + 1 {
            return None;
        }
        let on_scale: Vec<f64> = match scale {
            Scale::Log if values.iter().any(|v| *v <= 0.0 || !v.is_finite()) => return None,
            Scale::Log => values.iter().map(|v| v.ln()).collect(),
            Scale::Linear => values.to_vec(),
        };
        let k = on_scale.len() as f64;
        let mean = on_scale.iter().sum::<f64>() / k;
        let variance = on_scale.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / (k - 1.0);
        Some(Spread {
            scale,
            sd: variance.sqrt(),
            runs: values.len(),
        })
    }

    /// The half-width the change between two runs may take from run-to-run variation alone, on
    /// the scale: `t(k − 1, (1 + CONFIDENCE)/2) · √2 · sd` (see the module documentation).
    pub(super) fn half_width(&self) -> f64 {
        let t = StudentsT::new(0.0, 1.0, (self.runs - 1) as f64)
            .expect("valid Student's t")
            .inverse_cdf((1.0 + CONFIDENCE) / 2.0);
        t * std::f64::consts::SQRT_2 * self.sd
    }

    /// `interval` (of `current − baseline`, in the rule's unit) with each side at least
    /// [`Spread::half_width`] from its centre, on the scale: for [`Scale::Log`] the interval is
    /// taken to log ratios `ln(1 + x/baseline)` and back. `None` when the interval cannot be
    /// put on the scale (a baseline not above 0, a bound at or below `-baseline`).
    pub(super) fn widen(&self, interval: Interval, baseline: f64) -> Option<Widening> {
        let log = match self.scale {
            Scale::Linear => false,
            Scale::Log if baseline > 0.0 => true,
            Scale::Log => return None,
        };
        let to = |x: f64| if log { (x / baseline).ln_1p() } else { x };
        let from = |y: f64| if log { y.exp_m1() * baseline } else { y };
        let (low, high) = (to(interval.low), to(interval.high));
        if !low.is_finite() || !high.is_finite() {
            return None;
        }
        let centre = (low + high) / 2.0;
        let between = self.half_width();
        let (below, above) = (centre - low, high - centre);
        Some(Widening {
            interval: Interval {
                low: from(centre - below.max(between)),
                high: from(centre + above.max(between)),
            },
            within: below.max(above),
            between,
        })
    }

    /// A half-width on the scale in words: `±8.1%` (log: `e^h − 1`), or in the rule's unit.
    pub(super) fn format(&self, half_width: f64, unit: &str) -> String {
        match self.scale {
            Scale::Log => format!("±{:.1}%", half_width.exp_m1() * 100.0),
            Scale::Linear => format!("±{}", Unit::from_name(unit).format(half_width)),
        }
    }
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

/// The note of a comparison with a stored baseline: with fewer than [`MIN_EARLIER`] earlier
/// results (`earlier`), that the verdict assumes the two runs' machines were alike; otherwise
/// how much each rule's interval was widened, from `rules`: each rule's label (`latency p(50)`),
/// unit, spread and widening.
pub(super) fn note(
    earlier: usize,
    rules: &[(String, &str, Option<Spread>, Option<Widening>)],
) -> String {
    if earlier < MIN_EARLIER {
        return format!(
            "the verdict assumes that the baseline's machine and this run's were alike: the \
             intervals cover the noise within each run, not between runs; pass {MIN_EARLIER} or \
             more earlier results of the spec to `compare --baseline-history` to widen them by \
             the run-to-run variation ({earlier} given)"
        );
    }
    let parts: Vec<String> = rules
        .iter()
        .map(|(label, unit, spread, widening)| match (spread, widening) {
            (Some(s), Some(w)) if w.widened() => format!(
                "{label} {} (within-run {})",
                s.format(w.between, unit),
                s.format(w.within, unit)
            ),
            (Some(s), Some(w)) => format!(
                "{label} not widened (run-to-run {}, within-run {})",
                s.format(w.between, unit),
                s.format(w.within, unit)
            ),
            (Some(s), None) => format!(
                "{label} run-to-run {}, no interval",
                s.format(s.half_width(), unit)
            ),
            (None, _) => format!("{label} not estimated (a run without a value)"),
        })
        .collect();
    format!(
        "intervals widened by the run-to-run variation over {earlier} earlier results and the \
         baseline (t·√2·sd of the whole-run values): {}",
        parts.join(", ")
    )
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
        let s = Spread::estimate(&[1.0, 2.0, 3.0, 4.0], Scale::Linear).unwrap();
        assert!(close(s.sd, 1.290_994, 1e-6), "{s:?}");
        assert_eq!(s.runs, 4);
        // Log: e^0, e^0.1, e^0.2, e^0.3 have logs 0, 0.1, 0.2, 0.3: sd 0.1290994.
        let values: Vec<f64> = [0.0, 0.1, 0.2, 0.3]
            .iter()
            .map(|y: &f64| y.exp() * 500.0)
            .collect();
        let s = Spread::estimate(&values, Scale::Log).unwrap();
        assert!(close(s.sd, 0.129_099_4, 1e-7), "{s:?}");
    }

    #[test]
    fn too_few_runs_or_non_positive_values_give_no_estimate() {
        assert_eq!(Spread::estimate(&[1.0, 2.0, 3.0], Scale::Linear), None);
        assert_eq!(Spread::estimate(&[1.0, 2.0, 0.0, 3.0], Scale::Log), None);
        assert!(Spread::estimate(&[0.0, 0.0, 0.0, 0.0], Scale::Linear).is_some());
    }

    #[test]
    fn the_half_width_is_t_root_two_sd() {
        // k = 4: t(3, 0.975) = 3.182446; × √2 × 1.290994 = 5.810.
        let s = Spread::estimate(&[1.0, 2.0, 3.0, 4.0], Scale::Linear).unwrap();
        assert!(close(
            s.half_width(),
            3.182_446 * 2f64.sqrt() * 1.290_994,
            1e-5
        ));
        // k = 6, sd 0.05: t(5, 0.975) = 2.570582.
        let s = Spread {
            scale: Scale::Log,
            sd: 0.05,
            runs: 6,
        };
        assert!(close(s.half_width(), 2.570_582 * 2f64.sqrt() * 0.05, 1e-6));
    }

    #[test]
    fn a_narrow_interval_is_widened_around_its_centre_and_a_wide_one_is_kept() {
        let s = Spread {
            scale: Scale::Linear,
            sd: 0.001,
            runs: 6,
        };
        let h = s.half_width(); // 0.0036354
        let w = s
            .widen(
                Interval {
                    low: 0.001,
                    high: 0.003,
                },
                0.0,
            )
            .unwrap();
        assert!(w.widened());
        assert!(close(w.interval.low, 0.002 - h, 1e-12), "{w:?}");
        assert!(close(w.interval.high, 0.002 + h, 1e-12), "{w:?}");
        // Wider than the spread on one side only: that side is kept.
        let w = s
            .widen(
                Interval {
                    low: -0.01,
                    high: 0.0,
                },
                0.0,
            )
            .unwrap();
        assert_eq!(w.interval.low, -0.01);
        assert!(close(w.interval.high, 0.0, 1e-12), "{w:?}");
        assert!(!w.widened());
    }

    #[test]
    fn log_scale_widening_works_on_log_ratios() {
        // Baseline 1000 us, within-run interval of the change [+40, +60] us: log ratios
        // ln 1.04 and ln 1.06, centre 0.04901. sd 0.05 over 6 runs: h = 0.181760.
        let s = Spread {
            scale: Scale::Log,
            sd: 0.05,
            runs: 6,
        };
        let w = s
            .widen(
                Interval {
                    low: 40.0,
                    high: 60.0,
                },
                1000.0,
            )
            .unwrap();
        let centre = (1.04f64.ln() + 1.06f64.ln()) / 2.0;
        let h = 2.570_582 * 2f64.sqrt() * 0.05;
        assert!(
            close(w.interval.low, ((centre - h).exp() - 1.0) * 1000.0, 1e-3),
            "{w:?}"
        );
        assert!(
            close(w.interval.high, ((centre + h).exp() - 1.0) * 1000.0, 1e-3),
            "{w:?}"
        );
        // About [-125, +259] us: a +50 us change is well inside the run-to-run spread.
        assert!(w.interval.low < -120.0 && w.interval.high > 250.0, "{w:?}");
        assert!(
            s.widen(
                Interval {
                    low: 40.0,
                    high: 60.0
                },
                0.0
            )
            .is_none()
        );
        assert!(
            s.widen(
                Interval {
                    low: -1000.0,
                    high: 60.0
                },
                1000.0
            )
            .is_none()
        );
    }

    #[test]
    fn notes_say_what_was_assumed_or_how_much_was_widened() {
        let few = note(2, &[]);
        assert!(few.contains("assumes that the baseline's machine and this run's were alike"));
        assert!(
            few.contains("--baseline-history") && few.contains("(2 given)"),
            "{few}"
        );
        let s = Spread {
            scale: Scale::Log,
            sd: 0.05,
            runs: 6,
        };
        let w = s.widen(
            Interval {
                low: 40.0,
                high: 60.0,
            },
            1000.0,
        );
        let text = note(5, &[("latency p(50)".to_string(), "us", Some(s), w)]);
        assert_eq!(
            text,
            "intervals widened by the run-to-run variation over 5 earlier results and the \
             baseline (t·√2·sd of the whole-run values): latency p(50) ±19.9% (within-run ±1.0%)"
        );
    }
}
