//! The targets merged: counters summed, every histogram added (latency, phases, upstream
//! time, streamed bodies, gRPC and WebSocket streams) and its summary recomputed from the
//! sum, rates over the merged window, the per-second series merged by wall clock
//! (`series.rs`).

use std::collections::{BTreeMap, HashMap};

use super::MergeError;
use super::series::{Part, merge_series};
use crate::measure::{
    MAX_CODES_PER_KIND, Messages, Phases, Recorder, Streaming, Upstream, latency_histogram, rate,
};
use crate::result::{
    MessagesResult, PhaseSummary, PhasesResult, RunResult, StreamingResult, TargetResult,
    UpstreamResult, decode_histogram, encode_histogram, messages_result, phases_result,
    streaming_result, summary, upstream_result,
};

/// Every target of `results`, matched by name, in the order first seen; `offsets_s` per
/// result (`checks::Starts`). Errors: a histogram does not decode.
pub(super) fn merge_targets(
    results: &[RunResult],
    offsets_s: &[u32],
    duration_s: f64,
) -> Result<Vec<TargetResult>, MergeError> {
    let by_name: Vec<HashMap<&str, &TargetResult>> = results
        .iter()
        .map(|r| r.targets.iter().map(|t| (t.name.as_str(), t)).collect())
        .collect();
    let mut names: Vec<&str> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for r in results {
        for t in &r.targets {
            if seen.insert(t.name.as_str()) {
                names.push(&t.name);
            }
        }
    }
    names
        .iter()
        .map(|name| {
            let parts: Vec<(usize, &TargetResult)> = by_name
                .iter()
                .enumerate()
                .filter_map(|(i, targets)| targets.get(name).map(|&t| (i, t)))
                .collect();
            merge_target(&parts, offsets_s, duration_s)
        })
        .collect()
}

/// One target of several results (`parts`: each result's position, 0-based, and its
/// target; at least one), merged: `total` or a target of each. Errors: a histogram does not
/// decode.
pub(super) fn merge_target(
    parts: &[(usize, &TargetResult)],
    offsets_s: &[u32],
    duration_s: f64,
) -> Result<TargetResult, MergeError> {
    let (_, head) = parts[0];
    let mut out = empty(head);
    let mut histogram = latency_histogram();
    let mut added = Added::default();
    for &(index, t) in parts {
        let error = |reason| MergeError::Histogram {
            index: index + 1,
            target: t.name.clone(),
            reason,
        };
        let h = decode_histogram(&t.histogram).map_err(|e| error(e.to_string()))?;
        histogram.add(&h).map_err(|e| error(format!("{e:?}")))?;
        add_counts(&mut out, t);
        // The first shard's response that offered HTTP/3, as a run keeps its first.
        if let (Some(into), Some(from)) = (&mut out.transport, &t.transport)
            && into.alt_svc_h3.is_none()
        {
            into.alt_svc_h3.clone_from(&from.alt_svc_h3);
        }
        if parts.len() == 1 {
            out.service_time_us = t.service_time_us.clone();
        }
        added.add(index, t)?;
    }
    added.finish(&mut out, duration_s);
    bound_codes(&mut out.errors_by_code);
    out.error_rate = if out.requests > 0 {
        out.errors as f64 / out.requests as f64
    } else {
        0.0
    };
    out.rps = rate(out.responses, duration_s);
    out.latency_us = summary(&histogram);
    out.histogram = encode_histogram(&histogram);
    let series: Vec<Part<'_>> = parts
        .iter()
        .map(|&(index, t)| Part {
            index,
            offset_s: offsets_s[index],
            samples: &t.time_series,
        })
        .collect();
    out.time_series = merge_series(&series, &out.name)?;
    Ok(out)
}

/// A target named as `head`, with nothing counted yet.
fn empty(head: &TargetResult) -> TargetResult {
    TargetResult {
        name: head.name.clone(),
        // Shards of one spec give a target the same tags.
        tags: head.tags.clone(),
        method: head.method.clone(),
        url: head.url.clone(),
        // Shards of one spec have the same threshold.
        slow_threshold_us: head.slow_threshold_us,
        // Shards of one spec ask for the same transport.
        transport: head.transport.clone(),
        ..Default::default()
    }
}

/// Adds the counters of `t` into `out`.
fn add_counts(out: &mut TargetResult, t: &TargetResult) {
    out.requests += t.requests;
    out.responses += t.responses;
    out.errors += t.errors;
    out.bytes_sent += t.bytes_sent;
    out.bytes_received += t.bytes_received;
    for (k, v) in &t.status_codes {
        *out.status_codes.entry(k.clone()).or_default() += v;
    }
    for (k, v) in &t.errors_by_kind {
        *out.errors_by_kind.entry(k.clone()).or_default() += v;
    }
    for (k, v) in &t.errors_by_code {
        *out.errors_by_code.entry(k.clone()).or_default() += v;
    }
    out.checks_passed += t.checks_passed;
    out.checks_failed += t.checks_failed;
    for c in &t.checks {
        match out.checks.iter_mut().find(|o| o.check == c.check) {
            Some(o) => {
                o.passed += c.passed;
                o.failed += c.failed;
            }
            None => out.checks.push(c.clone()),
        }
    }
    if let Some(slow) = t.slow_responses {
        *out.slow_responses.get_or_insert(0) += slow;
    }
}

/// Keeps at most [`MAX_CODES_PER_KIND`] codes per error kind in summed `errors_by_code`
/// (keys `<kind> <code>`), as a run does: the most frequent (ties: the first by key); the
/// others are added to `<kind> other`.
pub(super) fn bound_codes(codes: &mut BTreeMap<String, u64>) {
    let mut by_kind: BTreeMap<String, Vec<(u64, String)>> = BTreeMap::new();
    for (key, &n) in codes.iter() {
        let (kind, code) = key.split_once(' ').unwrap_or((key, ""));
        if code != "other" {
            by_kind
                .entry(kind.to_string())
                .or_default()
                .push((n, key.clone()));
        }
    }
    for (kind, mut keys) in by_kind {
        if keys.len() <= MAX_CODES_PER_KIND {
            continue;
        }
        keys.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let folded: u64 = keys[MAX_CODES_PER_KIND..]
            .iter()
            .map(|(n, key)| {
                codes.remove(key);
                n
            })
            .sum();
        *codes.entry(format!("{kind} other")).or_default() += folded;
    }
}

/// A target's histograms besides its latency (phases, upstream time, streamed bodies,
/// messages), added shard by shard.
#[derive(Default)]
struct Added {
    phases: Option<Phases>,
    upstream: Upstream,
    streaming: Streaming,
    /// The messages' protocol (`grpc`, `ws`: the first shard's that counted messages) and
    /// the messages.
    messages: Option<(String, Messages)>,
}

impl Added {
    /// Adds the histograms of target `t` of shard `index` (0-based). Errors: one does not
    /// decode.
    fn add(&mut self, index: usize, t: &TargetResult) -> Result<(), MergeError> {
        let error = |reason| MergeError::Histogram {
            index: index + 1,
            target: t.name.clone(),
            reason,
        };
        if let Some(p) = &t.phases_us {
            let part = decode_phases(p).map_err(&error)?;
            self.phases.get_or_insert_with(Phases::default).merge(&part);
        }
        if let Some(u) = &t.upstream_us {
            self.upstream.merge(&decode_upstream(u).map_err(&error)?);
        }
        if let Some(s) = &t.streaming {
            self.streaming.merge(&decode_streaming(s).map_err(&error)?);
        }
        if let Some(m) = &t.messages {
            let part = decode_messages(m).map_err(error)?;
            self.messages
                .get_or_insert_with(|| (m.protocol.clone(), Messages::default()))
                .1
                .merge(&part);
        }
        Ok(())
    }

    /// Writes the merged histograms' summaries into `out`, rates over `duration_s`.
    fn finish(&self, out: &mut TargetResult, duration_s: f64) {
        out.phases_us = self.phases.as_ref().map(phases_result);
        out.upstream_us = upstream_result(&self.upstream);
        out.streaming = streaming_result(&self.streaming);
        out.messages = self
            .messages
            .as_ref()
            .map(|(protocol, m)| messages_result(protocol, m, duration_s));
    }
}

/// A target's phase histograms, read back from its result.
fn decode_phases(p: &PhasesResult) -> Result<Phases, String> {
    let mut phases = Phases {
        connections: p.connections_opened,
        tls_resumed: p.tls_resumed,
        zero_rtt_attempted: p.zero_rtt_attempted,
        zero_rtt_accepted: p.zero_rtt_accepted,
        pre_connected: p.pre_connected,
        ..Phases::default()
    };
    for (summary, histogram) in [
        (&p.dns, &mut phases.dns_us),
        (&p.connect, &mut phases.connect_us),
        (&p.tls, &mut phases.tls_us),
        (&p.upgrade, &mut phases.upgrade_us),
        (&p.ttfb, &mut phases.ttfb_us),
        (&p.body, &mut phases.body_us),
        (&p.write, &mut phases.write_us),
    ] {
        if let Some(summary) = summary {
            let h = decode_histogram(&summary.histogram).map_err(|e| e.to_string())?;
            histogram.add(&h).map_err(|e| format!("{e:?}"))?;
        }
    }
    if let Some(summary) = &p.stream_wait {
        phases.stream_wait_us = decode(Some(&summary.histogram))?;
    }
    Ok(phases)
}

/// A histogram of a result, read back as the run records it; empty for `None`.
fn decode(histogram: Option<&str>) -> Result<Recorder, String> {
    let mut h = Recorder::precise();
    if let Some(text) = histogram {
        h.add(&decode_histogram(text).map_err(|e| e.to_string())?)
            .map_err(|e| format!("{e:?}"))?;
    }
    Ok(h)
}

/// A target's streamed responses, read back from its result.
fn decode_streaming(s: &StreamingResult) -> Result<Streaming, String> {
    let histogram =
        |summary: &Option<PhaseSummary>| decode(summary.as_ref().map(|s| &*s.histogram));
    Ok(Streaming {
        responses: s.responses,
        sse_responses: s.sse_responses,
        events: s.events,
        ttfb_us: histogram(&s.ttfb)?,
        event_gap_us: histogram(&s.event_gap)?,
    })
}

/// A target's messages, read back from its result.
fn decode_messages(m: &MessagesResult) -> Result<Messages, String> {
    Ok(Messages {
        exchanges: m.exchanges,
        sent: m.sent,
        received: m.received,
        bytes_sent: m.bytes_sent,
        bytes_received: m.bytes_received,
        stream_duration_us: decode(m.stream_duration.as_ref().map(|s| &*s.histogram))?,
    })
}

/// A target's upstream-time histograms, read back from its result.
fn decode_upstream(u: &UpstreamResult) -> Result<Upstream, String> {
    Ok(Upstream {
        envoy_us: decode(
            u.envoy_upstream_service_time
                .as_ref()
                .map(|s| &*s.histogram),
        )?,
        server_timing_us: u
            .server_timing
            .iter()
            .map(|m| Ok((m.name.clone(), decode(Some(&m.dur.histogram))?)))
            .collect::<Result<_, String>>()?,
        server_timing_dropped: u.server_timing_dropped,
    })
}
