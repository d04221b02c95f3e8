//! What the reports say about the generator's health, in every format alike: the problems
//! that made a measurement invalid and the load the server did not take (each with its
//! measured values and limits), and the dropped arrivals an `errors` SLO counted.

use crate::result::{RunResult, SloVerdict};

/// The generator's health as notes (Markdown, HTML): each problem that made the
/// measurement invalid, and each shortfall of the server's (dropped arrivals).
pub(super) fn notes(result: &RunResult) -> impl Iterator<Item = String> + '_ {
    let h = &result.health;
    h.problems
        .iter()
        .map(|p| format!("invalid measurement: {p}"))
        .chain(
            h.notes
                .iter()
                .map(|n| format!("the server could not keep up: {n}")),
        )
}

/// What an SLO's name adds when it counted dropped arrivals as failed requests: ` (with N
/// dropped arrivals as failed requests)`, else nothing.
pub(super) fn dropped_suffix(v: &SloVerdict) -> String {
    if v.dropped > 0 {
        format!(" (with {} dropped arrivals as failed requests)", v.dropped)
    } else {
        String::new()
    }
}
