//! The generator's health limits (`load.health`): past them a measured stage is an invalid
//! measurement, the generator's own shortfall. The defaults were measured on a busy 2-core
//! machine with a CPU hog beside the run (`bench/health_calibration.sh`, table in
//! `bench/README.md`): below them, the latency a run measured was that of the same run on a
//! quiet machine.

use std::time::Duration;

use super::Errors;
use crate::spec;
use crate::units::parse_duration;

/// Default `late_p99`: requests may start up to this late after they were due, at p99 (a
/// late schedule counts only where it shows in the latency: `result/health.rs`).
pub(crate) const DEFAULT_LATE_P99: Duration = Duration::from_millis(10);
/// Default `dropped`: the share of a stage's due arrivals that may be dropped while the
/// generator was behind its schedule, a fraction.
pub(crate) const DEFAULT_DROPPED_SHARE: f64 = 0.01;

/// The resolved `load.health` limits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct HealthLimits {
    /// How late requests may start after they were due, at p99, in microseconds (open model
    /// and pacing). An arrival dropped while the generator was later than this on its
    /// schedule is the generator's drop.
    pub(crate) late_p99_us: u64,
    /// The share of a stage's due arrivals (sent + dropped) that may be dropped while the
    /// generator was behind its schedule, a fraction in `[0, 1]`.
    pub(crate) dropped_share: f64,
}

impl Default for HealthLimits {
    fn default() -> Self {
        HealthLimits {
            late_p99_us: DEFAULT_LATE_P99.as_micros() as u64,
            dropped_share: DEFAULT_DROPPED_SHARE,
        }
    }
}

/// Resolves `load.health` (absent: the defaults); every problem goes to `errors`.
pub(super) fn build(health: Option<&spec::HealthLimits>, errors: &mut Errors) -> HealthLimits {
    let mut limits = HealthLimits::default();
    let Some(health) = health else {
        return limits;
    };
    if let Some(text) = &health.late_p99 {
        match parse_duration(text) {
            Ok(d) => limits.late_p99_us = d.as_micros() as u64,
            Err(e) => errors.push("load.health.late_p99", e),
        }
    }
    if let Some(text) = &health.dropped {
        match percent(text) {
            Ok(share) => limits.dropped_share = share,
            Err(e) => errors.push("load.health.dropped", e),
        }
    }
    limits
}

/// `1%` as 0.01; an error unless it ends in `%` and lies in 0%..=100%.
fn percent(text: &str) -> Result<f64, String> {
    let number = text
        .strip_suffix('%')
        .ok_or_else(|| format!("a share needs the unit `%`, e.g. `1%`, not `{text}`"))?;
    match number.trim().parse::<f64>() {
        Ok(p) if (0.0..=100.0).contains(&p) => Ok(p / 100.0),
        Ok(p) => Err(format!("{p}% is not between 0% and 100%")),
        Err(_) => Err(format!("`{text}` is not a percentage")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::PlanError;

    fn limits(
        late_p99: Option<&str>,
        dropped: Option<&str>,
    ) -> Result<HealthLimits, Vec<PlanError>> {
        let spec = spec::HealthLimits {
            late_p99: late_p99.map(str::to_string),
            dropped: dropped.map(str::to_string),
        };
        let mut errors = Errors::default();
        let limits = build(Some(&spec), &mut errors);
        if errors.0.is_empty() {
            Ok(limits)
        } else {
            Err(errors.0)
        }
    }

    #[test]
    fn limits_are_parsed_and_default_when_absent() {
        assert_eq!(build(None, &mut Errors::default()), HealthLimits::default());
        let l = limits(Some("10ms"), Some("0.5%")).unwrap();
        assert_eq!(l.late_p99_us, 10_000);
        assert!((l.dropped_share - 0.005).abs() < 1e-12);
        let l = limits(None, Some("2%")).unwrap();
        assert_eq!(l.late_p99_us, DEFAULT_LATE_P99.as_micros() as u64);
    }

    #[test]
    fn bad_limits_name_their_field() {
        for (late, dropped, path, message) in [
            (Some("10"), None, "load.health.late_p99", "unit"),
            (None, Some("1"), "load.health.dropped", "`%`"),
            (
                None,
                Some("150%"),
                "load.health.dropped",
                "between 0% and 100%",
            ),
        ] {
            let errors = limits(late, dropped).unwrap_err();
            assert_eq!(errors.len(), 1);
            assert_eq!(errors[0].path, path);
            assert!(errors[0].message.contains(message), "{}", errors[0].message);
        }
    }
}
