//! The scale a rule is tested on, where **worse is positive** (`stats`' convention), and the
//! way back to the rule's unit:
//!
//! | metric      | change `d`                      | allowance `a`          | back: `current − baseline` |
//! |-------------|---------------------------------|------------------------|----------------------------|
//! | latency     | `ln(current / baseline)`        | `ln(1 + A/b)`          | `b·(e^d − 1)`              |
//! | throughput  | `−ln(current / baseline)`       | `−ln(1 − A/b)`, A < b  | `b·(e^(−d) − 1)`           |
//! | error rate  | `current − baseline` (fraction) | `A`                    | `d`                        |
//!
//! `b` is the baseline's whole-run value and `A = max(max_change × b, floor)` the rule's allowed
//! change in its unit: the floor becomes part of a relative allowance (the *effective
//! allowance*, `A/b`). Latency and throughput vary in proportion to their size, hence logs.

use crate::plan::regression::RegressionRule;
use crate::plan::threshold::Metric;

/// How a rule's values map to the worse-is-positive scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scale {
    /// `ln(current / baseline)`: latency.
    LogRise,
    /// `−ln(current / baseline)`: throughput, where a drop is worse.
    LogDrop,
    /// `current − baseline`: the error rate, a fraction (often 0, so not a ratio).
    Difference,
}

impl Scale {
    /// The scale of a rule's metric.
    pub(super) fn of(rule: &RegressionRule) -> Scale {
        match rule.metric {
            Metric::Latency => Scale::LogRise,
            Metric::Responses => Scale::LogDrop,
            Metric::Errors | Metric::Checks => Scale::Difference,
        }
    }

    /// The change from `baseline` to `current` on the scale; not finite when a log scale meets
    /// a value that is not above 0.
    pub(super) fn change(self, baseline: f64, current: f64) -> f64 {
        match self {
            Scale::LogRise => (current / baseline).ln(),
            Scale::LogDrop => -(current / baseline).ln(),
            Scale::Difference => current - baseline,
        }
    }

    /// The allowance `a` on the scale of an allowed change `allowed` (in the unit, ≥ 0) from a
    /// baseline `b`; `None` when the rule cannot fire: a log scale with `b` not above 0, or a
    /// throughput whose allowed drop is the whole baseline.
    pub(super) fn allowance(self, b: f64, allowed: f64) -> Option<f64> {
        let a = match self {
            Scale::LogRise if b > 0.0 => (allowed / b).ln_1p(),
            Scale::LogDrop if b > 0.0 && allowed < b => -(-allowed / b).ln_1p(),
            Scale::Difference => allowed,
            _ => return None,
        };
        a.is_finite().then_some(a)
    }

    /// A value's position on the scale, against no baseline: `ln(v)`, `−ln(v)` or `v` (not
    /// finite for a log of a value that is not above 0). The change from `b` to `c` is
    /// `position(c) − position(b)`.
    pub(super) fn position(self, value: f64) -> f64 {
        match self {
            Scale::LogRise => value.ln(),
            Scale::LogDrop => -value.ln(),
            Scale::Difference => value,
        }
    }

    /// The value in the rule's unit at position `y` on the scale: inverts [`Scale::position`].
    pub(super) fn value_at(self, y: f64) -> f64 {
        match self {
            Scale::LogRise => y.exp(),
            Scale::LogDrop => (-y).exp(),
            Scale::Difference => y,
        }
    }

    /// `current − baseline` in the rule's unit for a change `d` on the scale from `b`.
    pub(super) fn to_unit(self, b: f64, d: f64) -> f64 {
        match self {
            Scale::LogRise => b * d.exp_m1(),
            Scale::LogDrop => b * (-d).exp_m1(),
            Scale::Difference => d,
        }
    }

    /// A change `d` as the reports show a per-sub-run change: relative (`current / baseline −
    /// 1`) on the log scales, absolute on the difference scale.
    pub(super) fn to_shown(self, d: f64) -> f64 {
        match self {
            Scale::LogRise => d.exp_m1(),
            Scale::LogDrop => (-d).exp_m1(),
            Scale::Difference => d,
        }
    }

    /// Whether [`Scale::to_shown`] is relative.
    pub(super) fn relative(self) -> bool {
        self != Scale::Difference
    }

    /// The interval `[low, high]` on the scale as `[low, high]` of `current − baseline` in the
    /// unit (the throughput's scale runs the other way, so its bounds swap).
    pub(super) fn interval_to_unit(self, b: f64, low: f64, high: f64) -> [f64; 2] {
        let (x, y) = (self.to_unit(b, low), self.to_unit(b, high));
        [x.min(y), x.max(y)]
    }

    /// A magnitude `m` ≥ 0 on the scale (an MDE) as a magnitude in the worse direction in the
    /// unit, like `allowed_change`.
    pub(super) fn magnitude_to_unit(self, b: f64, m: f64) -> f64 {
        self.to_unit(b, m).abs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn worse_is_positive_and_the_way_back_inverts() {
        // Latency 1 ms -> 1.1 ms: +ln 1.1; back: +100 us.
        let d = Scale::LogRise.change(1_000.0, 1_100.0);
        assert!(close(d, 1.1f64.ln()));
        assert!((Scale::LogRise.to_unit(1_000.0, d) - 100.0).abs() < 1e-9);
        // Throughput 1000/s -> 900/s: worse, +ln(10/9); back: -100/s.
        let d = Scale::LogDrop.change(1_000.0, 900.0);
        assert!(d > 0.0 && close(d, (1_000.0f64 / 900.0).ln()));
        assert!((Scale::LogDrop.to_unit(1_000.0, d) + 100.0).abs() < 1e-9);
        assert_eq!(
            Scale::LogDrop.interval_to_unit(1_000.0, -0.1, 0.2),
            [
                Scale::LogDrop.to_unit(1_000.0, 0.2),
                Scale::LogDrop.to_unit(1_000.0, -0.1)
            ]
        );
        assert!(close(Scale::Difference.change(0.01, 0.03), 0.02));
        for scale in [Scale::LogRise, Scale::LogDrop, Scale::Difference] {
            let (b, c) = (800.0, 1_000.0);
            assert!(close(
                scale.position(c) - scale.position(b),
                scale.change(b, c)
            ));
            assert!((scale.value_at(scale.position(c)) - c).abs() < 1e-9);
        }
    }

    #[test]
    fn allowances_take_the_floor_into_a_relative_allowance() {
        // p(95) +5% floor 50us on a 210 us baseline: A = 50 us, a = ln(1 + 50/210).
        assert!(close(
            Scale::LogRise.allowance(210.0, 50.0).unwrap(),
            (260.0f64 / 210.0).ln()
        ));
        // A drop of 10% of the throughput: a = -ln(0.9).
        assert!(close(
            Scale::LogDrop.allowance(1_000.0, 100.0).unwrap(),
            -(0.9f64.ln())
        ));
        // A drop of the whole baseline can never be exceeded: not tested.
        assert_eq!(Scale::LogDrop.allowance(50.0, 50.0), None);
        assert_eq!(Scale::LogRise.allowance(0.0, 50.0), None);
        assert_eq!(Scale::Difference.allowance(0.0, 0.001), Some(0.001));
    }
}
