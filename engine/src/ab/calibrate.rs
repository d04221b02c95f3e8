//! `loadgate ab --aa`: A/A calibration. Both sides are the baseline, so every change the
//! sub-runs show is noise. Per rule it prints the **minimum detectable effect at 80% power**
//! (MDE, Bloom 1995): the change the gate would catch 4 times in 5 at the rule's level, the
//! allowance `a` plus `(q(1 − level) + q(0.8))` standard errors on the rule's scale (the
//! verdict's `mde`/`relative_mde`, `compare`). Its noise part `MDE − a` falls as `1/√D` in the
//! measured length `D` (the standard error across sub-runs of `D/R` each does: each sub-run's
//! noise falls as `1/√(D/R)`, and the quantile depends on `R`, not `D`), so the run length at
//! which the noise part equals the allowance, where a change of twice the allowance is caught
//! with 80% power, is `D × ((MDE − a) / a)²`.
//!
//! Scales (worse positive, `compare`'s): latency `ln(1 + x)`, throughput `−ln(1 − x)` of the
//! relative change `x`; the error rate as it is.

use crate::compare::{Comparison, RuleState, RuleVerdict};
use crate::plan::threshold::Metric;

/// What A/A sub-runs say about one rule.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Calibration {
    /// The rule's label, e.g. `latency p(50) +5% floor 50us`.
    pub(super) rule: String,
    /// `true`: `mde` and `allowed` are relative fractions of the baseline (latency,
    /// requests); `false`: absolute fractions (the error rate).
    pub(super) relative: bool,
    /// The worse direction's sign as shown: `-` for throughput (a drop), else `+`.
    pub(super) sign: char,
    /// The minimum detectable effect at 80% power, a magnitude in the worse direction
    /// ([`mde`]); `None` when the rule was not tested.
    pub(super) mde: Option<f64>,
    /// The rule's effective allowance (the floor included), on the same scale as `mde`.
    pub(super) allowed: Option<f64>,
    /// The measured length (seconds) at which the MDE's noise part would equal the allowance:
    /// `measured_s × ((MDE − a) / a)²` on the rule's scale.
    pub(super) needed_s: Option<f64>,
    /// The A/A pair regressed: a false alarm.
    pub(super) false_alarm: bool,
}

/// The calibration of each rule of an A/A `comparison` whose sides measured `measured_s`
/// seconds.
pub(super) fn calibrate(comparison: &Comparison, measured_s: f64) -> Vec<Calibration> {
    comparison
        .rules
        .iter()
        .map(|v| {
            let relative = !matches!(v.metric, Metric::Errors | Metric::Checks);
            let allowed = if relative {
                v.relative_allowed_change
                    .or_else(|| Some(v.allowed_change? / v.baseline.filter(|b| *b > 0.0)?))
            } else {
                v.allowed_change
            };
            let mde = mde(v);
            let needed_s = (|| {
                let a = on_scale(v.metric, allowed?)?;
                let noise = (on_scale(v.metric, mde?)? - a).max(0.0);
                (a > 0.0).then(|| measured_s * (noise / a).powi(2))
            })();
            Calibration {
                rule: format!("{} {}", v.metric, v.rule),
                relative,
                sign: if v.metric == Metric::Responses {
                    '-'
                } else {
                    '+'
                },
                mde,
                allowed,
                needed_s,
                false_alarm: v.verdict == RuleState::Regressed,
            }
        })
        .collect()
}

/// `x` (a relative change, a magnitude in the worse direction; the error rate's absolute
/// change) on the rule's test scale; `None` for a throughput drop of 100% or more.
fn on_scale(metric: Metric, x: f64) -> Option<f64> {
    match metric {
        Metric::Latency => Some(x.ln_1p()),
        Metric::Responses => (x < 1.0).then(|| -(-x).ln_1p()),
        Metric::Errors | Metric::Checks => Some(x),
    }
}

/// The rule's MDE at 80% power as the verdict gives it: `relative_mde`, or `mde` for the error
/// rate; absent for a rule that was not tested.
fn mde(v: &RuleVerdict) -> Option<f64> {
    if matches!(v.metric, Metric::Errors | Metric::Checks) {
        v.mde
    } else {
        v.relative_mde
    }
}

/// The calibration as text: a header, one line per rule, e.g.
/// `latency p(50) +5% floor 50us  MDE (80% power) +12.3%, allowed +8.3%: needs about 20 s`.
/// `sub_runs`: the sub-runs used and left out as late.
pub(super) fn render(
    calibrations: &[Calibration],
    comparison: &Comparison,
    measured_s: f64,
    (sub_runs, late): (usize, usize),
) -> String {
    let mut text = format!(
        "\nA/A CALIBRATION: both sides are the baseline; {sub_runs} sub-runs ({late} late) over \
         {measured_s:.1} s measured\n"
    );
    if let Some(f) = &comparison.family {
        text.push_str(&format!(
            "  {} rules tested together at a {}% false-alarm rate per run ({})\n",
            f.tested,
            f.alpha * 100.0,
            f.method
        ));
    }
    let width = calibrations.iter().map(|c| c.rule.len()).max().unwrap_or(0);
    for c in calibrations {
        let shown = |x: f64| {
            if c.relative {
                format!("{:.1}%", x * 100.0)
            } else {
                format!("{:.2} points", x * 100.0)
            }
        };
        let mde = c.mde.map_or("none (not tested)".to_string(), |m| {
            format!("{}{}", c.sign, shown(m))
        });
        let allowed = c
            .allowed
            .map_or("-".to_string(), |a| format!("{}{}", c.sign, shown(a)));
        let needed = match c.needed_s {
            Some(s) if s <= measured_s => format!("this run is long enough ({s:.1} s would do)"),
            Some(s) => format!("needs about {s:.0} s of measured load"),
            None => "-".to_string(),
        };
        text.push_str(&format!(
            "  {:width$}  MDE (80% power) {mde}, allowed {allowed}: {needed}{}\n",
            c.rule,
            if c.false_alarm {
                "; FALSE ALARM: regressed on A/A"
            } else {
                ""
            }
        ));
    }
    text.push_str(
        "  (MDE: the change caught 4 times in 5 at the rule's level, the allowance plus its \
         noise part; the noise part falls as 1/sqrt(run length). The length shown makes it \
         equal to the allowance: twice the allowance is then caught 4 times in 5.)\n",
    );
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::RuleVerdict;

    fn verdict(metric: Metric, baseline: f64, allowed: f64, ci: [f64; 2]) -> RuleVerdict {
        let text = r#"{"scope":"total","metric":"latency","aggregation":"p(50)",
            "rule":"p(50) +5% floor 50us","unit":"us","baseline":null,"current":null,
            "change":null,"relative_change":null,"max_change":0.05,"floor":50.0,
            "allowed_change":null,"change_ci":null,"relative_change_ci":null,
            "samples":[32,32],"verdict":"unchanged","reason":""}"#;
        let mut v: RuleVerdict = serde_json::from_str(text).unwrap();
        v.metric = metric;
        v.baseline = Some(baseline);
        v.allowed_change = Some(allowed);
        if metric == Metric::Errors {
            v.change_ci = Some(ci);
        } else {
            v.relative_change_ci = Some(ci);
        }
        v
    }

    #[test]
    fn mde_allowed_and_the_run_length_whose_noise_part_equals_the_allowance() {
        let comparison = |rules| Comparison {
            spec_name: "s".to_string(),
            spec_changed: false,
            baseline_invalid: false,
            notes: vec![],
            rules,
            slo: vec![],
            targets: vec![],
            family: None,
            paired: None,
        };
        let with_mde = |mut v: RuleVerdict, mde: f64| {
            if v.metric == Metric::Errors {
                v.mde = Some(mde);
            } else {
                v.relative_mde = Some(mde);
            }
            v
        };
        let wide = [-0.1, 0.1];
        let c = comparison(vec![
            // p50 of 1000 us, allowed 50 us (5%); an MDE of 1.05³ − 1 on the log scale is the
            // allowance plus twice it: the 8 s run would have to be 2² = 4 times longer.
            with_mde(
                verdict(Metric::Latency, 1_000.0, 50.0, wide),
                1.05f64.powi(3) - 1.0,
            ),
            // Noise part 0.2 × the allowance: 0.2² of the run would do.
            with_mde(
                verdict(Metric::Latency, 1_000.0, 50.0, wide),
                1.05f64.powf(1.2) - 1.0,
            ),
            // Errors: MDE 0.3 points against 0.1 allowed, absolute.
            with_mde(verdict(Metric::Errors, 0.0, 0.001, wide), 0.003),
            // Throughput: allowed a 10% drop, MDE a 19% drop (0.9² on the log scale).
            with_mde(verdict(Metric::Responses, 100.0, 10.0, wide), 0.19),
            // Not tested (no MDE in the verdict): nothing to size.
            verdict(Metric::Latency, 1_000.0, 50.0, wide),
        ]);
        let cal = calibrate(&c, 8.0);
        let close = |x: Option<f64>, want: f64| (x.unwrap() - want).abs() < 1e-9;
        assert!(close(cal[0].allowed, 0.05));
        assert!(close(cal[0].needed_s, 32.0), "{:?}", cal[0]);
        assert!(close(cal[1].needed_s, 0.32), "{:?}", cal[1]);
        assert!(!cal[2].relative);
        assert!(close(cal[2].needed_s, 32.0), "{:?}", cal[2]);
        assert!(close(cal[3].needed_s, 8.0), "{:?}", cal[3]);
        assert_eq!((cal[4].mde, cal[4].needed_s), (None, None));

        let text = render(&cal, &c, 8.0, (8, 1));
        assert!(
            text.contains("A/A CALIBRATION: both sides are the baseline; 8 sub-runs (1 late)"),
            "{text}"
        );
        assert!(
            text.contains("MDE (80% power) +15.8%, allowed +5.0%: needs about 32 s"),
            "{text}"
        );
        assert!(
            text.contains("this run is long enough (0.3 s would do)"),
            "{text}"
        );
        assert!(
            text.contains("+0.30 points, allowed +0.10 points"),
            "{text}"
        );
        assert!(
            text.contains("MDE (80% power) -19.0%, allowed -10.0%: this run is long enough"),
            "{text}"
        );
        assert!(!text.contains("FALSE ALARM"));
    }
}
