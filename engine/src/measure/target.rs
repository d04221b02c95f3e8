//! The counters and latency histograms of one target (or of all targets, once merged).

use std::collections::BTreeMap;

use super::error_code::MAX_CODES_PER_KIND;
use super::{
    CodeSpace, ErrorCode, ErrorKind, Messages, Phases, Recorder, Streaming, Timing, Upstream,
};

/// Counters and the latency histograms of one target (or of all targets, once merged).
#[derive(Debug, Clone)]
pub(crate) struct TargetStats {
    /// Latency of every complete response (any status), in microseconds, from when the request
    /// was due: its intended start on the schedule (open model, pacing) or its actual start.
    pub(crate) latency_us: Recorder,
    /// Service time of every complete response, in microseconds: from when the request was
    /// actually started to its last byte.
    pub(crate) service_us: Recorder,
    /// Complete responses by status code (index = code, 0..600).
    pub(crate) status: Box<[u64; 600]>,
    /// Failed requests by kind (index = position in [`ErrorKind::ALL`]).
    pub(crate) errors: [u64; ErrorKind::ALL.len()],
    /// Of the failed requests, those whose peer gave a code, by kind and code: at most
    /// [`MAX_CODES_PER_KIND`] codes per kind, the rest under `(kind, None)` ("other").
    pub(crate) codes: BTreeMap<(ErrorKind, Option<ErrorCode>), u64>,
    /// Request bytes written.
    pub(crate) bytes_sent: u64,
    /// Response bytes read (headers and body).
    pub(crate) bytes_received: u64,
    /// Of the failed requests, those that came with a complete response besides
    /// `unexpected_status`: gRPC calls that ended with a status not expected (`grpc_*`,
    /// counted in `errors` and their response in `status`). A request, counted once.
    pub(crate) answered_errors: u64,
    /// Per response check (in the target's order): how often it passed and failed.
    pub(crate) checks: Vec<[u64; 2]>,
    /// Connection setup and request phases.
    pub(crate) phases: Phases,
    /// Complete responses whose latency reached the target's slow threshold.
    pub(crate) slow: u64,
    /// Upstream time from the responses' headers.
    pub(crate) upstream: Upstream,
    /// Streamed bodies (chunked, Server-Sent Events).
    pub(crate) streaming: Streaming,
    /// gRPC and WebSocket messages (none for plain HTTP targets).
    pub(crate) messages: Messages,
    /// The `h3` entry of the first `Alt-Svc` response header that offered HTTP/3 (e.g.
    /// `h3=":8443"`): the server offers it.
    pub(crate) alt_svc_h3: Option<String>,
}

impl Default for TargetStats {
    fn default() -> Self {
        TargetStats {
            latency_us: Recorder::precise(),
            service_us: Recorder::precise(),
            status: Box::new([0; 600]),
            errors: [0; ErrorKind::ALL.len()],
            codes: BTreeMap::new(),
            bytes_sent: 0,
            bytes_received: 0,
            answered_errors: 0,
            checks: Vec::new(),
            phases: Phases::default(),
            slow: 0,
            upstream: Upstream::default(),
            streaming: Streaming::default(),
            messages: Messages::default(),
            alt_svc_h3: None,
        }
    }
}

/// The times of one complete response of target `target` (its index in the plan), in
/// microseconds: what a worker hands over for [`TargetStats::record_times`], so that each
/// target's histograms are kept once for the run, not once per worker thread.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ResponseTimes {
    pub(crate) target: usize,
    /// From when the request was due: its intended start on the schedule (open model,
    /// pacing) or its actual start.
    pub(crate) latency_us: u64,
    /// From when the request was actually started to its last byte.
    pub(crate) service_us: u64,
    /// Its phases, and its connection's setup when it opened one.
    pub(crate) timing: Timing,
}

impl ResponseTimes {
    /// The times of a response of target `target`: its latency and service time
    /// (microseconds) and its phases.
    #[inline]
    pub(crate) fn new(target: usize, latency_us: u64, service_us: u64, timing: Timing) -> Self {
        ResponseTimes {
            target,
            latency_us,
            service_us,
            timing,
        }
    }
}

impl TargetStats {
    /// Records a complete response's times: latency and service time (at least 1 µs each),
    /// and its phases (with its connection's setup, counted, when it opened one).
    #[inline]
    pub(crate) fn record_times(&mut self, times: &ResponseTimes) {
        self.latency_us.record(times.latency_us.max(1));
        self.service_us.record(times.service_us.max(1));
        self.phases.record(&times.timing);
    }

    /// Counts a complete response by its status, an unexpected one as an error; its times are
    /// recorded apart ([`TargetStats::record_times`]).
    #[inline]
    pub(crate) fn record_response(&mut self, status: u16, expected: bool) {
        if let Some(count) = self.status.get_mut(usize::from(status)) {
            *count += 1;
        }
        if !expected {
            self.record_error(ErrorKind::UnexpectedStatus);
        }
    }

    /// Counts a complete response as slow when its latency (microseconds) reached `slow_us`,
    /// the target's threshold, if it has one.
    #[inline]
    pub(crate) fn record_slow(&mut self, latency_us: u64, slow_us: Option<u64>) {
        if let Some(slow_us) = slow_us {
            self.slow += u64::from(latency_us >= slow_us);
        }
    }

    /// Records a failed request.
    #[inline]
    pub(crate) fn record_error(&mut self, kind: ErrorKind) {
        self.errors[kind as usize] += 1;
    }

    /// Counts the code the peer gave with a failure of `kind` (already counted by
    /// [`TargetStats::record_error`]), if it gave one. Called on failures only: the map is
    /// not touched on the path of a response.
    #[inline]
    pub(crate) fn record_error_code(&mut self, kind: ErrorKind, code: Option<ErrorCode>) {
        if let Some(code) = code {
            self.add_code(kind, Some(code), 1);
        }
    }

    /// Adds `n` failures of `kind` with `code` (`None`: other): a code not counted yet
    /// becomes one of the kind's [`MAX_CODES_PER_KIND`] while there is room, else is counted
    /// under other.
    fn add_code(&mut self, kind: ErrorKind, code: Option<ErrorCode>, n: u64) {
        if let Some(count) = self.codes.get_mut(&(kind, code)) {
            *count += n;
            return;
        }
        let first = ErrorCode {
            space: CodeSpace::H2,
            value: 0,
        };
        let last = ErrorCode {
            space: CodeSpace::WebSocket,
            value: u64::MAX,
        };
        let full = code.is_some()
            && self
                .codes
                .range((kind, Some(first))..=(kind, Some(last)))
                .count()
                >= MAX_CODES_PER_KIND;
        *self
            .codes
            .entry((kind, if full { None } else { code }))
            .or_default() += n;
    }

    /// Keeps `alt_svc_h3` (the `h3` entry of a response's `Alt-Svc`, empty when it had
    /// none) if it is the first seen. Allocates only then.
    #[inline]
    pub(crate) fn note_alt_svc(&mut self, alt_svc_h3: &[u8]) {
        if self.alt_svc_h3.is_none() && !alt_svc_h3.is_empty() {
            self.alt_svc_h3 = Some(String::from_utf8_lossy(alt_svc_h3).into_owned());
        }
    }

    /// Records the outcome of check `index`.
    #[inline]
    pub(crate) fn record_check(&mut self, index: usize, passed: bool) {
        if self.checks.len() <= index {
            self.checks.resize(index + 1, [0, 0]);
        }
        self.checks[index][usize::from(!passed)] += 1;
    }

    /// Share of check evaluations that passed; `None` when no check was evaluated.
    pub(crate) fn check_pass_rate(&self) -> Option<f64> {
        let (passed, failed) = self.check_totals();
        (passed + failed > 0).then(|| passed as f64 / (passed + failed) as f64)
    }

    /// Check evaluations that passed and failed, over all checks.
    pub(crate) fn check_totals(&self) -> (u64, u64) {
        self.checks
            .iter()
            .fold((0, 0), |(p, f), [cp, cf]| (p + cp, f + cf))
    }

    /// Complete responses, any status.
    pub(crate) fn responses(&self) -> u64 {
        self.latency_us.len()
    }

    /// Failed requests: transport errors and unexpected statuses.
    pub(crate) fn error_count(&self) -> u64 {
        self.errors.iter().sum()
    }

    /// Requests that ended: complete responses plus transport errors (a failure that came
    /// with a response, an unexpected status or a gRPC status, is its response's request).
    pub(crate) fn requests(&self) -> u64 {
        self.responses() + self.error_count()
            - self.errors[ErrorKind::UnexpectedStatus as usize]
            - self.answered_errors
    }

    /// Fraction of ended requests that failed, 0.0 when none ended.
    pub(crate) fn error_rate(&self) -> f64 {
        match self.requests() {
            0 => 0.0,
            n => self.error_count() as f64 / n as f64,
        }
    }

    /// Status counts, non-zero only, keyed by code.
    pub(crate) fn status_counts(&self) -> BTreeMap<u16, u64> {
        (0u16..)
            .zip(self.status.iter())
            .filter(|(_, n)| **n > 0)
            .map(|(code, n)| (code, *n))
            .collect()
    }

    /// Error counts, non-zero only, keyed by [`ErrorKind::name`].
    pub(crate) fn error_counts(&self) -> BTreeMap<&'static str, u64> {
        ErrorKind::ALL
            .iter()
            .zip(self.errors.iter())
            .filter(|(_, n)| **n > 0)
            .map(|(kind, n)| (kind.name(), *n))
            .collect()
    }

    /// Adds `other` into `self`: histograms added, counters summed.
    pub(crate) fn merge(&mut self, other: &TargetStats) {
        self.latency_us.merge(&other.latency_us);
        self.service_us.merge(&other.service_us);
        for (a, b) in self.status.iter_mut().zip(other.status.iter()) {
            *a += b;
        }
        for (a, b) in self.errors.iter_mut().zip(other.errors.iter()) {
            *a += b;
        }
        self.bytes_sent += other.bytes_sent;
        self.bytes_received += other.bytes_received;
        self.answered_errors += other.answered_errors;
        if self.checks.len() < other.checks.len() {
            self.checks.resize(other.checks.len(), [0, 0]);
        }
        for (a, b) in self.checks.iter_mut().zip(&other.checks) {
            a[0] += b[0];
            a[1] += b[1];
        }
        self.phases.merge(&other.phases);
        self.slow += other.slow;
        self.upstream.merge(&other.upstream);
        self.streaming.merge(&other.streaming);
        self.messages.merge(&other.messages);
        for (&(kind, code), &n) in &other.codes {
            self.add_code(kind, code, n);
        }
        if self.alt_svc_h3.is_none() {
            self.alt_svc_h3.clone_from(&other.alt_svc_h3);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_merge() {
        let mut a = TargetStats::default();
        let times = |latency_us, service_us| ResponseTimes {
            target: 0,
            latency_us,
            service_us,
            timing: Timing::default(),
        };
        a.record_response(200, true);
        a.record_times(&times(1_000, 900));
        a.record_response(500, false);
        a.record_times(&times(2_000, 1_500));
        a.record_error(ErrorKind::Timeout);
        let mut b = TargetStats::default();
        b.record_response(200, true);
        b.record_times(&times(3_000, 100));
        b.record_error(ErrorKind::ConnectRefused);
        b.record_check(1, true);
        b.record_check(1, false);
        a.record_check(0, true);
        a.record_slow(2_000, Some(2_000));
        a.record_slow(1_999, Some(2_000));
        b.record_slow(3_000, Some(2_000));
        b.record_slow(9_000, None);
        a.merge(&b);
        assert_eq!(a.slow, 2);
        assert_eq!(a.checks, vec![[1, 0], [1, 1]]);
        assert_eq!(a.check_totals(), (2, 1));
        assert_eq!(a.responses(), 3);
        assert_eq!(a.requests(), 5);
        assert_eq!(a.error_count(), 3);
        assert!((a.error_rate() - 0.6).abs() < 1e-12);
        assert_eq!(a.status_counts(), BTreeMap::from([(200, 2), (500, 1)]));
        assert_eq!(
            a.error_counts(),
            BTreeMap::from([
                ("connect_refused", 1),
                ("timeout", 1),
                ("unexpected_status", 1)
            ])
        );
        assert!(a.latency_us.equivalent(a.latency_us.max(), 3_000));
        assert!(a.latency_us.equivalent(a.latency_us.min(), 1_000));
        assert!(a.service_us.equivalent(a.service_us.max(), 1_500));
    }

    #[test]
    fn codes_are_bounded_per_kind_and_merged() {
        let code = |value| {
            Some(ErrorCode {
                space: CodeSpace::H3,
                value,
            })
        };
        let mut a = TargetStats::default();
        a.record_error_code(ErrorKind::Timeout, None);
        assert!(
            a.codes.is_empty(),
            "a failure without a code is not counted here"
        );
        for value in 0..20 {
            a.record_error_code(ErrorKind::StreamReset, code(value));
        }
        a.record_error_code(ErrorKind::StreamReset, code(3));
        a.record_error_code(ErrorKind::Closed, code(99));
        let stream_reset = |s: &TargetStats| {
            s.codes
                .iter()
                .filter(|((kind, _), _)| *kind == ErrorKind::StreamReset)
                .map(|((_, code), n)| (code.map(|c| c.value), *n))
                .collect::<Vec<_>>()
        };
        let counted = stream_reset(&a);
        assert_eq!(counted.len(), MAX_CODES_PER_KIND + 1);
        assert_eq!(counted[0], (None, 4), "codes 16..20 are other");
        assert!(counted.contains(&(Some(3), 2)));
        assert_eq!(
            a.codes[&(ErrorKind::Closed, code(99))],
            1,
            "its own kind's room"
        );
        let mut b = TargetStats::default();
        b.record_error_code(ErrorKind::StreamReset, code(3));
        b.record_error_code(ErrorKind::StreamReset, code(500));
        b.record_error_code(ErrorKind::GoAway, code(0x100));
        b.note_alt_svc(b"");
        assert_eq!(b.alt_svc_h3, None);
        b.note_alt_svc(b"h3=\":8443\"");
        b.note_alt_svc(b"h3=\":9443\"");
        a.merge(&b);
        let merged = stream_reset(&a);
        assert_eq!(merged.len(), MAX_CODES_PER_KIND + 1, "still bounded");
        assert_eq!(merged[0], (None, 5), "the new code 500 joined other");
        assert!(merged.contains(&(Some(3), 3)), "counts summed");
        assert_eq!(a.codes[&(ErrorKind::GoAway, code(0x100))], 1);
        assert_eq!(
            a.alt_svc_h3.as_deref(),
            Some("h3=\":8443\""),
            "the first kept"
        );
    }
}
