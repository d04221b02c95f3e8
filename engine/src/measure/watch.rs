//! Thresholds judged while the run goes on: sliding windows ("p99 < 300ms in every 10 s
//! window", k6 #2379) and early aborts (k6's `abortOnFail` with `delayAbortEval`).
//!
//! Fed one second at a time with the run's per-second stats (all targets together, latency at
//! 2 significant digits), so only whole-run thresholds are watched. Memory stays bounded: the
//! last `max window` seconds and a running total.

use std::collections::VecDeque;

use super::{Measures, SpanStats};
use crate::plan::threshold::{Op, Scope, Threshold};

/// The outcome of a window threshold over the run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WindowVerdict {
    /// The first failing window's value, else the worst window's (`None`: nothing measured).
    pub(crate) measured: Option<f64>,
    pub(crate) passed: bool,
    /// Start of the first failing window, seconds into the measured window.
    pub(crate) failed_start_s: Option<u32>,
}

/// Watches the whole-run thresholds that have a window or abort on failure.
pub(crate) struct Watch {
    /// `(index in the plan's slo, threshold)`.
    windowed: Vec<(usize, Threshold)>,
    aborting: Vec<(usize, Threshold)>,
    verdicts: Vec<Option<WindowVerdict>>,
    recent: VecDeque<SpanStats>,
    /// Every whole second so far, merged.
    total: SpanStats,
    seconds: u32,
    longest_window: usize,
}

impl Watch {
    /// Watches `thresholds` (the plan's `slo`, indexes kept).
    pub(crate) fn new(thresholds: &[Threshold]) -> Watch {
        let pick = |keep: fn(&Threshold) -> bool| -> Vec<(usize, Threshold)> {
            thresholds
                .iter()
                .enumerate()
                .filter(|(_, t)| t.scope == Scope::Total && keep(t))
                .map(|(i, t)| (i, t.clone()))
                .collect()
        };
        let windowed = pick(|t| t.window_s.is_some());
        let longest_window = windowed
            .iter()
            .filter_map(|(_, t)| t.window_s)
            .max()
            .unwrap_or(0) as usize;
        Watch {
            aborting: pick(|t| t.abort_on_fail),
            verdicts: vec![None; thresholds.len()],
            windowed,
            recent: VecDeque::with_capacity(longest_window),
            total: SpanStats::default(),
            seconds: 0,
            longest_window,
        }
    }

    /// Whether anything is watched at all.
    pub(crate) fn is_idle(&self) -> bool {
        self.windowed.is_empty() && self.aborting.is_empty()
    }

    /// Takes the next whole second of the measured window. Returns the index (in the plan's
    /// `slo`) of an `abort_on_fail` threshold that now fails, if any.
    pub(crate) fn second(&mut self, stats: &SpanStats) -> Option<usize> {
        self.seconds += 1;
        self.total.merge(stats);
        if self.longest_window > 0 {
            if self.recent.len() == self.longest_window {
                self.recent.pop_front();
            }
            self.recent.push_back(stats.clone());
            for (i, threshold) in &self.windowed {
                let w = threshold.window_s.unwrap_or(1) as usize;
                if self.recent.len() < w {
                    continue;
                }
                let mut merged = SpanStats::default();
                for s in self.recent.iter().skip(self.recent.len() - w) {
                    merged.merge(s);
                }
                let start = self.seconds - w as u32;
                judge_window(&mut self.verdicts[*i], threshold, &merged, w as f64, start);
            }
        }
        let elapsed_s = f64::from(self.seconds);
        self.aborting
            .iter()
            .filter(|(_, t)| elapsed_s >= t.abort_after.as_secs_f64())
            .find(|(i, t)| {
                let failed_window = self.verdicts[*i].as_ref().is_some_and(|v| !v.passed);
                let (measured, _) = Measures::of_seconds(&self.total, elapsed_s).measure(t);
                failed_window || (t.window_s.is_none() && measured.is_some_and(|m| !t.passes(m)))
            })
            .map(|(i, _)| *i)
    }

    /// The window verdicts, indexed like the plan's `slo` (`None` for other thresholds). A run
    /// shorter than a window is judged as one window.
    pub(crate) fn finish(mut self) -> Vec<Option<WindowVerdict>> {
        for (i, threshold) in &self.windowed {
            if self.verdicts[*i].is_none() && self.seconds > 0 {
                let seconds = f64::from(self.seconds);
                judge_window(&mut self.verdicts[*i], threshold, &self.total, seconds, 0);
            }
        }
        self.verdicts
    }
}

/// Folds one window's measurement into a window threshold's verdict.
fn judge_window(
    verdict: &mut Option<WindowVerdict>,
    threshold: &Threshold,
    window: &SpanStats,
    seconds: f64,
    start_s: u32,
) {
    let (measured, _) = Measures::of_seconds(window, seconds).measure(threshold);
    let passed = measured.is_some_and(|m| threshold.passes(m));
    let v = verdict.get_or_insert(WindowVerdict {
        measured,
        passed: true,
        failed_start_s: None,
    });
    if !v.passed {
        return; // The first failing window is the one reported.
    }
    if !passed {
        *v = WindowVerdict {
            measured,
            passed: false,
            failed_start_s: Some(start_s),
        };
        return;
    }
    // All passed so far: keep the worst, the one nearest to failing.
    let worse = match (v.measured, measured, threshold.op) {
        (None, Some(_), _) => true,
        (Some(a), Some(b), Op::Lt | Op::Le) => b > a,
        (Some(a), Some(b), Op::Gt | Op::Ge) => b < a,
        _ => false,
    };
    if worse {
        v.measured = measured;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::threshold::Metric;
    use std::time::Duration;

    fn second(responses: u64, latency_us: u64) -> SpanStats {
        let mut s = SpanStats::default();
        for _ in 0..responses {
            s.requests += 1;
            s.responses += 1;
            s.latency_us.record(latency_us);
        }
        s
    }

    fn threshold(metric: Metric, text: &str, window_s: Option<u32>, abort: bool) -> Threshold {
        let mut t = Threshold::parse(Scope::Total, metric, text).unwrap();
        t.window_s = window_s;
        t.abort_on_fail = abort;
        t
    }

    #[test]
    fn a_bad_stretch_fails_its_window_but_not_the_whole_run() {
        let thresholds = [
            threshold(Metric::Latency, "p(99) < 100ms", Some(3), false),
            threshold(Metric::Latency, "p(90) < 100ms", None, false),
        ];
        let mut watch = Watch::new(&thresholds);
        // 10 seconds at 10 ms, then a 3-second stretch at 500 ms, then 10 ms again.
        for s in 0..16 {
            let slow = (10..13).contains(&s);
            assert_eq!(
                watch.second(&second(100, if slow { 500_000 } else { 10_000 })),
                None
            );
        }
        let verdicts = watch.finish();
        let w = verdicts[0].as_ref().unwrap();
        assert!(!w.passed);
        // The first window holding a slow second starts at second 8 (seconds 8, 9, 10).
        assert_eq!(w.failed_start_s, Some(8));
        assert!(w.measured.unwrap() >= 400_000.0);
        assert_eq!(verdicts[1], None, "not a window threshold");
    }

    #[test]
    fn passing_windows_report_the_worst() {
        let thresholds = [threshold(Metric::Responses, "rate > 50/s", Some(2), false)];
        let mut watch = Watch::new(&thresholds);
        for responses in [100, 100, 60, 100, 100] {
            watch.second(&second(responses, 1_000));
        }
        let v = watch.finish()[0].clone().unwrap();
        assert!(v.passed);
        assert_eq!(v.measured, Some(80.0), "(100 + 60) / 2 s");
    }

    #[test]
    fn a_short_run_is_one_window() {
        let thresholds = [threshold(Metric::Latency, "max < 1ms", Some(10), false)];
        let mut watch = Watch::new(&thresholds);
        watch.second(&second(5, 5_000));
        let v = watch.finish()[0].clone().unwrap();
        assert!(!v.passed);
        assert_eq!(v.failed_start_s, Some(0));
    }

    #[test]
    fn abort_waits_for_its_delay() {
        let mut t = threshold(Metric::Latency, "p(50) < 10ms", None, true);
        t.abort_after = Duration::from_secs(3);
        let mut watch = Watch::new(std::slice::from_ref(&t));
        assert_eq!(watch.second(&second(10, 50_000)), None);
        assert_eq!(watch.second(&second(10, 50_000)), None);
        assert_eq!(watch.second(&second(10, 50_000)), Some(0));
        assert!(!watch.is_idle());
        assert!(Watch::new(&[threshold(Metric::Latency, "max < 1s", None, false)]).is_idle());
    }
}
