//! The result artifact: what a run measured, versioned and documented, snake_case throughout.
//!
//! Its JSON Schema is generated from these types (`loadgate schema result`, committed as
//! `schema/result.schema.json`). Latencies are in microseconds (`_us`), durations in seconds
//! (`_s`), rates per second. Each target carries its HDR histogram (V2 + DEFLATE, base64), so
//! results can be merged and compared later without loss.
//!
//! - `artifact.rs`: the serialized types, `RESULT_VERSION` and [`schema()`] (a target's
//!   phases in `phases.rs`, its optional measures in `measures.rs`: upstream time, streamed
//!   bodies, gRPC and WebSocket messages);
//! - `build.rs`: [`build()`], the artifact from what the run handed over;
//! - `summary.rs`: histograms summed up (percentiles, phases, upstream and streaming times,
//!   messages), for a run's result and for a merge;
//! - `health.rs`: the load generator's health and the limits that invalidate a measurement
//!   (`health_record.rs`: its types in the artifact);
//! - `flow.rs`: the flows' iterations ([`FlowResult`]), built from a run (merged in
//!   `merge/flows.rs`);
//! - `scenarios.rs`: [`build_scenarios()`], the artifact of a run of scenarios, from each
//!   scenario's run;
//! - `slo.rs`: the SLO verdicts (with tag selectors, per scenario, with a severity);
//! - `io.rs`: [`read()`] (which checks what the types do not) and [`write()`] (through an
//!   [`OutFile`], created before a run), and the histograms' text encoding;
//! - `upgrade.rs`: results of older versions (or written before a field existed) brought up to
//!   date as they are read;
//! - [`merge`]: the results of several shards of one run merged into one;
//! - [`ab`]: the `loadgate ab --out` document, both sides whole and their epochs.

pub mod ab;
mod artifact;
mod build;
mod flow;
mod health;
mod health_record;
mod io;
mod measures;
pub mod merge;
#[cfg(test)]
pub(crate) mod messages_tests;
mod phases;
mod scenario_record;
mod scenarios;
mod slo;
mod source;
mod summary;
mod upgrade;

pub use artifact::{
    CheckResult, Environment, LatencySummary, LoadInfo, MergeInfo, PhaseSummary, RecordedRule,
    RunResult, ShardInfo, SloVerdict, SourceInfo, SpecInfo, TargetResult, TimeSample, TlsResult,
    TransportResult, UdpBuffersResult, schema,
};
pub(crate) use artifact::{RESULT_VERSION, published_schema};
pub use build::build;
pub(crate) use build::build_ab_side;
pub use flow::{FlowResult, FlowStep};
pub use health_record::{Health, HealthLimitsResult, StageHealth};
pub(crate) use io::encode_histogram;
pub use io::{
    MAX_EXACT_INTEGER, OutError, OutFile, ReadError, append_whole, decode_histogram, read, write,
};
pub use measures::{MessagesResult, ServerTimingMetric, StreamingResult, UpstreamResult};
pub use phases::PhasesResult;
pub use scenario_record::ScenarioResult;
pub use scenarios::build_scenarios;
pub(crate) use summary::{
    messages_result, phases_result, streaming_result, summary, upstream_result,
};
