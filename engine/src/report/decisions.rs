//! How the rules were decided, in the words every format shares: per rule its one-sided level,
//! its effective allowance and its minimum detectable effect at 80% power; once per comparison
//! the family of rules tested together at one false-alarm rate per run, and the method.
//!
//! The numbers are the comparison's ([`RuleVerdict::level`], [`RuleVerdict::mde`],
//! [`RuleVerdict::relative_allowed_change`], [`Family`]); see `docs/statistics.md` for how
//! they are computed (Holm 1979; Romano & Wolf 2005; the MDE after Bloom 1995).

use crate::compare::{Comparison, Family, RuleVerdict};
use crate::plan::threshold::Metric;
use crate::units::{MISSING, Unit};

/// A level (a fraction) as a percentage with three significant digits, trailing zeros dropped:
/// `5%`, `2.5%`, `1.67%`, `0.278%`.
pub(crate) fn format_level(level: f64) -> String {
    let pct = level * 100.0;
    if !pct.is_finite() || pct <= 0.0 {
        return format!("{pct}%");
    }
    let decimals = (2.0 - pct.log10().floor()).max(0.0) as usize;
    let text = format!("{pct:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        &text
    };
    format!("{text}%")
}

/// The sign of a change in the rule's worse direction: `-` for throughput (a drop), `+` for
/// the rest.
fn worse_sign(r: &RuleVerdict) -> &'static str {
    if r.metric == Metric::Responses {
        "-"
    } else {
        "+"
    }
}

/// A magnitude in the rule's worse direction: for an `errors` rule as a change of the error
/// rate (`+0.210%`: the rule is absolute); else relative with the value in the rule's unit
/// beside it, `+12.3% (900us)`, or the value alone without a relative one.
fn worse_magnitude(r: &RuleVerdict, value: Option<f64>, relative: Option<f64>) -> Option<String> {
    let sign = worse_sign(r);
    let unit = Unit::from_name(&r.unit);
    if r.metric == Metric::Errors {
        return value.map(|v| format!("{sign}{}", unit.format(v)));
    }
    match (relative, value) {
        (Some(rel), Some(v)) => Some(format!("{sign}{:.1}% ({})", rel * 100.0, unit.format(v))),
        (Some(rel), None) => Some(format!("{sign}{:.1}%", rel * 100.0)),
        (None, Some(v)) => Some(format!("{sign}{}", unit.format(v))),
        (None, None) => None,
    }
}

/// Whether the rule's floor, not its relative allowance, sets the allowed change.
fn floor_rules(r: &RuleVerdict) -> bool {
    r.floor > 0.0 && r.baseline.is_some_and(|b| r.floor > r.max_change * b.abs())
}

/// The effective allowance (`allowed_change`, relative `relative_allowed_change`): `+10.0%
/// (730us)`; when the floor sets it, the floor instead of the value, `+24.0% (floor 50us)`;
/// `-10.0% (102.8/s)` for throughput; `+0.100%` for the error rate (`+0.100% (floor)`);
/// [`MISSING`] without a baseline value.
pub(crate) fn format_allowed(r: &RuleVerdict) -> String {
    let Some(allowed) = r.allowed_change else {
        return MISSING.to_string();
    };
    let unit = Unit::from_name(&r.unit);
    let sign = worse_sign(r);
    match (floor_rules(r), r.metric, r.relative_allowed_change) {
        (true, Metric::Errors, _) => format!("{sign}{} (floor)", unit.format(allowed)),
        (true, _, Some(rel)) => {
            format!("{sign}{:.1}% (floor {})", rel * 100.0, unit.format(r.floor))
        }
        (true, _, None) => format!("{sign}{} (floor)", unit.format(allowed)),
        (false, ..) => worse_magnitude(r, Some(allowed), r.relative_allowed_change)
            .unwrap_or_else(|| MISSING.to_string()),
    }
}

/// The minimum detectable effect at 80% power (`relative_mde`, `mde`): `+12.3% (900us)`,
/// `-4.0% (41.1/s)` for throughput, `+0.210%` for the error rate; `not tested` for a
/// rule that was not tested.
pub(crate) fn format_mde(r: &RuleVerdict) -> String {
    worse_magnitude(r, r.mde, r.relative_mde).unwrap_or_else(|| "not tested".to_string())
}

/// The one-sided level of the rule's interval bounds, `0.278%`; [`MISSING`] for a rule that was
/// not tested.
pub(crate) fn format_rule_level(r: &RuleVerdict) -> String {
    r.level.map_or_else(|| MISSING.to_string(), format_level)
}

/// The family's method in words: `Holm`, `max-T step-down`, or its name as written.
fn method_name(family: &Family) -> &str {
    match family.method.as_str() {
        "holm" => "Holm",
        "max-t" => "max-T step-down",
        other => other,
    }
}

/// The decisions of a comparison in one sentence: `18 rules tested together at a 5%
/// false-alarm rate per run (Holm)`, and how many rules could not be tested (`; 2 could not
/// be tested`); without a family (no rule was tested), `none of the 5 rules could be tested
/// (each says why)`; empty without rules.
pub(crate) fn family_sentence(comparison: &Comparison) -> String {
    let Some(family) = &comparison.family else {
        return match comparison.rules.len() {
            0 => String::new(),
            1 => "the rule could not be tested (it says why)".to_string(),
            n => format!("none of the {n} rules could be tested (each says why)"),
        };
    };
    let alpha = format_level(family.alpha);
    let method = method_name(family);
    let mut text = match family.tested {
        0 => format!("no rule could be tested at the {alpha} false-alarm rate per run ({method})"),
        1 => format!("1 rule tested at a {alpha} false-alarm rate per run ({method})"),
        m => format!("{m} rules tested together at a {alpha} false-alarm rate per run ({method})"),
    };
    let untested = comparison.rules.len().saturating_sub(family.tested);
    if untested > 0 && family.tested > 0 {
        text.push_str(&format!("; {untested} could not be tested"));
    }
    text
}

/// How the rules were judged, in a paragraph: the interval, the shared false-alarm rate, the
/// decisions and the minimum detectable effect. Empty without a family.
pub(crate) fn method_paragraph(comparison: &Comparison) -> String {
    let Some(family) = &comparison.family else {
        return String::new();
    };
    let interval = match family.method.as_str() {
        "holm" => {
            "Method: the sides ran in sub-runs, their positions swapped from one sub-run to the \
             next; a rule's change is the mean of its change in each sub-run, with a Student t \
             interval over the sub-runs. The rules share one false-alarm rate per run by Holm's \
             step-down, so each rule's interval is at its own one-sided level."
        }
        "max-t" => {
            "Method: each run's per-second histograms resampled in blocks (a circular block \
             bootstrap, the block length chosen from the data), a rule's statistic taken from \
             the merged histograms. The rules share one false-alarm rate per run by a max-T \
             step-down over all rules resampled together, so each rule's interval is at its own \
             one-sided level."
        }
        _ => {
            "Method: the rules share one false-alarm rate per run, so each rule's interval is at \
             its own one-sided level."
        }
    };
    format!(
        "{interval} A rule regresses only when its whole interval is beyond the allowed change \
         (its relative allowance or its floor, whichever is larger: the effective allowance), \
         is unchanged only when its whole interval is within it, and is inconclusive otherwise. \
         Detectable: the minimum detectable effect at 80% power, the true change that this \
         comparison reports as regressed four times out of five; a smaller one may read as \
         inconclusive."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_have_three_significant_digits() {
        assert_eq!(format_level(0.05), "5%");
        assert_eq!(format_level(0.025), "2.5%");
        assert_eq!(format_level(0.05 / 3.0), "1.67%");
        assert_eq!(format_level(0.05 / 18.0), "0.278%");
        assert_eq!(format_level(0.1), "10%");
        assert_eq!(format_level(0.0125), "1.25%");
        assert_eq!(format_level(0.000_139), "0.0139%");
    }
}
