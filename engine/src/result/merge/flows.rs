//! The flows merged: per flow, by name, its iterations and their reasons summed and its
//! iteration-duration histograms added.

use std::collections::BTreeMap;

use super::MergeError;
use crate::measure::{latency_histogram, rate};
use crate::result::{FlowResult, decode_histogram, encode_histogram, summary};

/// The shards' flows merged, in the order first seen: counts summed, histograms added, the
/// rate over the merged window `duration_s`. Errors: a histogram does not decode.
pub(super) fn merge_flows(
    shards: &[&[FlowResult]],
    duration_s: f64,
) -> Result<Vec<FlowResult>, MergeError> {
    let mut merged: Vec<(FlowResult, hdrhistogram::Histogram<u64>)> = Vec::new();
    for (index, flows) in shards.iter().enumerate() {
        for flow in *flows {
            let error = |reason: String| MergeError::Histogram {
                index: index + 1,
                target: flow.name.clone(),
                reason,
            };
            let h = decode_histogram(&flow.histogram).map_err(|e| error(e.to_string()))?;
            let at = match merged.iter().position(|(m, _)| m.name == flow.name) {
                Some(at) => at,
                None => {
                    // Shards of one spec give a flow the same tags: the first shard's kept.
                    let empty = FlowResult {
                        iterations: 0,
                        passed: 0,
                        failed: 0,
                        failed_by_reason: BTreeMap::new(),
                        failed_requests_by_kind: BTreeMap::new(),
                        ..flow.clone()
                    };
                    merged.push((empty, latency_histogram()));
                    merged.len() - 1
                }
            };
            let (out, histogram) = &mut merged[at];
            histogram.add(&h).map_err(|e| error(format!("{e:?}")))?;
            out.iterations += flow.iterations;
            out.passed += flow.passed;
            out.failed += flow.failed;
            for (k, v) in &flow.failed_by_reason {
                *out.failed_by_reason.entry(k.clone()).or_default() += v;
            }
            for (k, v) in &flow.failed_requests_by_kind {
                *out.failed_requests_by_kind.entry(k.clone()).or_default() += v;
            }
        }
    }
    Ok(merged
        .into_iter()
        .map(|(mut flow, histogram)| {
            flow.iterations_per_s = rate(flow.iterations, duration_s);
            flow.duration_us = summary(&histogram);
            flow.histogram = encode_histogram(&histogram);
            flow
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{ErrorKind, FlowStats, IterationFailure};
    use crate::result::FlowStep;

    fn stats(durations_us: &[u64], failures: &[IterationFailure]) -> FlowStats {
        let mut s = FlowStats::default();
        for &d in durations_us {
            s.record(d, None);
        }
        for &f in failures {
            let kind = (f == IterationFailure::Request).then_some(ErrorKind::Timeout);
            s.record(9_000, Some((f, kind)));
        }
        s
    }

    fn result(s: &FlowStats, elapsed_s: f64) -> FlowResult {
        FlowResult {
            tags: Default::default(),
            name: "shop".into(),
            weight: 1,
            steps: vec![FlowStep {
                target: "shop/login".into(),
                group: Some("auth".into()),
            }],
            iterations: s.iterations(),
            passed: s.passed,
            failed: s.failed_count(),
            iterations_per_s: rate(s.iterations(), elapsed_s),
            failed_by_reason: BTreeMap::new(),
            failed_requests_by_kind: BTreeMap::new(),
            duration_us: summary(&s.duration_us),
            histogram: encode_histogram(&s.duration_us),
        }
    }

    #[test]
    fn shards_merge_by_name_with_histograms_added() {
        let a = stats(&[1_000, 2_000], &[IterationFailure::Request]);
        let b = stats(&[3_000], &[IterationFailure::Extraction]);
        let mut ra = result(&a, 10.0);
        ra.failed_by_reason.insert("request".into(), 1);
        let mut rb = result(&b, 8.0);
        rb.failed_by_reason.insert("extraction".into(), 1);
        let merged = merge_flows(&[&[ra], &[rb]], 10.0).unwrap();
        assert_eq!(merged.len(), 1);
        let m = &merged[0];
        assert_eq!((m.iterations, m.passed, m.failed), (5, 3, 2));
        assert!((m.iterations_per_s - 0.5).abs() < 1e-12);
        assert_eq!(m.failed_by_reason.len(), 2);
        let d = m.duration_us.as_ref().unwrap();
        assert_eq!(d.max_us, a.duration_us.highest_equivalent(9_000));
        assert_eq!(decode_histogram(&m.histogram).unwrap().len(), 5);
        assert!((m.failed_rate() - 0.4).abs() < 1e-12);
        let t = m.as_target();
        assert_eq!((t.requests, t.errors), (5, 2));
    }
}
