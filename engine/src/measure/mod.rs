//! What a run records: per-target latency histograms and counters ([`TargetStats`], with
//! their request [`Phases`], the [`Upstream`] time that responses reported and their
//! [`Streaming`] bodies), per-stage ([`StageStats`]) and per-epoch and per-second
//! ([`SpanStats`]: all targets per epoch, each target per second) records, why requests failed
//! ([`ErrorKind`]), the threshold aggregates measured on them ([`Measures`], also fed second
//! by second to the window [`Watch`]), and the histograms' text encoding
//! ([`encode_histogram`]). Their histograms are [`Recorder`]s: made at the first sample and
//! grown to the largest, so that a target costs memory for what it measured.
//!
//! A leaf beneath `run` (which records) and `result` (which turns the records into the
//! artifact): it depends on `plan` only. Each worker thread owns its own records and merges
//! them once at the end (`merge`); nothing here is shared between threads while requests run.
//! A response's times ([`ResponseTimes`]) are the exception: the workers hand them over in
//! batches and the calling thread records each target's histograms once for the run.

mod codec;
mod error_code;
mod error_kind;
mod flow;
mod measures;
mod messages;
mod phases;
mod recorder;
mod span;
mod stage;
mod streaming;
mod target;
mod upstream;
mod watch;

use hdrhistogram::Histogram;

pub use codec::decode_histogram;
pub(crate) use codec::encode_histogram;
pub(crate) use error_code::{MAX_CODES_PER_KIND, code_key};
pub(crate) use error_kind::{CodeSpace, ErrorCode, ErrorKind};
pub(crate) use flow::{FlowStats, IterationFailure};
pub(crate) use measures::{Measures, rate};
pub(crate) use messages::{MessageCounts, Messages};
pub(crate) use phases::{Phases, Setup, Timing, ZeroRtt};
pub(crate) use recorder::Recorder;
pub(crate) use span::{SpanSample, SpanStats, merge_targets};
pub(crate) use stage::StageStats;
pub(crate) use streaming::Streaming;
pub(crate) use target::{ResponseTimes, TargetStats};
pub(crate) use upstream::Upstream;
pub(crate) use watch::{Watch, WindowVerdict};

/// A request that started more than this after it was due (microseconds) started late: the
/// generator did not keep to its schedule. The generator's health (`result::health`) allows a
/// p99 lateness up to this per stage; `loadgate ab` drops an epoch in which more than 1% of
/// the requests started late.
pub(crate) const LATE_US: u64 = 10_000;

/// Highest latency a histogram records, in microseconds (one hour); larger values saturate.
pub(crate) const MAX_LATENCY_US: u64 = 3_600_000_000;

/// A latency histogram in microseconds with 3 significant digits (HdrHistogram).
pub(crate) fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_US, 3).expect("valid histogram bounds")
}
