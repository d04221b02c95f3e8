//! The resolved plan: every default applied, every string parsed, request bytes built.
//!
//! `build` turns a spec (`spec::Spec`) into a [`Plan`], or into every error it finds (not only
//! the first), each naming the field path (`targets[1].expect.status`). The plan does not
//! depend on YAML: an ad-hoc run from command-line flags builds the same types.
//!
//! One file per part of the plan: `target` (the endpoints under test and their requests, built
//! by `request`; `endpoint` is where their connections go), `transport` (protocol and TLS, see
//! `tls`), `load` (model and stages, and the glossary), `slo` and [`threshold`], [`regression`]
//! rules, and the `service` to start.

mod endpoint;
pub(crate) mod flow;
pub(crate) mod grpc;
pub(crate) mod health;
pub(crate) mod load;
mod redirect;
pub mod regression;
mod request;
pub(crate) mod scenario;
mod service;
pub mod shard;
mod slo;
pub(crate) mod tags;
mod target;
pub mod threshold;
pub(crate) mod tls;
mod transport;
pub(crate) mod ws;

pub use endpoint::Endpoint;
pub(crate) use flow::FlowPlan;
pub(crate) use grpc::GrpcPlan;
pub(crate) use load::{LoadPlan, Model, Stage, Stop, ThinkTime};
pub(crate) use redirect::REDIRECT_STATUSES;
pub(crate) use request::h2_request;
pub(crate) use scenario::ScenarioPlan;
pub use service::ServicePlan;
pub use shard::Shard;
pub use tags::{TagSelector, Tags};
use target::TargetDefaults;
pub use target::TargetPlan;
pub(crate) use target::{CheckKind, CheckPlan, JsonTest, TextTest};
pub(crate) use transport::TlsPlan;
pub use transport::TransportPlan;
pub(crate) use ws::WsPlan;

use std::path::Path;
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::spec::{Protocol, Spec};
use crate::units::parse_duration;
use regression::RegressionRule;
use service::build_service;
use slo::build_slo;
use target::TargetRequest;
use threshold::{Scope, Threshold};
use transport::Transports;

/// Default request timeout when neither the spec nor the target gives one.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// A validated, fully resolved load test.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The spec's `name`.
    pub name: String,
    /// Hex SHA-256 of the spec file's bytes (before interpolation, so secrets never enter it).
    pub spec_hash: String,
    /// The service to start before the run, if any.
    pub service: Option<ServicePlan>,
    /// The targets, in the spec's order (a target's index is its `Scope::Target`).
    pub targets: Vec<TargetPlan>,
    /// The flows, in the spec's order (a flow's index is its `Scope::Flow`); empty when the
    /// spec gives `targets`. Each flow step is also a target.
    pub(crate) flows: Vec<FlowPlan>,
    /// How the load is applied: model, stages, when to stop.
    pub(crate) load: LoadPlan,
    /// Thresholds over the whole run and per target.
    pub slo: Vec<Threshold>,
    /// Regression rules over the whole run, defaults applied (see [`regression`]), then the
    /// rules written for targets, or for flows and flow steps.
    pub(crate) regression: Vec<RegressionRule>,
    /// The gate's false-alarm rate per run that the rules share (α), a fraction (see
    /// [`regression::build_alpha`]).
    pub(crate) regression_alpha: f64,
    /// This process's share of a run spread over several (`loadgate run --shard K/N`): the
    /// load above is already this shard's share. `None`: the whole run.
    pub(crate) shard: Option<Shard>,
    /// When the run's time zero (the start of the warmup) is planned, on the wall clock
    /// (`loadgate run --start-at`): the run waits until then. `None`: as soon as it is ready.
    pub(crate) start_at: Option<std::time::SystemTime>,
    /// The spec's `scenarios`, each a plan of its own run at the same time as the others;
    /// empty for the one-scenario short form (`load:`), whose load is `load` above. With
    /// scenarios, `targets`, `flows`, `slo` and `regression` above are the whole run's (every
    /// scenario's targets and flows, in the spec's order) and `load` is the first scenario's.
    pub(crate) scenarios: Vec<ScenarioPlan>,
}

/// A semantic error in a spec: the field path (`targets[1].url`) and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlanError {
    /// Field path such as `targets[1].url`; `load` for the whole block.
    pub(crate) path: String,
    /// What is wrong, and what to do about it.
    pub(crate) message: String,
}

/// What `build` needs besides the spec.
pub(crate) struct BuildContext<'a> {
    /// The spec file's bytes, for the hash.
    pub(crate) source: &'a [u8],
    /// The spec's folder: `body_file` and `service.working_dir` are relative to it.
    pub(crate) spec_dir: &'a Path,
    /// Looks up `${VAR}` (the environment, plus `LOADGATE`, the running binary).
    pub(crate) var: &'a dyn Fn(&str) -> Option<String>,
}

/// Resolves `spec` into a plan, or returns every error found.
pub(crate) fn build(spec: &Spec, ctx: &BuildContext<'_>) -> Result<Plan, Vec<PlanError>> {
    let mut errors = Errors::default();
    let defaults = target_defaults(spec, &mut errors);

    errors.printable("name", &spec.name);
    let base_url = build_base_url(spec, ctx, &mut errors);

    let service = spec
        .service
        .as_ref()
        .and_then(|s| build_service(s, ctx, &mut errors));

    let mut transports = Transports::default();
    let mut slo = build_slo(&spec.slo, "slo", Scope::Total, &mut errors);
    let mut regression = regression::build(&spec.regression, &mut errors);
    let regression_alpha = regression::build_alpha(&spec.regression).unwrap_or_else(|(path, e)| {
        errors.push(path, e);
        regression::DEFAULT_ALPHA
    });
    let shared = target::Shared {
        spec,
        base_url: base_url.as_deref(),
        defaults: &defaults,
        ctx,
    };
    let (targets, flows) = build_work(
        &shared,
        &mut transports,
        &mut errors,
        (&mut slo, &mut regression),
    );
    let scenarios = (!spec.scenarios.is_empty())
        .then(|| scenario::resolve(spec, &mut errors, &mut slo, &mut regression));
    let load = match (&spec.load, &scenarios) {
        (_, Some(_)) => None,
        (Some(load), None) => load::build(load, &mut errors),
        (None, None) => {
            errors.push(
                "",
                "missing `load` (or `scenarios`): give how much load to apply",
            );
            None
        }
    };
    check_streams(spec, &defaults, &mut errors);

    if !errors.0.is_empty() {
        return Err(errors.0);
    }
    let mut plan = Plan {
        name: spec.name.clone(),
        spec_hash: hex(&Sha256::digest(ctx.source)),
        service,
        targets,
        flows,
        // With scenarios, `assemble` sets it to the first scenario's.
        load: match load {
            Some(load) => load,
            None => scenarios.as_ref().expect("no errors")[0].load.clone(),
        },
        slo,
        regression,
        regression_alpha,
        shard: None,
        scenarios: Vec::new(),
        start_at: None,
    };
    if let Some(drafts) = scenarios {
        scenario::assemble(&mut plan, drafts);
    }
    Ok(plan)
}

/// The spec's targets and flows (with `scenarios`, both may be given: plain targets first,
/// then the flows' steps), their thresholds into `slo` and their rules into `regression`.
fn build_work(
    shared: &target::Shared<'_>,
    transports: &mut Transports,
    errors: &mut Errors,
    (slo, regression): (&mut Vec<Threshold>, &mut Vec<RegressionRule>),
) -> (Vec<TargetPlan>, Vec<FlowPlan>) {
    let spec = shared.spec;
    match (spec.targets.is_empty(), spec.flows.is_empty()) {
        (true, true) => {
            errors.push(
                "",
                "missing `targets` (independent requests) or `flows` (journeys of steps): give \
                 one of them",
            );
            (Vec::new(), Vec::new())
        }
        (false, false) if spec.scenarios.is_empty() => {
            errors.push(
                "flows",
                "give either `targets` (independent requests) or `flows` (journeys of steps), \
                 not both (or run them in separate `scenarios`)",
            );
            (Vec::new(), Vec::new())
        }
        _ => {
            let mut targets = build_targets(shared, transports, errors, slo);
            regression.extend(target_rules(spec, errors));
            if spec.flows.is_empty() {
                return (targets, Vec::new());
            }
            let mut built = flow::build_flows(shared, transports, errors);
            // The steps' targets follow the plain targets.
            let offset = targets.len();
            for step in built.flows.iter_mut().flat_map(|f| f.steps.iter_mut()) {
                step.target += offset;
            }
            slo.extend(built.slo.into_iter().map(|t| match t.scope {
                Scope::Target(j) => Threshold {
                    scope: Scope::Target(j + offset),
                    ..t
                },
                _ => t,
            }));
            regression.extend(built.regression);
            targets.append(&mut built.targets);
            (targets, built.flows)
        }
    }
}

/// The spec's `targets`, each with its thresholds (into `slo`).
fn build_targets(
    shared: &target::Shared<'_>,
    transports: &mut Transports,
    errors: &mut Errors,
    slo: &mut Vec<Threshold>,
) -> Vec<TargetPlan> {
    let target::Shared {
        spec,
        base_url,
        defaults,
        ctx,
    } = *shared;
    let mut targets = Vec::with_capacity(spec.targets.len());
    for (i, target) in spec.targets.iter().enumerate() {
        let path = format!("targets[{i}]");
        if spec.targets[..i].iter().any(|t| t.name == target.name) {
            errors.push(
                format!("{path}.name"),
                format!("target name `{}` is used twice", target.name),
            );
        }
        let request = TargetRequest {
            spec,
            target,
            path: &path,
            base_url,
            defaults,
        };
        if let Some(t) = flow::build_target(&request, ctx, transports, errors) {
            targets.push(t);
        }
        slo.extend(build_slo(
            &target.slo,
            &format!("{path}.slo"),
            Scope::Target(i),
            errors,
        ));
    }
    targets
}

/// The regression rules written for the spec's `targets` (`RuleScope::Target`), as a flow
/// step's are.
fn target_rules(spec: &Spec, errors: &mut Errors) -> Vec<RegressionRule> {
    let mut rules = Vec::new();
    for (i, target) in spec.targets.iter().enumerate() {
        rules.extend(regression::build_scoped(
            &target.regression,
            &format!("targets[{i}].regression"),
            &regression::RuleScope::Target(target.name.clone()),
            errors,
        ));
    }
    rules
}

/// `defaults.base_url`, interpolated, once it is known to be an `http://` or `https://` URL
/// (a target's `path` is joined to it); `None` (and an error) when it is not.
fn build_base_url(spec: &Spec, ctx: &BuildContext<'_>, errors: &mut Errors) -> Option<String> {
    const FIELD: &str = "defaults.base_url";
    let written = spec.defaults.base_url.as_deref()?;
    if !errors.printable(FIELD, written) {
        return None;
    }
    let base_url = errors.interpolate(FIELD, written, ctx)?;
    endpoint::parse_http_url(FIELD, &base_url, written, errors)?;
    Some(base_url)
}

/// What `defaults` gives every target besides its headers and TLS: the timeouts,
/// `keep_alive`, `compression`, `redirects` and `slow`.
fn target_defaults(spec: &Spec, errors: &mut Errors) -> TargetDefaults {
    let defaults = &spec.defaults;
    TargetDefaults {
        timeout: defaults
            .timeout
            .as_deref()
            .and_then(|t| errors.duration("defaults.timeout", t, false))
            .unwrap_or(DEFAULT_TIMEOUT),
        connect_timeout: defaults
            .connect_timeout
            .as_deref()
            .and_then(|t| errors.duration("defaults.connect_timeout", t, false)),
        keep_alive: defaults.keep_alive.unwrap_or(true),
        compression: defaults.compression.unwrap_or(false),
        redirects: defaults.redirects.unwrap_or(0),
        slow_us: defaults
            .slow
            .as_deref()
            .and_then(|s| errors.duration("defaults.slow", s, false))
            .map(|d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX)),
    }
}

/// More than one stream per connection needs HTTP/2 for every target, and connections that
/// are kept alive (`keep_alive: false` carries one request per connection).
fn check_streams(spec: &Spec, defaults: &TargetDefaults, errors: &mut Errors) {
    if let Some(streams) = spec
        .load
        .as_ref()
        .and_then(|l| l.streams)
        .filter(|s| *s > 1)
    {
        if !defaults.keep_alive {
            errors.push(
                "load.streams",
                format!(
                    "{streams} streams per connection need connections that carry more than \
                     one request: leave out `defaults.keep_alive: false`, or `streams`"
                ),
            );
        }
        let targets = spec
            .targets
            .iter()
            .map(|t| {
                (
                    t.name.clone(),
                    t.protocol.or(t.grpc.as_ref().map(|_| Protocol::Grpc)),
                )
            })
            .chain(spec.flows.iter().flat_map(|f| {
                f.steps.iter().map(|s| {
                    let implied = s.grpc.as_ref().map(|_| Protocol::Grpc);
                    (format!("{}/{}", f.name, s.name), s.protocol.or(implied))
                })
            }));
        let not_h2: Vec<String> = targets
            .filter(|(_, protocol)| {
                !matches!(
                    protocol.or(spec.defaults.protocol),
                    Some(Protocol::H2 | Protocol::H3 | Protocol::Grpc)
                )
            })
            .map(|(name, _)| name)
            .collect();
        if !not_h2.is_empty() {
            errors.push(
                "load.streams",
                format!(
                    "{streams} streams per connection need `protocol: h2`, `h3` or `grpc` for \
                     every target (HTTP/1.1 carries one request at a time); not h2, h3 or \
                     grpc: {}",
                    not_h2.join(", ")
                ),
            );
        }
    }
}

/// The errors found so far, in the order found.
#[derive(Default)]
struct Errors(Vec<PlanError>);

impl Errors {
    /// Records that the field at `path` is wrong.
    fn push(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.0.push(PlanError {
            path: path.into(),
            message: message.into(),
        });
    }

    /// Parses the duration at `path`; `None` (and an error) if it is not one, or is zero
    /// when `zero_ok` is false.
    fn duration(&mut self, path: &str, text: &str, zero_ok: bool) -> Option<Duration> {
        match parse_duration(text) {
            Ok(d) if d.is_zero() && !zero_ok => {
                self.push(path, "must be longer than 0");
                None
            }
            Ok(d) => Some(d),
            Err(e) => {
                self.push(path, e);
                None
            }
        }
    }

    /// Whether `text`, the field at `path`, is free of control characters; if not, records
    /// the error (see [`control_character`]).
    fn printable(&mut self, path: &str, text: &str) -> bool {
        match control_character(text) {
            Some(message) => {
                self.push(path, message);
                false
            }
            None => true,
        }
    }

    /// Interpolates `${VAR}`s in the field at `path`; `None` (and an error) if one is unset.
    fn interpolate(&mut self, path: &str, text: &str, ctx: &BuildContext<'_>) -> Option<String> {
        match interpolate(text, ctx.var) {
            Ok(s) => Some(s),
            Err(e) => {
                self.push(path, e);
                None
            }
        }
    }
}

/// The error for `text` when it holds a control character (ESC, BEL, NUL, TAB, ...): names,
/// URLs and expressions are printed in reports (JUnit's XML cannot carry most of them at all)
/// and on terminals, so a spec may not hold them there. `None` when there is none.
fn control_character(text: &str) -> Option<String> {
    let c = text.chars().find(|c| c.is_control())?;
    Some(format!(
        "`{text}` contains the control character U+{:04X}; remove it",
        u32::from(c)
    ))
}

/// Replaces `${NAME}` with `var(NAME)`; `$${` stays a literal `${`.
///
/// Errors name the missing variable. Names are `[A-Za-z_][A-Za-z0-9_]*`.
fn interpolate(text: &str, var: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('$') {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        if let Some(tail) = after.strip_prefix("$${") {
            out.push_str("${");
            rest = tail;
        } else if let Some(tail) = after.strip_prefix("${") {
            let end = tail
                .find('}')
                .ok_or_else(|| format!("`${{` is not closed in `{text}`"))?;
            let name = &tail[..end];
            let valid = name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return Err(format!("`${{{name}}}` is not a valid variable name"));
            }
            let value =
                var(name).ok_or_else(|| format!("environment variable `{name}` is not set"))?;
            out.push_str(&value);
            rest = &tail[end + 1..];
        } else {
            out.push('$');
            rest = &after[1..];
        }
    }
    out.push_str(rest);
    Ok(out)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolation() {
        let var = |name: &str| match name {
            "HOST" => Some("127.0.0.1".to_string()),
            "TOKEN" => Some("s3cret".to_string()),
            _ => None,
        };
        assert_eq!(
            interpolate("http://${HOST}:80/a?t=${TOKEN}", &var).unwrap(),
            "http://127.0.0.1:80/a?t=s3cret"
        );
        assert_eq!(
            interpolate("cost: $5 $${HOST}", &var).unwrap(),
            "cost: $5 ${HOST}"
        );
        assert!(
            interpolate("${NOPE}", &var)
                .unwrap_err()
                .contains("`NOPE` is not set")
        );
        assert!(
            interpolate("${HOST", &var)
                .unwrap_err()
                .contains("not closed")
        );
        assert!(
            interpolate("${1X}", &var)
                .unwrap_err()
                .contains("not a valid")
        );
    }
}
