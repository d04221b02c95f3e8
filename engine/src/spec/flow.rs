//! Flows: multi-step journeys of a virtual user, as written in the spec (`flows:`).
//!
//! ```yaml
//! flows:
//!   - name: shop
//!     weight: 3
//!     data: { file: data/users.csv, order: sequential }
//!     steps:
//!       - name: login
//!         method: POST
//!         path: /api/login
//!         body: '{"user": "{{username}}", "password": "{{password}}"}'
//!         extract:
//!           - { var: token, json: /token }
//!       - name: item
//!         path: /api/items/1
//!         headers: { Authorization: "Bearer {{token}}" }
//! ```

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{
    Check, DURATION_PATTERN, Expect, METHOD_PATTERN, Protocol, Regression, RuleSpec, Slo,
    THINK_TIME_PATTERN, ThresholdSpec, Tls,
};

/// A flow: named steps that a virtual user runs in order, start to end, as one iteration
/// (Artillery's `flows`, k6's scenario with `group`s).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Flow {
    /// Name used in reports and SLO verdicts; unique within the spec, without `/`.
    #[schemars(length(min = 1))]
    pub(crate) name: String,
    /// Relative share of iterations that run this flow (default 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub(crate) weight: Option<u32>,
    /// What a failed step (a transport error, an unexpected status, a failed extraction, a
    /// variable without a value) does to the rest of its iteration: `next_iteration` (the
    /// default: end it) or `continue` (go on with the next step). Either way the iteration
    /// counts as failed. A failed check fails no iteration with these (it counts towards the
    /// `checks` pass rate only); with `fail_iteration`, a step whose check fails (or that
    /// fails otherwise) ends its iteration, counted as failed (reason `check` for a check).
    #[serde(default)]
    pub(crate) on_error: Option<OnError>,
    /// Keep a cookie jar per virtual user (RFC 6265): cookies that responses set are sent
    /// with the later requests of the same iteration that they match; each iteration starts
    /// with an empty jar (default `true`).
    #[serde(default)]
    pub(crate) cookies: Option<bool>,
    /// A data file whose rows feed the variables, one row per iteration.
    #[serde(default)]
    pub(crate) data: Option<Data>,
    /// Thresholds over the flow's iterations.
    #[serde(default)]
    pub(crate) slo: FlowSlo,
    /// How much worse than the baseline the flow's iterations may get. Only the rules written
    /// apply (no defaults).
    #[serde(default)]
    pub(crate) regression: FlowRegression,
    /// Tags of every request of the flow's iterations (a step's own tags of the same name
    /// win).
    #[serde(default)]
    pub(crate) tags: BTreeMap<String, String>,
    /// The steps, in order.
    #[schemars(length(min = 1))]
    pub(crate) steps: Vec<Step>,
}

/// What a failed step does to the rest of its iteration: `continue`, `next_iteration`, or
/// `fail_iteration` (as `next_iteration`, and a failed check fails the step too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum OnError {
    Continue,
    NextIteration,
    FailIteration,
}

/// A data file: its rows feed the variables of a flow's iterations, one row per iteration
/// (a target's `{{column}}`s: one row per request).
///
/// `.csv`: a header row names the columns. `.json`: an array of objects, whose values are
/// strings, numbers or booleans (taken as their text). Every row gives every column.
///
/// Generated values need no file: `{{uuid}}` (a random version 4 UUID),
/// `{{random_int(A,B)}}` (an integer from A to B, both included), `{{timestamp_ms}}` (Unix
/// time in milliseconds), `{{vu}}` (the virtual user's number, from 1) and `{{iteration}}`
/// (its iteration count, a target's: request count, from 0), drawn per request by targets
/// and steps. A column or variable of the same name wins. A target without `{{` sends the
/// same pre-built bytes every time.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Data {
    /// The file, relative to the spec file: `.csv` or `.json`.
    #[schemars(length(min = 1))]
    pub(crate) file: String,
    /// How rows are handed out: `sequential` (the default: the next row for whichever
    /// virtual user asks, starting again after the last), `random`, or `once` (each row to
    /// one iteration, or a target's request; when all are used, the run ends).
    #[serde(default)]
    pub(crate) order: Option<DataOrder>,
}

/// How a data file's rows are handed out to iterations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum DataOrder {
    Sequential,
    Random,
    Once,
}

/// Thresholds over a flow's iterations, in the grammar of `slo`.
///
/// ```yaml
/// slo:
///   iteration_duration: ["p(95) < 1s"]
///   iterations: ["rate > 5/s"]
///   failed_iterations: ["rate < 1%"]
/// ```
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FlowSlo {
    /// Iteration duration, from when the iteration was due to the end of its last step
    /// (think times included): `p(N)`, `med`, `mean`, `min`, `max`, with a time unit.
    #[serde(default)]
    pub(crate) iteration_duration: Vec<ThresholdSpec>,
    /// Iterations that ended (passed or failed): `rate` in `/s`, or `count`.
    #[serde(default)]
    pub(crate) iterations: Vec<ThresholdSpec>,
    /// Failed iterations: `rate` in `%` of the iterations, or `count`.
    #[serde(default)]
    pub(crate) failed_iterations: Vec<ThresholdSpec>,
}

/// Regression rules over a flow's iterations, in the grammar of `regression`. Only the
/// rules written apply.
///
/// ```yaml
/// regression:
///   iteration_duration: ["p(95) +10%"]
///   failed_iterations: ["rate +10% floor 0.1%"]
///   iterations: ["rate -10%"]
/// ```
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FlowRegression {
    /// Iteration-duration rules: `p(50)`, `p(90)`, `p(95)`, `p(99)`, `p(99.9)`, `med` or
    /// `mean`, the allowed rise (`+10%`), optionally `floor` and a duration.
    #[serde(default)]
    pub(crate) iteration_duration: Vec<RuleSpec>,
    /// Iteration-rate rules: `rate`, the allowed relative drop (`-10%`), optionally `floor`
    /// and a rate (`floor 5/s`).
    #[serde(default)]
    pub(crate) iterations: Vec<RuleSpec>,
    /// Failed-iteration rules: `rate`, the allowed relative rise (`+10%`), optionally
    /// `floor` and a rate in percentage points (`floor 0.1%`).
    #[serde(default)]
    pub(crate) failed_iterations: Vec<RuleSpec>,
}

/// One step of a flow: a request, as a target is, planned as a target named `flow/step`.
///
/// Its path (and query), header values and body may hold variables, `{{name}}`: a column of
/// the flow's data file, or a variable that an earlier step's `extract` sets. The scheme,
/// host and port may not.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Step {
    /// Name used in reports (`flow/step`); unique within its flow, without `/`.
    #[schemars(length(min = 1))]
    pub(crate) name: String,
    /// HTTP method (default `GET`).
    #[serde(default)]
    #[schemars(regex(pattern = METHOD_PATTERN))]
    pub(crate) method: Option<String>,
    /// Absolute URL. Give either `url`, or `path` with `defaults.base_url`.
    #[serde(default)]
    pub(crate) url: Option<String>,
    /// Path (and query) joined to `defaults.base_url`, e.g. `/items/{{id}}?page=2`.
    #[serde(default)]
    pub(crate) path: Option<String>,
    /// Request headers; values may hold `{{name}}`.
    #[serde(default)]
    pub(crate) headers: BTreeMap<String, String>,
    /// Request body, inline; may hold `{{name}}`.
    #[serde(default)]
    pub(crate) body: Option<String>,
    /// Request body read from a file, relative to the spec file; may hold `{{name}}`.
    #[serde(default)]
    pub(crate) body_file: Option<String>,
    /// What a successful response looks like; an unexpected status fails the iteration.
    #[serde(default)]
    pub(crate) expect: Expect,
    /// Checks on responses beyond their status, as a target's (they do not fail the
    /// iteration).
    #[serde(default)]
    pub(crate) checks: Vec<Check>,
    /// HTTP version (default: `defaults.protocol`, else `auto`).
    #[serde(default)]
    pub(crate) protocol: Option<Protocol>,
    /// TLS settings; each field given replaces the one of `defaults.tls`.
    #[serde(default)]
    pub(crate) tls: Option<Tls>,
    /// Request timeout, from connect to the last byte of the response (default:
    /// `defaults.timeout`).
    #[serde(default)]
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub(crate) timeout: Option<String>,
    /// Values taken from the response into variables, for the later steps.
    #[serde(default)]
    pub(crate) extract: Vec<Extract>,
    /// Pause after the step's response: a duration (`100ms`) or a uniform range
    /// (`50ms..150ms`). Part of the iteration's duration, not of the step's latency.
    #[serde(default)]
    #[schemars(regex(pattern = THINK_TIME_PATTERN))]
    pub(crate) think_time: Option<String>,
    /// Tags of the step's requests; its `group` is the tag `group`.
    #[serde(default)]
    pub(crate) tags: BTreeMap<String, String>,
    /// A group name that reports show with the step (k6's `group`); the step's requests carry
    /// it as the tag `group`.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub(crate) group: Option<String>,
    /// Thresholds over this step's requests alone, as a target's.
    #[serde(default)]
    pub(crate) slo: Slo,
    /// Regression rules over this step's requests alone, in the grammar of the whole run's.
    /// Only the rules written apply (no defaults).
    #[serde(default)]
    pub(crate) regression: Regression,
    /// A gRPC call, as a target's (`protocol: grpc`); its `message` may hold `{{name}}`.
    #[serde(default)]
    pub(crate) grpc: Option<super::Grpc>,
    /// A WebSocket exchange, as a target's; `send` may hold `{{name}}`. The virtual user's
    /// connection stays open for its later `ws` steps to the same endpoint.
    #[serde(default)]
    pub(crate) ws: Option<super::Ws>,
}

/// One value taken from a response into a variable; give exactly one of `json`, `regex`,
/// `header`, `cookie` or `status`.
///
/// ```yaml
/// extract:
///   - { var: token, json: /token }             # a JSON pointer (RFC 6901) into the body
///   - { var: id,    regex: 'id="(\d+)"' }      # the first capture group, else the match
///   - { var: etag,  header: ETag, default: "" }
///   - { var: sid,   cookie: session }          # a cookie the response sets
///   - { var: code,  status: true }
/// ```
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Extract {
    /// The variable set, used as `{{var}}` by later steps: letters, digits, `_` and `-`,
    /// not starting with a digit or `-`.
    #[schemars(length(min = 1))]
    pub(crate) var: String,
    /// A JSON pointer (RFC 6901) into the JSON body, e.g. `/items/0/id`; a string is taken
    /// as it is, any other value as its JSON text.
    #[serde(default)]
    pub(crate) json: Option<String>,
    /// A regular expression on the body: its first capture group, or the whole match when
    /// it has none.
    #[serde(default)]
    pub(crate) regex: Option<String>,
    /// A response header, by name (any case); the first one when repeated.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub(crate) header: Option<String>,
    /// A cookie that the response sets (`Set-Cookie`), by name.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub(crate) cookie: Option<String>,
    /// `true`: the status code, as decimal digits.
    #[serde(default)]
    pub(crate) status: Option<bool>,
    /// The value when none is found; without one, a value not found fails the iteration.
    #[serde(default)]
    pub(crate) default: Option<String>,
}

impl Step {
    /// The step as a target named `name` (`flow/step`), with its request fields; `headers`,
    /// `url`, `path` and `body` as given (the plan puts markers in place of the variables).
    /// Body files are read by the plan, so the target has none.
    pub(crate) fn as_target(
        &self,
        name: String,
        url: Option<String>,
        path: Option<String>,
        headers: BTreeMap<String, String>,
    ) -> super::Target {
        super::Target {
            name,
            method: self.method.clone(),
            url,
            path,
            headers,
            body: None,
            body_file: None,
            expect: self.expect.clone(),
            protocol: self.protocol,
            tls: self.tls.clone(),
            weight: None,
            checks: self.checks.clone(),
            slo: Slo::default(),
            regression: Regression::default(),
            tags: BTreeMap::new(),
            data: None,
            grpc: self.grpc.clone(),
            ws: self.ws.clone(),
        }
    }
}
