//! The gate's decision and the exit codes: [`Overall`] decides a current result (and its
//! comparison with a baseline), [`Outcome`] is how a command ended, and `Exit` is the one
//! table of the documented exit codes (docs/cli.md, "Exit codes") that both map to. `lib.rs`,
//! the JSON verdict and the reports read them from here.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Comparison, RuleState};
use crate::plan::threshold::Severity;
use crate::result::RunResult;

/// The documented exit codes. When several apply, the first in this order wins:
/// [`Exit::InvalidInput`], [`Exit::RunFailed`], [`Exit::InvalidMeasurement`],
/// [`Exit::SloFailed`], [`Exit::Regressed`], [`Exit::Passed`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// 0: the command succeeded; for `run` and `compare`, every SLO passed and no rule
    /// regressed.
    Passed = 0,
    /// 1: the run completed and at least one SLO failed.
    SloFailed = 1,
    /// 2: an invalid spec, command line or input (a result file that cannot be read, results
    /// that cannot be compared or merged).
    InvalidInput = 2,
    /// 3: the run could not be carried out (the service did not start, a target was
    /// unreachable at start, the result could not be written) or was interrupted.
    RunFailed = 3,
    /// 4: every SLO passed, and a regression rule found a regression against the baseline.
    Regressed = 4,
    /// 5: invalid measurement: the load generator did not apply the planned load.
    InvalidMeasurement = 5,
}

impl Exit {
    /// The process exit code, 0 to 5.
    pub(crate) fn code(self) -> u8 {
        self as u8
    }
}

/// How a command ended, when it ran to the end. Each maps to an `Exit` code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0: the command succeeded; for `run`, every SLO passed.
    Passed,
    /// Exit 1: the run completed and at least one SLO failed.
    SloFailed,
    /// Exit 3: the run was interrupted (Ctrl-C or SIGTERM) before its end.
    Interrupted,
    /// Exit 4: every SLO passed, and a regression rule found a regression against the
    /// baseline. (When an SLO failed too, the outcome is [`Outcome::SloFailed`].)
    Regressed,
    /// Exit 5: the load generator did not apply the planned load (arrival rate short of the plan,
    /// requests started late, or its CPU saturated): the numbers measure the generator.
    InvalidMeasurement,
}

impl Outcome {
    /// The exit code the outcome ends the process with.
    pub(crate) fn exit(self) -> Exit {
        match self {
            Outcome::Passed => Exit::Passed,
            Outcome::SloFailed => Exit::SloFailed,
            Outcome::Interrupted => Exit::RunFailed,
            Outcome::Regressed => Exit::Regressed,
            Outcome::InvalidMeasurement => Exit::InvalidMeasurement,
        }
    }

    /// `Outcome::exit` as the process's exit code.
    pub fn exit_code(self) -> std::process::ExitCode {
        std::process::ExitCode::from(self.exit().code())
    }
}

impl From<Overall> for Outcome {
    fn from(overall: Overall) -> Outcome {
        match overall {
            Overall::Pass => Outcome::Passed,
            Overall::SloFailed => Outcome::SloFailed,
            Overall::Regressed => Outcome::Regressed,
            Overall::InvalidMeasurement => Outcome::InvalidMeasurement,
        }
    }
}

/// The overall verdict of a result, with its baseline when there is one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Overall {
    /// Every SLO passed and no rule regressed: exit 0. SLOs and rules of severity `warn` do
    /// not count: a `warn` SLO that failed or a `warn` rule that regressed is a warning.
    Pass,
    /// At least one SLO failed: exit 1. Wins over `regressed` when both happen: an SLO is an
    /// absolute promise, a regression a relative signal; the rules are still reported.
    SloFailed,
    /// Every SLO passed, and at least one regression rule of severity `fail` regressed: exit 4
    /// ([`Comparison::regressed`]; a `warn` rule's regression is only a warning).
    Regressed,
    /// The current run's (or the baseline's) measurement is invalid (`health.valid` false:
    /// the generator did not apply the planned load), or more than half of `loadgate ab`'s
    /// sub-runs were late for the same reason (`Paired::too_many_late`): exit 5, whatever the
    /// SLOs and rules say.
    InvalidMeasurement,
}

impl Overall {
    /// The verdict of a current result and, when there is a baseline, its comparison.
    pub fn of(current: &RunResult, comparison: Option<&Comparison>) -> Overall {
        let invalid_comparison = |c: &Comparison| {
            c.baseline_invalid || c.paired.as_ref().is_some_and(|p| p.too_many_late())
        };
        if !current.health.valid || comparison.is_some_and(invalid_comparison) {
            Overall::InvalidMeasurement
        } else if !current.passed {
            Overall::SloFailed
        } else if comparison.is_some_and(Comparison::regressed) {
            Overall::Regressed
        } else {
            Overall::Pass
        }
    }

    /// The exit code of the verdict: 0, 1, 4 or 5.
    pub(crate) fn exit(self) -> Exit {
        Outcome::from(self).exit()
    }

    /// `pass`, `slo_failed`, `regressed` or `invalid_measurement`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Overall::Pass => "pass",
            Overall::SloFailed => "slo_failed",
            Overall::Regressed => "regressed",
            Overall::InvalidMeasurement => "invalid_measurement",
        }
    }

    /// The verdict as the reports' headline word: `PASSED`, `FAILED`, `REGRESSED` or
    /// `INVALID MEASUREMENT`.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Overall::Pass => "PASSED",
            Overall::SloFailed => "FAILED",
            Overall::Regressed => "REGRESSED",
            Overall::InvalidMeasurement => "INVALID MEASUREMENT",
        }
    }
}

/// The one-line verdict, e.g. `PASSED: 3/3 SLOs met; no regression (5 rules: 4 unchanged, 1
/// inconclusive)`. Warnings (a `warn` SLO that failed, a `warn` rule that regressed) are
/// counted apart and do not change the word: `PASSED: 2/3 SLOs met, 1 warning; no regression
/// (3 rules: 1 warning, 2 unchanged)`.
pub(crate) fn summary_line(current: &RunResult, comparison: Option<&Comparison>) -> String {
    let overall = Overall::of(current, comparison);
    let failed_with = |severity: Severity| {
        current
            .slo
            .iter()
            .filter(|v| !v.passed && v.severity == severity)
            .count()
    };
    let (total, failed, warned) = (
        current.slo.len(),
        failed_with(Severity::Fail),
        failed_with(Severity::Warn),
    );
    let mut slo = match (total, failed) {
        (0, _) => "no SLOs defined".to_string(),
        (n, 0) => format!("{}/{n} SLOs met", n - warned),
        (n, f) => format!("{f} of {n} SLOs failed"),
    };
    if warned > 0 {
        slo.push_str(&format!(", {}", warnings(warned)));
    }
    let rules = match comparison {
        None => "no baseline to compare with".to_string(),
        Some(c) if c.rules.is_empty() => "no regression rules".to_string(),
        Some(c) => {
            let regressed = c.count(RuleState::Regressed) - c.warnings();
            let mut parts = Vec::new();
            if regressed > 0 {
                parts.push(format!("{regressed} {}", RuleState::Regressed.name()));
            }
            if c.warnings() > 0 {
                parts.push(warnings(c.warnings()));
            }
            for state in [
                RuleState::Inconclusive,
                RuleState::Improved,
                RuleState::Unchanged,
            ] {
                if c.count(state) > 0 {
                    parts.push(format!("{} {}", c.count(state), state.name()));
                }
            }
            let head = if c.regressed() {
                "regression found"
            } else {
                "no regression"
            };
            format!("{head} ({} rules: {})", c.rules.len(), parts.join(", "))
        }
    };
    format!("{}: {slo}; {rules}", overall.word())
}

/// `1 warning`, `2 warnings`.
fn warnings(n: usize) -> String {
    format!("{n} warning{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_the_documented_ones() {
        let codes = [
            (Exit::Passed, 0),
            (Exit::SloFailed, 1),
            (Exit::InvalidInput, 2),
            (Exit::RunFailed, 3),
            (Exit::Regressed, 4),
            (Exit::InvalidMeasurement, 5),
        ];
        for (exit, code) in codes {
            assert_eq!(exit.code(), code, "{exit:?}");
        }
        assert_eq!(Outcome::Interrupted.exit(), Exit::RunFailed);
        assert_eq!(Overall::SloFailed.exit().code(), 1);
        assert_eq!(Overall::Regressed.exit().code(), 4);
        assert_eq!(Overall::InvalidMeasurement.exit().code(), 5);
    }

    #[test]
    fn a_failed_warn_slo_is_a_warning_not_a_failure() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/results/v2-current.json"
        );
        let mut current = crate::result::read(std::path::Path::new(path)).unwrap();
        let n = current.slo.len();
        assert!(current.passed && n >= 2);
        current.slo[0].passed = false;
        current.slo[0].severity = Severity::Warn;
        assert_eq!(Overall::of(&current, None), Overall::Pass);
        assert_eq!(
            summary_line(&current, None),
            format!(
                "PASSED: {}/{n} SLOs met, 1 warning; no baseline to compare with",
                n - 1
            )
        );
        current.slo[1].passed = false;
        current.passed = false;
        assert_eq!(
            summary_line(&current, None),
            format!("FAILED: 1 of {n} SLOs failed, 1 warning; no baseline to compare with")
        );
    }
}
