//! `loadgate ab --aa`: A/A calibration. Both sides are the baseline, so every change the pairs
//! show is noise; per rule, the half-width of its 95% interval is the noise of this machine at
//! this run length, i.e. the **minimum detectable effect** (a smaller change leaves 0 inside
//! the interval), and the run length at which that noise would shrink to the rule's allowed
//! change follows from the interval's width falling as `1/√n` in the number of pairs `n`
//! (the Wilcoxon signed-rank interval's width is asymptotically `∝ 1/√n`: Hollander, Wolfe &
//! Chicken, *Nonparametric Statistical Methods*, 3rd ed., 2014, §3.3, like the t interval's).

use crate::compare::{Comparison, RuleState};
use crate::plan::threshold::Metric;
use crate::report::verdict::detectable_change;

/// What A/A pairs say about one rule.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Calibration {
    /// The rule's label, e.g. `latency p(50) +5% floor 50us`.
    pub(super) rule: String,
    /// `true`: `noise` and `allowed` are relative fractions of the baseline (latency,
    /// requests); `false`: absolute fractions (the error rate).
    pub(super) relative: bool,
    /// Half the width of the 95% interval of the change (the minimum detectable effect, as
    /// the reports show it: `report::verdict::detectable_change`); `None` without an interval.
    pub(super) noise: Option<f64>,
    /// The rule's allowed change at the baseline's value, on the same scale as `noise`.
    pub(super) allowed: Option<f64>,
    /// The measured length (seconds) at which `noise` would equal `allowed`:
    /// `measured_s × (noise / allowed)²`.
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
            let relative = v.metric != Metric::Errors;
            let noise = detectable_change(v);
            let allowed = match (v.allowed_change, v.baseline) {
                (Some(a), Some(b)) if relative && b > 0.0 => Some(a / b),
                (Some(a), _) if !relative => Some(a),
                _ => None,
            };
            let needed_s = match (noise, allowed) {
                (Some(h), Some(a)) if a > 0.0 => Some(measured_s * (h / a).powi(2)),
                _ => None,
            };
            Calibration {
                rule: format!("{} {}", v.metric, v.rule),
                relative,
                noise,
                allowed,
                needed_s,
                false_alarm: v.verdict == RuleState::Regressed,
            }
        })
        .collect()
}

/// The calibration as text: a header, one line per rule, e.g.
/// `latency p(50) +5% floor 50us   noise ±0.4%   allowed +8.3%   seen from 0.1 s of load`.
pub(super) fn render(
    calibrations: &[Calibration],
    comparison: &Comparison,
    measured_s: f64,
    epoch_ms: u64,
) -> String {
    let pairs = comparison.paired.as_ref().map_or(0, |p| p.sub_runs);
    let mut text = format!(
        "\nA/A CALIBRATION: both sides are the baseline; {pairs} pairs of {epoch_ms} ms epochs \
         over {measured_s:.1} s\n"
    );
    let width = calibrations.iter().map(|c| c.rule.len()).max().unwrap_or(0);
    for c in calibrations {
        let shown = |x: f64| {
            if c.relative {
                format!("{:.1}%", x * 100.0)
            } else {
                format!("{:.2} points", x * 100.0)
            }
        };
        let noise = c
            .noise
            .map_or("no interval (too few pairs)".to_string(), |h| {
                format!("±{}", shown(h))
            });
        let allowed = c
            .allowed
            .map_or("-".to_string(), |a| format!("+{}", shown(a)));
        let needed = match c.needed_s {
            Some(s) if s <= measured_s => format!("this run is long enough ({s:.1} s would do)"),
            Some(s) => format!("needs about {s:.0} s of measured load"),
            None => "-".to_string(),
        };
        text.push_str(&format!(
            "  {:width$}  noise (minimum detectable effect) {noise}, allowed {allowed}: {needed}{}\n",
            c.rule,
            if c.false_alarm {
                "; FALSE ALARM: regressed on A/A"
            } else {
                ""
            }
        ));
    }
    text.push_str(
        "  (noise: half the 95% interval of the change between identical sides; a change \
         smaller than it reads as unchanged. The noise falls as 1/sqrt(run length).)\n",
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
    fn noise_allowed_and_the_run_length_that_sees_the_allowed_change() {
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
        // p50 of 1000 us, allowed 50 us (5%), interval ±10%: the run of 8 s would have to be
        // (10 / 5)² = 4 times longer. Errors: ±0.2 points against 0.1 allowed.
        let c = comparison(vec![
            verdict(Metric::Latency, 1_000.0, 50.0, [-0.1, 0.1]),
            verdict(Metric::Latency, 1_000.0, 50.0, [-0.01, 0.01]),
            verdict(Metric::Errors, 0.0, 0.001, [-0.002, 0.002]),
        ]);
        let cal = calibrate(&c, 8.0);
        assert!((cal[0].noise.unwrap() - 0.1).abs() < 1e-12);
        assert!((cal[0].allowed.unwrap() - 0.05).abs() < 1e-12);
        assert!((cal[0].needed_s.unwrap() - 32.0).abs() < 1e-9);
        assert!((cal[1].needed_s.unwrap() - 0.32).abs() < 1e-9);
        assert!(!cal[2].relative);
        assert!((cal[2].needed_s.unwrap() - 32.0).abs() < 1e-9);

        let text = render(&cal, &c, 8.0, 250);
        assert!(
            text.contains(
                "noise (minimum detectable effect) ±10.0%, allowed +5.0%: needs about 32 s"
            ),
            "{text}"
        );
        assert!(
            text.contains("this run is long enough (0.3 s would do)"),
            "{text}"
        );
        assert!(
            text.contains("±0.20 points, allowed +0.10 points"),
            "{text}"
        );
        assert!(!text.contains("FALSE ALARM"));
    }
}
