//! What the run hands over: plain data for `result::build` to turn into the artifact, the
//! progress snapshots, and why a run could not be carried out.

use std::time::{Duration, SystemTime};

use crate::measure::{FlowStats, SpanSample, StageStats, TargetStats, WindowVerdict};

/// What a run measured, before it is turned into a result artifact.
#[derive(Debug)]
pub struct RunOutput {
    /// Wall-clock time when measuring started (after the warmup).
    pub(crate) started_at: SystemTime,
    /// The measured window: the planned duration; in count mode, or when the run was stopped
    /// early, from the start of measuring until the last measured request ended.
    pub(crate) elapsed: Duration,
    /// Per target, in the plan's order.
    pub(crate) targets: Vec<TargetStats>,
    /// Per flow, in the plan's order (empty without flows).
    pub(crate) flows: Vec<FlowStats>,
    /// Per stage of the load, in the plan's order.
    pub(crate) stages: Vec<StageStats>,
    /// CPU time (user + system) this process used during each stage, in seconds.
    pub(crate) stage_cpu_s: Vec<f64>,
    /// One sample per second of measuring, each with its histogram (encoded) and its targets'
    /// same second ([`SpanSample::targets`], in the plan's order).
    pub(crate) time_series: Vec<SpanSample>,
    /// One sample per epoch of measuring: of 1 s (the same as `time_series`) unless
    /// `loadgate ab` asked for shorter ones (`Ready::with_epoch`).
    pub(crate) epochs: Vec<SpanSample>,
    /// CPU time this process used during the run: (user, system).
    pub(crate) cpu: (Duration, Duration),
    /// The run was stopped early (Ctrl-C).
    pub(crate) interrupted: bool,
    /// Index (in the plan's `slo`) of the `abort_on_fail` threshold that stopped the run.
    pub(crate) aborted_by: Option<usize>,
    /// Window thresholds' verdicts, indexed like the plan's `slo`.
    pub(crate) windows: Vec<Option<WindowVerdict>>,
    /// Per target: protocol and TLS parameters negotiated by the check at start.
    pub(crate) negotiated: Vec<Negotiated>,
    /// The UDP socket buffers the HTTP/3 endpoints got (the smallest of the workers'); `None`
    /// when no target speaks HTTP/3.
    pub(crate) udp_buffers: Option<crate::udp::UdpBuffers>,
}

/// A snapshot for the progress line, reported a few times a second.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Still in the warmup (nothing is counted yet).
    pub warming_up: bool,
    /// Time since measuring started (zero during the warmup).
    pub elapsed: Duration,
    /// Measured responses so far (complete seconds only).
    pub responses: u64,
    /// Failed requests so far (complete seconds only).
    pub errors: u64,
    /// Responses in the last complete second.
    pub last_second_rps: u64,
    /// Failed requests in the last complete second.
    pub last_second_errors: u64,
    /// Median latency of the last complete second's responses, µs (0 when none); from the
    /// per-second histogram of 2 significant digits, as the time series.
    pub last_second_p50_us: u64,
    /// 99th percentile of the last complete second's responses, µs (0 when none).
    pub last_second_p99_us: u64,
}

/// Why a run could not be carried out.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A target's host name does not resolve.
    #[error("cannot resolve `{endpoint}`: {reason}")]
    Resolve {
        /// The target's host and port, or its URL as written when they come from `${VAR}`
        /// (`TargetPlan::display_endpoint`): never an interpolated value.
        endpoint: String,
        /// The resolver's error.
        reason: String,
    },
    /// The check at start could not connect (TCP, TLS, or the protocol asked for).
    #[error("target `{endpoint}` is unreachable at start: {reason}")]
    Unreachable {
        /// The target's host and port, or its URL as written when they come from `${VAR}`
        /// (`TargetPlan::display_endpoint`): never an interpolated value.
        endpoint: String,
        /// Why, in words.
        reason: String,
    },
    /// loadgate is out of file descriptors (its open-files limit): before the run, for what
    /// it needs, or when its threads or the check at start could not get one.
    #[error("out of file descriptors: {0}")]
    FileLimit(super::FileLimit),
    /// The run's threads or timers could not be started.
    #[error("cannot start the run")]
    Start(#[from] std::io::Error),
}

/// How a target's connections speak, as the check at start negotiated it (every connection
/// of a target uses the same configuration).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Negotiated {
    /// `h1`, `h2` or `h3`.
    pub(crate) protocol: &'static str,
    /// TLS parameters; `None` over cleartext.
    pub(crate) tls: Option<NegotiatedTls>,
}

/// The TLS parameters of a target's connections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NegotiatedTls {
    /// Negotiated version: `1.2` or `1.3` (empty when the check could not tell).
    pub(crate) version: String,
    /// Negotiated cipher suite, e.g. `TLS13_AES_128_GCM_SHA256` (empty when unknown).
    pub(crate) cipher: String,
    /// The name sent as SNI and verified in the certificate.
    pub(crate) server_name: String,
    /// The server's certificate was NOT verified (`insecure_skip_verify`).
    pub(crate) insecure_skip_verify: bool,
}
