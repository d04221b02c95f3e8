//! The console summary's latency histogram coloured by SLO level (vastar's "SLO colour
//! histogram"): eleven levels from `elite` to `violation`, their limits fractions of one
//! reference latency, and the key.
//!
//! The reference latency is the largest limit of the result's latency SLOs that bound latency
//! from above (`<` or `<=`: `p(99) < 200ms`), those of the whole run when it has any, else
//! those of the targets; a response slower than every such limit is a `violation`. Without a
//! latency SLO it is [`DEFAULT_LIMIT_US`], 1 s: Nielsen's limit for the user's flow of thought
//! to stay uninterrupted ("Response Times: The 3 Important Limits", Nielsen Norman Group,
//! 1993), whose 0.1 s "feels instantaneous" limit is the upper limit of the `ok` level.
//!
//! The levels' upper limits are the reference latency times 1/1000, 1/500, 1/200, 1/100, 1/50,
//! 1/20, 1/10, 1/5, 1/2 and 1 (the 1-2-5 series of chart scales, three decades below the
//! limit); beyond it is `violation`. With the default, `elite` is up to 1 ms. The two levels
//! below the limit are `high` (up to half of it) and `close` (up to it): neither is a failure,
//! so neither is named like one; only `violation`, beyond the limit, is.

use std::fmt::Write as _;

use hdrhistogram::Histogram;

use crate::plan::threshold::{Metric, Scope, Threshold};
use crate::result::SloVerdict;
use crate::units::format_duration_us;

/// The reference latency without a latency SLO: 1 s, in microseconds (see the module
/// documentation for its source).
pub(crate) const DEFAULT_LIMIT_US: f64 = 1_000_000.0;

/// One level: its name, its upper limit as a fraction of the reference latency (`None`:
/// beyond it), and its colour (an index of the 256-colour ANSI palette, green to red).
struct Level {
    name: &'static str,
    fraction: Option<f64>,
    color: u8,
}

/// The eleven levels, fastest first.
const LEVELS: [Level; 11] = [
    level("elite", 0.001, 46),
    level("excellent", 0.002, 82),
    level("great", 0.005, 118),
    level("good", 0.01, 154),
    level("fine", 0.02, 190),
    level("fair", 0.05, 226),
    level("ok", 0.1, 220),
    level("moderate", 0.2, 214),
    level("high", 0.5, 208),
    level("close", 1.0, 202),
    Level {
        name: "violation",
        fraction: None,
        color: 196,
    },
];

const fn level(name: &'static str, fraction: f64, color: u8) -> Level {
    Level {
        name,
        fraction: Some(fraction),
        color,
    }
}

/// The reference latency of a result and where it comes from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scale {
    /// Microseconds: the upper limit of `close`.
    pub(crate) limit_us: f64,
    /// In words: the SLO it comes from, or that it is the default.
    pub(crate) source: String,
}

impl Scale {
    /// The scale of a result's SLO verdicts `slo` (see the module documentation).
    pub(crate) fn of(slo: &[SloVerdict]) -> Scale {
        let upper: Vec<_> = slo
            .iter()
            .filter(|v| v.metric == Metric::Latency && bounds_above(v) && v.limit > 0.0)
            .collect();
        let whole: Vec<_> = upper.iter().filter(|v| v.scope == "total").collect();
        let pool = if whole.is_empty() {
            upper.iter().collect()
        } else {
            whole
        };
        match pool.into_iter().max_by(|a, b| a.limit.total_cmp(&b.limit)) {
            Some(v) => Scale {
                limit_us: v.limit,
                source: format!("the SLO `{} latency: {}`", v.scope, v.threshold),
            },
            None => Scale {
                limit_us: DEFAULT_LIMIT_US,
                source: "no latency SLO: loadgate's default, Nielsen's 1 s limit".to_string(),
            },
        }
    }

    /// The index in [`LEVELS`] of a latency of `us` microseconds.
    fn level(&self, us: f64) -> usize {
        LEVELS
            .iter()
            .position(|l| l.fraction.is_some_and(|f| us <= f * self.limit_us))
            .unwrap_or(LEVELS.len() - 1)
    }
}

/// Whether the threshold of `v` bounds its value from above (`<`, `<=`).
fn bounds_above(v: &SloVerdict) -> bool {
    Threshold::parse(Scope::Total, v.metric, &v.threshold).is_ok_and(|t| t.op.bounds_above())
}

/// `text` in the colour of level `index` when `color` (an anstyle style: the ANSI codes of
/// the 256-colour palette), else as it is.
fn paint(text: &str, index: usize, color: bool) -> String {
    if color {
        let style =
            anstyle::Style::new().fg_color(Some(anstyle::Ansi256Color(LEVELS[index].color).into()));
        format!("{style}{text}{style:#}")
    } else {
        text.to_string()
    }
}

/// Up to 10 bars on a logarithmic scale from min to max, each with its share and the level of
/// its upper bound (coloured when `color`), then the key.
pub(crate) fn histogram(h: &Histogram<u64>, scale: &Scale, color: bool) -> String {
    let mut out = bars(h, scale, color);
    out.push_str(&key(scale, color));
    out
}

/// The bars of [`histogram`] without the key: the histogram of `h` (microseconds), up to 10
/// bars on a logarithmic scale from min to max, each with its share and its level.
pub(crate) fn bars(h: &Histogram<u64>, scale: &Scale, color: bool) -> String {
    let (min, max) = (h.min().max(1) as f64, h.highest_equivalent(h.max()) as f64);
    let buckets = if max / min < 1.5 { 1 } else { 10 };
    let ratio = (max / min).powf(1.0 / buckets as f64);
    let mut out = String::new();
    let mut low = min;
    let total = h.len() as f64;
    for i in 0..buckets {
        let high = if i + 1 == buckets { max } else { low * ratio };
        let count = h.count_between(low as u64, high as u64)
            - if i > 0 { h.count_at(low as u64) } else { 0 };
        let share = count as f64 / total;
        let level = scale.level(high);
        let bar = format!("{:<40}", "#".repeat((share * 40.0).round() as usize));
        let _ = writeln!(
            out,
            "  {:>9} .. {:<9} {} {:>5.1}%  {}",
            format_duration_us(low),
            format_duration_us(high),
            paint(&bar, level, color),
            share * 100.0,
            paint(LEVELS[level].name, level, color),
        );
        low = high;
    }
    out
}

/// The levels with their upper limits, and where the limits come from.
fn key(scale: &Scale, color: bool) -> String {
    let entries: Vec<String> = LEVELS
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let limit = match l.fraction {
                Some(f) => format!("<={}", format_duration_us(f * scale.limit_us)),
                None => format!(">{}", format_duration_us(scale.limit_us)),
            };
            format!("{} {limit}", paint(l.name, i, color))
        })
        .collect();
    format!(
        "  levels (a bar's level is its upper bound's; limits from {}):\n    {}\n    {}\n",
        crate::spec::printable(&scale.source),
        entries[..6].join("  "),
        entries[6..].join("  ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Scale {
        fn level_name(&self, us: f64) -> &'static str {
            LEVELS[self.level(us)].name
        }
    }

    fn scale(limit_us: f64) -> Scale {
        Scale {
            limit_us,
            source: String::new(),
        }
    }

    fn latency(scope: &str, threshold: &str, limit: f64) -> SloVerdict {
        SloVerdict {
            scope: scope.to_string(),
            metric: Metric::Latency,
            threshold: threshold.to_string(),
            measured: None,
            unit: "us".to_string(),
            limit,
            passed: true,
            window_s: None,
            failed_window_start_s: None,
            aborted_run: false,
            default: false,
            dropped: 0,
            scope_kind: None,
            tags: Default::default(),
            severity: Default::default(),
        }
    }

    #[test]
    fn the_limit_is_the_largest_upper_latency_slo_of_the_whole_run_first() {
        let whole = [
            latency("total", "p(50) < 5ms", 5_000.0),
            latency("total", "p(99) <= 50ms", 50_000.0),
            latency("total", "min > 1s", 1_000_000.0),
            latency("api", "p(99) < 2s", 2_000_000.0),
        ];
        let s = Scale::of(&whole);
        assert_eq!(s.limit_us, 50_000.0);
        assert_eq!(s.source, "the SLO `total latency: p(99) <= 50ms`");
        let s = Scale::of(&whole[2..]);
        assert_eq!(
            s.limit_us, 2_000_000.0,
            "a target's when the whole run has none"
        );
        let s = Scale::of(&whole[2..3]);
        assert_eq!(s.limit_us, DEFAULT_LIMIT_US, "a lower bound is no limit");
        assert!(s.source.contains("default"), "{}", s.source);
    }

    #[test]
    fn levels_are_fractions_of_the_limit() {
        let s = scale(200_000.0);
        assert_eq!(s.level_name(200.0), "elite");
        assert_eq!(s.level_name(201.0), "excellent");
        assert_eq!(s.level_name(20_000.0), "ok");
        assert_eq!(s.level_name(100_000.0), "high");
        assert_eq!(s.level_name(200_000.0), "close");
        assert_eq!(s.level_name(200_001.0), "violation");
        let d = scale(DEFAULT_LIMIT_US);
        assert_eq!(d.level_name(1_000.0), "elite");
        assert_eq!(d.level_name(100_000.0), "ok");
    }

    #[test]
    fn bars_cover_every_sample_and_colour_only_when_asked() {
        let mut h = crate::measure::latency_histogram();
        for v in 1..=1000u64 {
            h.record(v * 100).unwrap();
        }
        let s = scale(50_000.0);
        let plain = histogram(&h, &s, false);
        let bars: Vec<&str> = plain.lines().take(10).collect();
        let shares: f64 = bars
            .iter()
            .map(|l| {
                let percent = l.split_whitespace().rev().nth(1).unwrap();
                percent.trim_end_matches('%').parse::<f64>().unwrap()
            })
            .sum();
        assert!((shares - 100.0).abs() < 0.6, "{plain}");
        assert!(bars[0].ends_with("  great"), "{plain}");
        assert!(bars[9].ends_with("  violation"), "{plain}");
        assert!(!plain.contains('\x1b'), "{plain}");
        assert!(plain.contains("elite <=50us") && plain.contains("violation >50.00ms"));
        let coloured = histogram(&h, &s, true);
        assert!(
            coloured.contains("\x1b[38;5;196mviolation\x1b[0m"),
            "{coloured}"
        );
        assert!(coloured.contains("\x1b[38;5;46melite\x1b[0m"), "{coloured}");
    }
}
