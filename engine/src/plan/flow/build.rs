//! The spec's `flows` resolved: each step a target (named `flow/step`, weight 0) and a
//! [`StepPlan`] with its compiled template and extractors; the flows' and steps' SLOs and
//! regression rules.

use super::data::{Table, read_table};
use super::extract::build_extractors;
use super::request::{
    RequestText, build_marked, check_names, finish_target, generated, mark_request,
};
use super::{DataOrder, DataPlan, FlowPlan, OnError, Part, StepPlan};
use crate::plan::load::think_time;
use crate::plan::regression::{RegressionRule, RuleScope, build_rules, build_scoped};
use crate::plan::slo::{build_slo, build_thresholds};
use crate::plan::tags::{self, Tags};
use crate::plan::target::Shared;
use crate::plan::threshold::{Metric, Scope, Threshold};
use crate::plan::transport::Transports;
use crate::plan::{Errors, TargetPlan};
use crate::spec;

/// What the flows add to a plan.
#[derive(Default)]
pub(in crate::plan) struct Flows {
    /// One target per step, flow by flow, step by step.
    pub(in crate::plan) targets: Vec<TargetPlan>,
    /// The flows.
    pub(in crate::plan) flows: Vec<FlowPlan>,
    /// The flows' thresholds (`Scope::Flow`) and the steps' (`Scope::Target`).
    pub(in crate::plan) slo: Vec<Threshold>,
    /// The regression rules written for flows and steps.
    pub(in crate::plan) regression: Vec<RegressionRule>,
}

/// Resolves the spec's `flows`; every problem goes to `errors`.
pub(in crate::plan) fn build_flows(
    shared: &Shared<'_>,
    transports: &mut Transports,
    errors: &mut Errors,
) -> Flows {
    let spec = shared.spec;
    let mut shared_base = Shared { ..*shared };
    if let Some(base) = &spec.defaults.base_url
        && base.contains("{{")
    {
        errors.push(
            "defaults.base_url",
            "the scheme, host and port may not hold `{{var}}`: put variables in a step's path",
        );
        // Reported once, here; the steps' paths are not joined to it.
        shared_base.base_url = None;
    }
    let shared = &shared_base;
    for (name, value) in &spec.defaults.headers {
        if value.contains("{{") {
            errors.push(
                format!("defaults.headers.{name}"),
                "`defaults.headers` are the same for every step: give a header with `{{var}}` \
                 on the steps that send it",
            );
        }
    }
    let mut out = Flows::default();
    for (i, flow) in spec.flows.iter().enumerate() {
        let path = format!("flows[{i}]");
        check_name(&format!("{path}.name"), &flow.name, "flow", errors);
        if spec.flows[..i].iter().any(|f| f.name == flow.name) {
            errors.push(
                format!("{path}.name"),
                format!("flow name `{}` is used twice", flow.name),
            );
        }
        if let Some(plan) = build_flow(shared, flow, i, &mut out, transports, errors) {
            out.flows.push(plan);
        }
        out.slo.extend(build_thresholds(
            &[
                (
                    Metric::Latency,
                    "iteration_duration",
                    &flow.slo.iteration_duration,
                ),
                (Metric::Responses, "iterations", &flow.slo.iterations),
                (
                    Metric::Errors,
                    "failed_iterations",
                    &flow.slo.failed_iterations,
                ),
            ],
            &format!("{path}.slo"),
            Scope::Flow(i),
            errors,
        ));
        let rules = &flow.regression;
        out.regression.extend(build_rules(
            &[
                (
                    Metric::Latency,
                    "iteration_duration",
                    &rules.iteration_duration,
                ),
                (Metric::Responses, "iterations", &rules.iterations),
                (
                    Metric::Errors,
                    "failed_iterations",
                    &rules.failed_iterations,
                ),
            ],
            &format!("{path}.regression"),
            &RuleScope::Flow(flow.name.clone()),
            errors,
        ));
    }
    out
}

/// One flow (the `i`th); its steps' targets, thresholds and rules go to `out`.
fn build_flow(
    shared: &Shared<'_>,
    flow: &spec::Flow,
    i: usize,
    out: &mut Flows,
    transports: &mut Transports,
    errors: &mut Errors,
) -> Option<FlowPlan> {
    let path = format!("flows[{i}]");
    let before = errors.0.len();
    let table = flow.data.as_ref().and_then(|data| {
        let field = format!("{path}.data.file");
        if !errors.printable(&field, &data.file) {
            return None;
        }
        read_table(shared.ctx.spec_dir, &data.file)
            .map_err(|e| errors.push(&field, e))
            .ok()
    });
    tags::check(&flow.tags, &format!("{path}.tags"), errors);
    let columns = table.as_ref().map_or(&[][..], |t| &t.columns[..]);
    let mut vars: Vec<String> = columns.to_vec();
    for step in &flow.steps {
        for e in &step.extract {
            if !vars.contains(&e.var) {
                vars.push(e.var.clone());
            }
        }
    }
    let mut steps = Vec::with_capacity(flow.steps.len());
    // Slots used in a request's path or headers, where a line break would split the head.
    let mut head_slots = Vec::new();
    for (j, step) in flow.steps.iter().enumerate() {
        let step_path = format!("{path}.steps[{j}]");
        check_name(&format!("{step_path}.name"), &step.name, "step", errors);
        if flow.steps[..j].iter().any(|s| s.name == step.name) {
            errors.push(
                format!("{step_path}.name"),
                format!("step name `{}` is used twice in this flow", step.name),
            );
        }
        // Steps are the plan's targets, flow by flow.
        let target = shared.spec.flows[..i]
            .iter()
            .map(|f| f.steps.len())
            .sum::<usize>()
            + j;
        let scope = StepScope {
            flow,
            j,
            path: &step_path,
            columns,
            vars: &vars,
            target,
            data_failed: flow.data.is_some() && table.is_none(),
        };
        if let Some((plan, step_plan)) = build_step(shared, &scope, transports, errors) {
            head_slots.extend(step_plan.template.head.iter().filter_map(|p| match p {
                Part::Var(slot) => Some(*slot),
                Part::Literal(_) | Part::Gen(_) => None,
            }));
            out.targets.push(plan);
            steps.push(step_plan);
        }
        step_rules(flow, step, &step_path, target, out, errors);
    }
    let data = match (&flow.data, table) {
        (Some(data), Some(table)) => {
            check_head_values(&table, &head_slots, &format!("{path}.data.file"), errors);
            Some(data_plan(data, table))
        }
        _ => None,
    };
    if errors.0.len() != before {
        return None;
    }
    Some(FlowPlan {
        name: flow.name.clone(),
        weight: flow.weight.unwrap_or(1),
        steps,
        on_error: match flow.on_error.unwrap_or(spec::OnError::NextIteration) {
            spec::OnError::Continue => OnError::Continue,
            spec::OnError::NextIteration => OnError::NextIteration,
            spec::OnError::FailIteration => OnError::FailIteration,
        },
        cookies: flow.cookies.unwrap_or(true),
        data,
        vars,
        tags: flow.tags.clone(),
    })
}

/// The thresholds and regression rules of step `step` of `flow` (at `path`), whose target
/// is the plan's `target`th.
fn step_rules(
    flow: &spec::Flow,
    step: &spec::Step,
    path: &str,
    target: usize,
    out: &mut Flows,
    errors: &mut Errors,
) {
    out.slo.extend(build_slo(
        &step.slo,
        &format!("{path}.slo"),
        Scope::Target(target),
        errors,
    ));
    out.regression.extend(build_scoped(
        &step.regression,
        &format!("{path}.regression"),
        &RuleScope::Target(format!("{}/{}", flow.name, step.name)),
        errors,
    ));
}

/// The tags of step `step` of `flow` (at `path`): the flow's, then the step's own (of the
/// same name, the step's win), then `group: NAME` from its `group`, which may not be given
/// as a tag as well. Every problem goes to `errors`.
fn step_tags(flow: &spec::Flow, step: &spec::Step, path: &str, errors: &mut Errors) -> Tags {
    tags::check(&step.tags, &format!("{path}.tags"), errors);
    let mut merged = flow.tags.clone();
    merged.extend(step.tags.iter().map(|(k, v)| (k.clone(), v.clone())));
    if let Some(group) = &step.group {
        if step.tags.contains_key("group") {
            errors.push(
                format!("{path}.tags.group"),
                "the step gives both `group` and the tag `group`: give it once, as `group: \
                 NAME` (the step's requests carry it as the tag `group`)",
            );
        } else if tags::check_text(&format!("{path}.group"), group, "value", errors) {
            merged.insert("group".to_string(), group.clone());
        }
    }
    merged
}

/// The plan of a data file that was read into `table`.
pub(super) fn data_plan(data: &spec::Data, table: Table) -> DataPlan {
    DataPlan {
        order: match data.order.unwrap_or(spec::DataOrder::Sequential) {
            spec::DataOrder::Sequential => DataOrder::Sequential,
            spec::DataOrder::Random => DataOrder::Random,
            spec::DataOrder::Once => DataOrder::Once,
        },
        rows: table.rows.into(),
    }
}

/// Where a step is: its flow, its index, field path, the variables defined for it.
struct StepScope<'a> {
    flow: &'a spec::Flow,
    j: usize,
    path: &'a str,
    /// The data file's columns.
    columns: &'a [String],
    /// The flow's variables, by slot.
    vars: &'a [String],
    /// The index of the step's target in the plan.
    target: usize,
    /// The flow has a data file that could not be read: its columns are unknown.
    data_failed: bool,
}

impl StepScope<'_> {
    /// Why `name` has no value when the step's request is sent; `None` when it has one.
    fn undefined(&self, name: &str) -> Option<String> {
        let sets = |s: &spec::Step| s.extract.iter().any(|e| e.var == name);
        let steps = &self.flow.steps;
        if self.columns.iter().any(|c| c == name) || steps[..self.j].iter().any(sets) {
            return None;
        }
        Some(if sets(&steps[self.j]) {
            format!(
                "`{{{{{name}}}}}` is set by this step's own `extract`, after its request: only \
                 later steps can use it"
            )
        } else if let Some(later) = steps[self.j..].iter().find(|s| sets(s)) {
            format!(
                "`{{{{{name}}}}}` is used before step `{}` extracts it: a variable comes from \
                 the flow's data file or an earlier step's `extract`",
                later.name
            )
        } else {
            format!(
                "`{{{{{name}}}}}` is not defined: it is neither a column of the flow's data \
                 file{}, nor a `var` that an earlier step extracts, nor a generated value \
                 (`uuid`, `random_int(A,B)`, `timestamp_ms`, `vu`, `iteration`)",
                if self.flow.data.is_none() {
                    " (the flow has no `data`)"
                } else {
                    ""
                }
            )
        })
    }

    fn slot(&self, name: &str) -> usize {
        self.vars
            .iter()
            .position(|v| v == name)
            .expect("every defined variable has a slot")
    }
}

/// One step: its target and its [`StepPlan`].
fn build_step(
    shared: &Shared<'_>,
    scope: &StepScope<'_>,
    transports: &mut Transports,
    errors: &mut Errors,
) -> Option<(TargetPlan, StepPlan)> {
    let step = &scope.flow.steps[scope.j];
    let path = scope.path;
    let message = crate::plan::target::message_body(step.grpc.as_ref(), step.ws.as_ref());
    let text = RequestText {
        url: step.url.as_deref(),
        path: step.path.as_deref(),
        headers: &step.headers,
        body: step.body.as_deref().or(message.as_deref()),
        body_file: step.body_file.as_deref(),
    };
    let marked = mark_request(shared, &text, path, errors)?;
    let defined = check_names(
        &marked.markers.names,
        |name| scope.undefined(name),
        scope.data_failed,
        errors,
    );
    let extract = build_extractors(&step.extract, path, &|v| scope.slot(v), errors);
    let think = step
        .think_time
        .as_deref()
        .and_then(|t| think_time(errors, &format!("{path}.think_time"), t));
    let tags = step_tags(scope.flow, step, path, errors);
    let timeout = step
        .timeout
        .as_deref()
        .map(|t| errors.duration(&format!("{path}.timeout"), t, false));
    let target = step.as_target(
        format!("{}/{}", scope.flow.name, step.name),
        marked.url.clone(),
        marked.path.clone(),
        marked.headers.clone(),
    );
    let inline_body = step.body.is_some() || message.is_some();
    let built = build_marked(
        shared,
        (&target, &marked),
        inline_body,
        path,
        transports,
        errors,
    );
    let (built, body) = built?;
    if !defined {
        return None;
    }
    let part = |i: usize| {
        let name = &marked.markers.names[i].0;
        match scope.undefined(name) {
            None => Part::Var(scope.slot(name)),
            Some(_) => generated(name),
        }
    };
    let (plan, template, url) = finish_target(&marked.markers, built, &body, &part, path, errors)?;
    let mut plan = plan;
    // A step's requests are its flow's iterations', never drawn by weight.
    plan.weight = 0;
    plan.tags = tags;
    if let Some(timeout) = timeout {
        plan.timeout = timeout?;
    }
    Some((
        plan,
        StepPlan {
            target: scope.target,
            url,
            template,
            extract: extract?,
            think_time: think,
            group: step.group.clone(),
        },
    ))
}

/// A flow's or step's name: printable, without `/` (a step's target is `flow/step`).
fn check_name(field: &str, name: &str, what: &str, errors: &mut Errors) {
    if errors.printable(field, name) && name.contains('/') {
        errors.push(
            field,
            format!("a {what} name may not hold `/` (a step's target is named `flow/step`)"),
        );
    }
}

/// Values of columns used in a request's path or headers may not hold CR, LF or NUL, which
/// would end the header (or the request line) early.
pub(super) fn check_head_values(
    table: &Table,
    head_slots: &[usize],
    field: &str,
    errors: &mut Errors,
) {
    for (c, column) in table.columns.iter().enumerate() {
        if !head_slots.contains(&c) {
            continue;
        }
        if let Some(r) = table
            .rows
            .iter()
            .position(|row| row[c].bytes().any(|b| matches!(b, b'\r' | b'\n' | 0)))
        {
            errors.push(
                field,
                format!(
                    "row {} of column `{column}` holds a line break or NUL, but `{{{{{column}}}}}` \
                     is used in a path or header",
                    r + 1
                ),
            );
        }
    }
}
