//! Flows: multi-step journeys of a virtual user (k6's scenarios with `group`s, Artillery's
//! `flows`). Each step is a request, planned as a target of its own (`plan.targets`, named
//! `flow/step`), so that it is measured and reported like one; what a flow adds is planned
//! here: the request [`RequestTemplate`] with `{{var}}` slots compiled once, the
//! [`Extractor`]s run on the response, think time, the rows of a data file, and what a failed
//! step does to its iteration.
//!
//! Variables are numbered per flow: a slot is an index into [`FlowPlan::vars`]; the run keeps
//! one value per slot per virtual user, and a template or extractor names slots, never
//! strings.

mod build;
mod data;
mod extract;
mod plain;
mod request;
mod template;
#[cfg(test)]
mod tests;

pub(crate) use super::target::{DataOrder, DataPlan, Generators, Part, RequestTemplate};
pub(super) use build::build_flows;
pub(super) use plain::build_target;

use super::ThinkTime;

/// A flow: an ordered list of steps that a virtual user runs, start to end, as one iteration.
#[derive(Debug, Clone)]
pub(crate) struct FlowPlan {
    /// The flow's `name`, unique within the spec.
    pub(crate) name: String,
    /// Relative share of iterations that run this flow (default 1).
    pub(crate) weight: u32,
    /// The steps, in order.
    pub(crate) steps: Vec<StepPlan>,
    /// What a failed step does to the rest of its iteration.
    pub(crate) on_error: OnError,
    /// Keep a cookie jar per virtual user (RFC 6265): `Set-Cookie` of a response is stored,
    /// and a matching `Cookie` header sent with the iteration's later requests; each
    /// iteration starts with an empty jar (default `true`).
    pub(crate) cookies: bool,
    /// Rows of a data file, each feeding the variables of one iteration.
    pub(crate) data: Option<DataPlan>,
    /// The flow's variables, by slot: data columns first (in the file's order), then the
    /// extractors' variables (in step order), each name once.
    pub(crate) vars: Vec<String>,
    /// Its tags (its scenario's merged with its own).
    pub(crate) tags: crate::plan::tags::Tags,
}

/// One step of a flow.
#[derive(Debug, Clone)]
pub(crate) struct StepPlan {
    /// Index into the plan's targets of the step's request (named `flow/step`): its
    /// endpoint, transport, timeout, expected status and checks.
    pub(crate) target: usize,
    /// The step's URL for the cookie jar (RFC 6265 domain and path matching): scheme, host,
    /// port, and the path as written up to its first `{{var}}`.
    pub(crate) url: url::Url,
    /// The step's HTTP/1.1 request with its variables as slots. Rendered per request, in
    /// place of the target's pre-built bytes.
    pub(crate) template: RequestTemplate,
    /// Values taken from the response, in order, after the status and checks.
    pub(crate) extract: Vec<Extractor>,
    /// Pause after the step's response (not part of any latency, part of the iteration's
    /// duration).
    pub(crate) think_time: Option<ThinkTime>,
    /// The step's `group` name, for reports (k6's `group`).
    pub(crate) group: Option<String>,
}

/// What a failed step (a transport error, an unexpected status, a failed extraction, a
/// missing variable) does to the rest of its iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnError {
    /// Go on with the next step; the iteration still counts as failed.
    Continue,
    /// End the iteration; the virtual user starts its next one (default).
    NextIteration,
    /// End the iteration as [`OnError::NextIteration`] does, and on a failed check too: the
    /// iteration fails with reason `check`.
    FailIteration,
}

/// One value taken from a response into a variable.
#[derive(Debug, Clone)]
pub(crate) struct Extractor {
    /// The variable set (an index into [`FlowPlan::vars`]).
    pub(crate) slot: usize,
    /// Where in the response the value is.
    pub(crate) source: Source,
    /// Used when the value is not found; without one, the extraction fails the iteration.
    pub(crate) default: Option<String>,
}

/// Where an extractor finds its value in a response.
#[derive(Debug, Clone)]
pub(crate) enum Source {
    /// A JSON pointer (RFC 6901) into the JSON body; a string is taken as is, any other value
    /// as its JSON text.
    Json(String),
    /// A regular expression on the body: its first capture group, or the whole match when it
    /// has none.
    Regex(regex::Regex),
    /// A response header, by its lower-case name (the first one, when repeated).
    Header(String),
    /// The value of a cookie that the response sets (`Set-Cookie`), by name.
    Cookie(String),
    /// The status code, as decimal digits.
    Status,
}
