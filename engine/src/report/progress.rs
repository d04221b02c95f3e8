//! The live view on stderr while a run goes on, in plain ASCII: elapsed and remaining time,
//! requests per second, errors, and the p50 and p99 of the last complete second. On a terminal
//! one line redrawn in place once a second (indicatif, no spinner); otherwise (CI logs) lines
//! starting `loadgate: `, a first one at once, one when the warmup ends, and then one every
//! [`PLAIN_INTERVAL`].

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::run::Progress;
use crate::units::format_duration_us;

/// How often a line is printed when stderr is not a terminal (a CI log).
pub(crate) const PLAIN_INTERVAL: Duration = Duration::from_secs(3);

/// How often the line is redrawn on a terminal.
pub(crate) const TERMINAL_INTERVAL: Duration = Duration::from_secs(1);

/// Shows run progress; silent when `quiet`.
pub(crate) struct ProgressLine {
    /// The line on a terminal.
    bar: Option<ProgressBar>,
    /// Lines in a log (stderr is not a terminal and not `quiet`).
    plain: bool,
    /// When a line was last shown, and whether the run was then warming up.
    last: Option<(Instant, bool)>,
    /// Planned measuring time, when the run is bounded by time.
    planned: Option<Duration>,
}

impl ProgressLine {
    /// A progress line for a run of `planned` measuring time (None: bounded by a count).
    pub(crate) fn new(quiet: bool, planned: Option<Duration>) -> ProgressLine {
        let terminal = !quiet && std::io::stderr().is_terminal();
        let bar = terminal.then(|| {
            let bar = ProgressBar::new_spinner();
            bar.set_style(ProgressStyle::with_template("{msg}").expect("a valid template"));
            bar
        });
        ProgressLine {
            bar,
            plain: !quiet && !terminal,
            last: None,
            planned,
        }
    }

    /// Shows `progress` when a line is due (see the module documentation).
    pub(crate) fn update(&mut self, progress: &Progress) {
        let interval = if self.bar.is_some() {
            TERMINAL_INTERVAL
        } else if self.plain {
            PLAIN_INTERVAL
        } else {
            return;
        };
        let now = Instant::now();
        if !due(self.last, now, progress.warming_up, interval) {
            return;
        }
        self.last = Some((now, progress.warming_up));
        let line = line(progress, self.planned);
        match &self.bar {
            Some(bar) => bar.set_message(line),
            None => eprintln!("loadgate: {line}"),
        }
    }

    /// Removes the line from the terminal.
    pub(crate) fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Whether a line is due at `now`: the first one, one when the warmup ends (`warming_up`
/// changed since the `last` line), and one every `interval`.
fn due(last: Option<(Instant, bool)>, now: Instant, warming_up: bool, interval: Duration) -> bool {
    match last {
        None => true,
        Some((at, was_warming_up)) => {
            was_warming_up != warming_up || now.saturating_duration_since(at) >= interval
        }
    }
}

/// The line for `p` of a run of `planned` measuring time (None: bounded by a count), under 80
/// columns: `4/10 s (6 s left)  1250 req/s  2 err/s (7 in all)  p50 1.20ms  p99 4.10ms`, the
/// rates and percentiles of the last complete second (`-` without responses in it).
fn line(p: &Progress, planned: Option<Duration>) -> String {
    if p.warming_up {
        return "warming up (not measured)".to_string();
    }
    let elapsed = p.elapsed.as_secs_f64();
    let time = match planned {
        Some(planned) => {
            let planned = planned.as_secs_f64();
            format!(
                "{:.0}/{planned:.0} s ({:.0} s left)",
                elapsed.min(planned),
                (planned - elapsed).max(0.0)
            )
        }
        None => format!("{elapsed:.0} s"),
    };
    let percentile = |us: u64| {
        if p.last_second_rps == 0 {
            "-".to_string()
        } else {
            format_duration_us(us as f64)
        }
    };
    format!(
        "{time}  {} req/s  {} err/s ({} in all)  p50 {}  p99 {}",
        p.last_second_rps,
        p.last_second_errors,
        p.errors,
        percentile(p.last_second_p50_us),
        percentile(p.last_second_p99_us)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress(elapsed_ms: u64, rps: u64) -> Progress {
        Progress {
            warming_up: false,
            elapsed: Duration::from_millis(elapsed_ms),
            responses: 5_000,
            errors: 7,
            last_second_rps: rps,
            last_second_errors: 2,
            last_second_p50_us: 1_200,
            last_second_p99_us: 4_100,
        }
    }

    #[test]
    fn the_line_gives_time_rate_errors_and_the_last_seconds_percentiles() {
        let planned = Some(Duration::from_secs(10));
        assert_eq!(
            line(&progress(4_200, 1250), planned),
            "4/10 s (6 s left)  1250 req/s  2 err/s (7 in all)  p50 1.20ms  p99 4.10ms"
        );
        assert_eq!(
            line(&progress(12_000, 0), None),
            "12 s  0 req/s  2 err/s (7 in all)  p50 -  p99 -"
        );
        let over = line(&progress(10_400, 9), planned);
        assert!(over.starts_with("10/10 s (0 s left)"), "{over}");
        let warmup = Progress {
            warming_up: true,
            ..progress(0, 0)
        };
        assert_eq!(line(&warmup, planned), "warming up (not measured)");
        assert!(line(&progress(4_200, 1250), planned).is_ascii());
    }

    #[test]
    fn a_line_is_due_first_at_the_warmups_end_and_every_interval() {
        let t0 = Instant::now();
        let every = PLAIN_INTERVAL;
        assert!(due(None, t0, true, every), "the first line at once");
        assert!(!due(Some((t0, true)), t0 + every / 2, true, every));
        assert!(
            due(Some((t0, true)), t0 + every / 2, false, every),
            "measuring began"
        );
        assert!(!due(Some((t0, false)), t0 + every / 2, false, every));
        assert!(due(Some((t0, false)), t0 + every, false, every));
    }
}
