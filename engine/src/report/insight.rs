//! The console summary's insight lines (vastar's, under `--verbose`): three ratios of latency
//! percentiles, each with a one-word description of the distribution's shape.
//!
//! | insight    | ratio       | description by ratio                                          |
//! |------------|-------------|---------------------------------------------------------------|
//! | `spread`   | p99 / p50   | < 2 narrow, < 5 moderate, < 10 wide, else very wide           |
//! | `tail`     | p99 / p95   | < 1.5 light, < 2 moderate, < 3 heavy, else very heavy         |
//! | `outliers` | p99.9 / p99 | < 1.5 near, < 3 moderate, < 10 far, else very far             |
//!
//! The words describe and never judge: a service whose endpoints differ (a 60 us lookup beside
//! a 5 ms search, as the quickstart's) has a very wide spread by design, and only its SLOs say
//! whether that is wrong. So no word is an alarm (`extreme`, `severe`): the SLO table and the
//! verdict below them are the judgement. The cut-offs are loadgate's rules of thumb, not a
//! standard: a p99 within twice the median is a narrow distribution (a queue of one request
//! ahead doubles a response's time); a p99 half as large again as the p95 means the last
//! percent lies well beyond the rest. A ratio needs enough responses for its upper percentile
//! to differ from the maximum (100 for p99, 1,000 for p99.9); with fewer, the line says so
//! instead of describing it.

use std::fmt::Write as _;

use crate::result::LatencySummary;

/// One insight: its name, its ratio in words, the percentiles, the cut-offs and readings.
struct Insight {
    name: &'static str,
    ratio: &'static str,
    /// Upper and lower percentile of the ratio, microseconds.
    values: fn(&LatencySummary) -> (u64, u64),
    /// The ratio below `cuts[i]` reads `words[i]`; at or above the last, `words[3]`.
    cuts: [f64; 3],
    words: [&'static str; 4],
    /// Responses needed for the upper percentile to be more than the maximum.
    needs: u64,
}

const INSIGHTS: [Insight; 3] = [
    Insight {
        name: "spread",
        ratio: "p99/p50",
        values: |l| (l.p99_us, l.p50_us),
        cuts: [2.0, 5.0, 10.0],
        words: ["narrow", "moderate", "wide", "very wide"],
        needs: 100,
    },
    Insight {
        name: "tail",
        ratio: "p99/p95",
        values: |l| (l.p99_us, l.p95_us),
        cuts: [1.5, 2.0, 3.0],
        words: ["light", "moderate", "heavy", "very heavy"],
        needs: 100,
    },
    Insight {
        name: "outliers",
        ratio: "p99.9/p99",
        values: |l| (l.p99_9_us, l.p99_us),
        cuts: [1.5, 3.0, 10.0],
        words: ["near", "moderate", "far", "very far"],
        needs: 1_000,
    },
];

/// The reading of `ratio` by `cuts` and `words` (see the module documentation).
fn reading(ratio: f64, cuts: &[f64; 3], words: &[&'static str; 4]) -> &'static str {
    let i = cuts.iter().position(|c| ratio < *c).unwrap_or(3);
    words[i]
}

/// The insight lines of a latency summary of `responses` responses.
pub(crate) fn lines(l: &LatencySummary, responses: u64) -> String {
    let mut out = String::from("\n  insight (the shape of the latencies; the SLOs judge them)\n");
    for i in &INSIGHTS {
        let (upper, lower) = (i.values)(l);
        let text = if lower == 0 {
            "-".to_string()
        } else {
            let ratio = upper as f64 / lower as f64;
            let word = if responses < i.needs {
                format!("(too few responses to read: {responses} < {})", i.needs)
            } else {
                reading(ratio, &i.cuts, &i.words).to_string()
            };
            format!("{ratio:>6.2}x  {word}")
        };
        let _ = writeln!(out, "  {:<9} {:<10} {text}", i.name, i.ratio);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(p50: u64, p95: u64, p99: u64, p99_9: u64) -> LatencySummary {
        LatencySummary {
            min_us: 1,
            mean_us: p50 as f64,
            stdev_us: 0.0,
            p50_us: p50,
            p90_us: p95,
            p95_us: p95,
            p99_us: p99,
            p99_9_us: p99_9,
            max_us: p99_9,
            p10_us: None,
            p25_us: None,
            p75_us: None,
            p99_99_us: None,
        }
    }

    #[test]
    fn readings_follow_the_documented_cut_offs() {
        let spread = &INSIGHTS[0];
        assert_eq!(reading(1.99, &spread.cuts, &spread.words), "narrow");
        assert_eq!(reading(2.0, &spread.cuts, &spread.words), "moderate");
        assert_eq!(reading(9.99, &spread.cuts, &spread.words), "wide");
        assert_eq!(reading(10.0, &spread.cuts, &spread.words), "very wide");

        let text = lines(&summary(1_000, 2_000, 3_000, 40_000), 5_000);
        assert!(
            text.contains("spread    p99/p50      3.00x  moderate"),
            "{text}"
        );
        assert!(
            text.contains("tail      p99/p95      1.50x  moderate"),
            "{text}"
        );
        assert!(
            text.contains("outliers  p99.9/p99   13.33x  very far"),
            "{text}"
        );
    }

    #[test]
    fn no_word_alarms() {
        for i in &INSIGHTS {
            for word in i.words {
                assert!(
                    !["extreme", "severe", "critical", "bad"].contains(&word),
                    "{word}"
                );
            }
        }
    }

    #[test]
    fn too_few_responses_are_not_read() {
        let text = lines(&summary(1_000, 1_100, 1_200, 1_300), 500);
        assert!(
            text.contains("tail      p99/p95      1.09x  light"),
            "{text}"
        );
        assert!(
            text.contains("outliers  p99.9/p99    1.08x  (too few responses to read: 500 < 1000)"),
            "{text}"
        );
        let zero = lines(&summary(0, 1, 2, 3), 5_000);
        assert!(zero.contains("spread    p99/p50    -"), "{zero}");
    }
}
