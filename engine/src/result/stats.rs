//! What a run records: per-target latency histograms and counters, and per-second samples.
//!
//! Each worker thread owns its own [`TargetStats`] and merges them once at the end
//! (`merge`); nothing here is shared between threads while requests run.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

/// Highest latency a histogram records, in microseconds (one hour); larger values saturate.
pub const MAX_LATENCY_US: u64 = 3_600_000_000;

/// A latency histogram in microseconds with 3 significant digits (HdrHistogram).
pub fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_US, 3).expect("valid histogram bounds")
}

/// Why a request failed. Counted, never stored one by one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ErrorKind {
    /// The connection was refused (nothing listens).
    ConnectRefused,
    /// The connection was not established within the request timeout.
    ConnectTimeout,
    /// Any other failure to connect (unreachable, address error, a host name that does not
    /// resolve).
    ConnectError,
    /// The TLS handshake failed: certificate not trusted or for another name, no common
    /// version or cipher, or the server rejected the client certificate (which TLS 1.3
    /// servers report just after the handshake, before the first response).
    TlsHandshake,
    /// No complete response within the request timeout.
    Timeout,
    /// The connection was reset (ECONNRESET, EPIPE).
    Reset,
    /// The server closed the connection before the response was complete.
    Closed,
    /// The response was not valid HTTP/1.1, or the peer broke the HTTP/2 or TLS protocol.
    Malformed,
    /// The server reset the HTTP/2 stream (RST_STREAM, e.g. `REFUSED_STREAM`).
    StreamReset,
    /// The server closed the HTTP/2 connection with GOAWAY before processing this stream.
    GoAway,
    /// A complete response whose status is not in the target's `expect.status`.
    UnexpectedStatus,
}

impl ErrorKind {
    /// Every kind, in order.
    pub const ALL: [ErrorKind; 11] = [
        ErrorKind::ConnectRefused,
        ErrorKind::ConnectTimeout,
        ErrorKind::ConnectError,
        ErrorKind::TlsHandshake,
        ErrorKind::Timeout,
        ErrorKind::Reset,
        ErrorKind::Closed,
        ErrorKind::Malformed,
        ErrorKind::StreamReset,
        ErrorKind::GoAway,
        ErrorKind::UnexpectedStatus,
    ];

    /// The snake_case name used in results and reports.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::ConnectRefused => "connect_refused",
            ErrorKind::ConnectTimeout => "connect_timeout",
            ErrorKind::ConnectError => "connect_error",
            ErrorKind::TlsHandshake => "tls_handshake",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Reset => "reset",
            ErrorKind::Closed => "closed",
            ErrorKind::Malformed => "malformed",
            ErrorKind::StreamReset => "stream_reset",
            ErrorKind::GoAway => "goaway",
            ErrorKind::UnexpectedStatus => "unexpected_status",
        }
    }
}

/// How long the phases of one request took, in microseconds: what the transport reports with
/// each response.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timing {
    /// The setup of the connection, when this request opened it.
    pub setup: Option<Setup>,
    /// Time to first byte: from writing the request until the first byte of the response
    /// (HTTP/1.1) or its header block (HTTP/2) arrived.
    pub ttfb_us: u64,
    /// Body read: from the first byte (HTTP/1.1) or the header block (HTTP/2) to the last
    /// byte of the response.
    pub body_us: u64,
}

/// How long opening one connection took, in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Setup {
    /// Resolving the host name; `None` when the URL's host is an IP address.
    pub dns_us: Option<u64>,
    /// TCP connect (SYN to established).
    pub connect_us: u64,
    /// TLS handshake; `None` over cleartext.
    pub tls_us: Option<u64>,
    /// The TLS handshake resumed an earlier session.
    pub tls_resumed: bool,
}

/// Phase histograms of one target, in microseconds (3 significant digits): connection setup
/// (DNS, TCP connect, TLS handshake) per connection opened, TTFB and body read per response.
#[derive(Debug, Clone)]
pub struct Phases {
    pub dns_us: Histogram<u64>,
    pub connect_us: Histogram<u64>,
    pub tls_us: Histogram<u64>,
    pub ttfb_us: Histogram<u64>,
    pub body_us: Histogram<u64>,
    /// Connections opened (each has a `connect_us` sample).
    pub connections: u64,
    /// TLS handshakes that resumed a session.
    pub tls_resumed: u64,
}

impl Default for Phases {
    fn default() -> Self {
        Phases {
            dns_us: latency_histogram(),
            connect_us: latency_histogram(),
            tls_us: latency_histogram(),
            ttfb_us: latency_histogram(),
            body_us: latency_histogram(),
            connections: 0,
            tls_resumed: 0,
        }
    }
}

impl Phases {
    /// Records the phases of one complete response.
    #[inline]
    pub fn record(&mut self, timing: &Timing) {
        if let Some(setup) = &timing.setup {
            if let Some(dns) = setup.dns_us {
                self.dns_us.saturating_record(dns);
            }
            self.connect_us.saturating_record(setup.connect_us);
            if let Some(tls) = setup.tls_us {
                self.tls_us.saturating_record(tls);
            }
            self.connections += 1;
            self.tls_resumed += u64::from(setup.tls_resumed);
        }
        self.ttfb_us.saturating_record(timing.ttfb_us);
        self.body_us.saturating_record(timing.body_us);
    }

    /// The phases in report order, with their names: `dns`, `connect`, `tls`, `ttfb`, `body`.
    pub fn named(&self) -> [(&'static str, &Histogram<u64>); 5] {
        [
            ("dns", &self.dns_us),
            ("connect", &self.connect_us),
            ("tls", &self.tls_us),
            ("ttfb", &self.ttfb_us),
            ("body", &self.body_us),
        ]
    }

    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &Phases) {
        for (a, b) in [
            (&mut self.dns_us, &other.dns_us),
            (&mut self.connect_us, &other.connect_us),
            (&mut self.tls_us, &other.tls_us),
            (&mut self.ttfb_us, &other.ttfb_us),
            (&mut self.body_us, &other.body_us),
        ] {
            a.add(b).expect("histograms of equal bounds add");
        }
        self.connections += other.connections;
        self.tls_resumed += other.tls_resumed;
    }
}

/// Counters and the latency histograms of one target (or of all targets, once merged).
#[derive(Debug, Clone)]
pub struct TargetStats {
    /// Latency of every complete response (any status), in microseconds, from when the request
    /// was due: its intended start on the schedule (open model, pacing) or its actual start.
    pub latency_us: Histogram<u64>,
    /// Service time of every complete response, in microseconds: from when the request was
    /// actually started to its last byte.
    pub service_us: Histogram<u64>,
    /// Complete responses by status code (index = code, 0..600).
    pub status: Box<[u64; 600]>,
    /// Failed requests by kind (index = position in [`ErrorKind::ALL`]).
    pub errors: [u64; ErrorKind::ALL.len()],
    /// Request bytes written.
    pub bytes_sent: u64,
    /// Response bytes read (headers and body).
    pub bytes_received: u64,
    /// Per response check (in the target's order): how often it passed and failed.
    pub checks: Vec<[u64; 2]>,
    /// Connection setup and request phases.
    pub phases: Phases,
}

impl Default for TargetStats {
    fn default() -> Self {
        TargetStats {
            latency_us: latency_histogram(),
            service_us: latency_histogram(),
            status: Box::new([0; 600]),
            errors: [0; ErrorKind::ALL.len()],
            bytes_sent: 0,
            bytes_received: 0,
            checks: Vec::new(),
            phases: Phases::default(),
        }
    }
}

impl TargetStats {
    /// Records a complete response: its latency (from when it was due) and service time (from
    /// when it started), both in microseconds.
    #[inline]
    pub fn record_response(
        &mut self,
        status: u16,
        latency_us: u64,
        service_us: u64,
        expected: bool,
    ) {
        self.latency_us.saturating_record(latency_us.max(1));
        self.service_us.saturating_record(service_us.max(1));
        if let Some(count) = self.status.get_mut(usize::from(status)) {
            *count += 1;
        }
        if !expected {
            self.record_error(ErrorKind::UnexpectedStatus);
        }
    }

    /// Records a failed request.
    #[inline]
    pub fn record_error(&mut self, kind: ErrorKind) {
        self.errors[kind as usize] += 1;
    }

    /// Records the outcome of check `index`.
    #[inline]
    pub fn record_check(&mut self, index: usize, passed: bool) {
        if self.checks.len() <= index {
            self.checks.resize(index + 1, [0, 0]);
        }
        self.checks[index][usize::from(!passed)] += 1;
    }

    /// Share of check evaluations that passed; `None` when no check was evaluated.
    pub fn check_pass_rate(&self) -> Option<f64> {
        let (passed, failed) = self.check_totals();
        (passed + failed > 0).then(|| passed as f64 / (passed + failed) as f64)
    }

    /// Check evaluations that passed and failed, over all checks.
    pub fn check_totals(&self) -> (u64, u64) {
        self.checks
            .iter()
            .fold((0, 0), |(p, f), [cp, cf]| (p + cp, f + cf))
    }

    /// Complete responses, any status.
    pub fn responses(&self) -> u64 {
        self.latency_us.len()
    }

    /// Failed requests: transport errors and unexpected statuses.
    pub fn error_count(&self) -> u64 {
        self.errors.iter().sum()
    }

    /// Requests that ended: complete responses plus transport errors.
    pub fn requests(&self) -> u64 {
        self.responses() + self.error_count() - self.errors[ErrorKind::UnexpectedStatus as usize]
    }

    /// Fraction of ended requests that failed, 0.0 when none ended.
    pub fn error_rate(&self) -> f64 {
        match self.requests() {
            0 => 0.0,
            n => self.error_count() as f64 / n as f64,
        }
    }

    /// Status counts, non-zero only, keyed by code.
    pub fn status_counts(&self) -> BTreeMap<u16, u64> {
        (0u16..)
            .zip(self.status.iter())
            .filter(|(_, n)| **n > 0)
            .map(|(code, n)| (code, *n))
            .collect()
    }

    /// Error counts, non-zero only, keyed by [`ErrorKind::name`].
    pub fn error_counts(&self) -> BTreeMap<&'static str, u64> {
        ErrorKind::ALL
            .iter()
            .zip(self.errors.iter())
            .filter(|(_, n)| **n > 0)
            .map(|(kind, n)| (kind.name(), *n))
            .collect()
    }

    /// Adds `other` into `self`: histograms added, counters summed.
    pub fn merge(&mut self, other: &TargetStats) {
        self.latency_us
            .add(&other.latency_us)
            .expect("histograms of equal bounds add");
        self.service_us
            .add(&other.service_us)
            .expect("histograms of equal bounds add");
        for (a, b) in self.status.iter_mut().zip(other.status.iter()) {
            *a += b;
        }
        for (a, b) in self.errors.iter_mut().zip(other.errors.iter()) {
            *a += b;
        }
        self.bytes_sent += other.bytes_sent;
        self.bytes_received += other.bytes_received;
        if self.checks.len() < other.checks.len() {
            self.checks.resize(other.checks.len(), [0, 0]);
        }
        for (a, b) in self.checks.iter_mut().zip(&other.checks) {
            a[0] += b[0];
            a[1] += b[1];
        }
        self.phases.merge(&other.phases);
    }
}

/// What the generator did in one stage of the load: the raw material of its health check.
#[derive(Debug, Clone)]
pub struct StageStats {
    /// Requests started whose due time fell in this stage.
    pub sent: u64,
    /// Open model: arrivals that found every in-flight slot busy and were not sent.
    pub dropped: u64,
    /// Sum of the service times of this stage's requests, in microseconds; divided by the
    /// stage's length it gives the mean number of requests in flight.
    pub busy_us: u64,
    /// How late requests started after they were due, in microseconds (open model and
    /// pacing only; 2 significant digits).
    pub lateness_us: Histogram<u64>,
}

impl Default for StageStats {
    fn default() -> Self {
        StageStats {
            sent: 0,
            dropped: 0,
            busy_us: 0,
            lateness_us: Histogram::new_with_bounds(1, MAX_LATENCY_US, 2)
                .expect("valid histogram bounds"),
        }
    }
}

impl StageStats {
    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &StageStats) {
        self.sent += other.sent;
        self.dropped += other.dropped;
        self.busy_us += other.busy_us;
        self.lateness_us
            .add(&other.lateness_us)
            .expect("histograms of equal bounds add");
    }
}

/// One second of a run, all targets together: what completed in that second.
#[derive(Debug, Clone)]
pub struct SecondStats {
    /// Requests that ended: complete responses plus transport errors.
    pub requests: u64,
    /// Complete responses (any status).
    pub responses: u64,
    /// Failed requests.
    pub errors: u64,
    /// Latency of the responses, in microseconds (2 significant digits: enough for p50/p99).
    pub latency_us: Histogram<u64>,
}

impl Default for SecondStats {
    fn default() -> Self {
        SecondStats {
            requests: 0,
            responses: 0,
            errors: 0,
            latency_us: Histogram::new_with_bounds(1, MAX_LATENCY_US, 2)
                .expect("valid histogram bounds"),
        }
    }
}

impl SecondStats {
    /// The time-series sample of this second.
    pub fn sample(&self, second: u32) -> super::TimeSample {
        let h = &self.latency_us;
        let at = |q| {
            if h.is_empty() {
                0
            } else {
                h.value_at_quantile(q)
            }
        };
        super::TimeSample {
            second,
            responses: self.responses,
            errors: self.errors,
            p50_us: at(0.5),
            p99_us: at(0.99),
            max_us: h.max(),
            p90_us: Some(at(0.90)),
            p95_us: Some(at(0.95)),
            p99_9_us: Some(at(0.999)),
            mean_us: Some(if h.is_empty() { 0.0 } else { h.mean() }),
            requests: Some(self.requests),
        }
    }

    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &SecondStats) {
        self.requests += other.requests;
        self.responses += other.responses;
        self.errors += other.errors;
        self.latency_us
            .add(&other.latency_us)
            .expect("histograms of equal bounds add");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_merge() {
        let mut a = TargetStats::default();
        a.record_response(200, 1_000, 900, true);
        a.record_response(500, 2_000, 1_500, false);
        a.record_error(ErrorKind::Timeout);
        let mut b = TargetStats::default();
        b.record_response(200, 3_000, 100, true);
        b.record_error(ErrorKind::ConnectRefused);
        b.record_check(1, true);
        b.record_check(1, false);
        a.record_check(0, true);
        a.merge(&b);
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
    fn phases_record_setup_only_when_a_connection_was_opened() {
        let mut p = Phases::default();
        let reused = Timing {
            setup: None,
            ttfb_us: 300,
            body_us: 20,
        };
        let opened = Timing {
            setup: Some(Setup {
                dns_us: None,
                connect_us: 80,
                tls_us: Some(900),
                tls_resumed: true,
            }),
            ..reused
        };
        p.record(&reused);
        p.record(&opened);
        let mut q = Phases::default();
        q.record(&opened);
        p.merge(&q);
        assert_eq!(p.ttfb_us.len(), 3);
        assert_eq!(p.body_us.len(), 3);
        assert_eq!(p.connect_us.len(), 2);
        assert_eq!(p.tls_us.len(), 2);
        assert!(p.dns_us.is_empty(), "an IP address is not resolved");
        assert_eq!((p.connections, p.tls_resumed), (2, 2));
        assert!(p.tls_us.equivalent(p.tls_us.max(), 900));
        assert_eq!(
            p.named().map(|(name, _)| name),
            ["dns", "connect", "tls", "ttfb", "body"]
        );
    }
}
