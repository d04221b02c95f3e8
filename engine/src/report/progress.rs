//! The progress line on stderr while a run goes on: redrawn in place on a terminal
//! (indicatif), a plain line every [`PLAIN_INTERVAL`] otherwise (CI logs).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::run::Progress;

/// How often a plain progress line is printed when stderr is not a terminal.
pub(crate) const PLAIN_INTERVAL: Duration = Duration::from_secs(5);

/// Shows run progress; silent when `quiet`.
pub(crate) struct ProgressLine {
    bar: Option<ProgressBar>,
    plain: bool,
    last_plain: Instant,
    /// Planned measuring time, when the run is bounded by time.
    planned: Option<Duration>,
}

impl ProgressLine {
    /// A progress line for a run of `planned` measuring time (None: bounded by a count).
    pub(crate) fn new(quiet: bool, planned: Option<Duration>) -> ProgressLine {
        let terminal = !quiet && std::io::stderr().is_terminal();
        let bar = terminal.then(|| {
            let bar = ProgressBar::new_spinner();
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg}").expect("a valid template"),
            );
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        ProgressLine {
            bar,
            plain: !quiet && !terminal,
            last_plain: Instant::now(),
            planned,
        }
    }

    /// Shows `progress`.
    pub(crate) fn update(&mut self, progress: &Progress) {
        let line = self.line(progress);
        if let Some(bar) = &self.bar {
            bar.set_message(line);
        } else if self.plain && self.last_plain.elapsed() >= PLAIN_INTERVAL {
            self.last_plain = Instant::now();
            eprintln!("loadgate: {line}");
        }
    }

    fn line(&self, p: &Progress) -> String {
        if p.warming_up {
            return "warming up".to_string();
        }
        let elapsed = match self.planned {
            Some(planned) => format!(
                "{:.0}/{:.0} s",
                p.elapsed.as_secs_f64().min(planned.as_secs_f64()),
                planned.as_secs_f64()
            ),
            None => format!("{:.0} s", p.elapsed.as_secs_f64()),
        };
        format!(
            "{elapsed}  {} responses  {} errors  {} req/s",
            p.responses, p.errors, p.last_second_rps
        )
    }

    /// Removes the line from the terminal.
    pub(crate) fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}
