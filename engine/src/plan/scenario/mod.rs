//! Scenarios: several loads at once, each with its own executor (`spec::Scenario`), each
//! resolved into a plan of its own that the run starts at its `start_time`.
//!
//! Planned in two passes: [`resolve`] checks every scenario and plans its load (`executor`),
//! thresholds and rules before the targets are built; once the whole plan holds no error,
//! [`assemble`] gives the targets and flows their scenario's tags and cuts each scenario's
//! own plan out of the whole.

mod executor;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::time::Duration;

use super::regression::{self, RegressionRule, RuleScope};
use super::slo::build_slo;
use super::tags::Tags;
use super::threshold::{Scope, Threshold};
use super::{Errors, LoadPlan, Plan};
use crate::spec::{self, Executor, Spec};

/// One scenario, resolved.
#[derive(Debug, Clone)]
pub(crate) struct ScenarioPlan {
    /// The scenario's `name`, unique within the spec.
    pub(crate) name: String,
    /// Its executor, as the spec names it (the load below is what it means).
    pub(crate) executor: Executor,
    /// When it starts, after the run's time zero.
    pub(crate) start_time: Duration,
    /// Its tags (`scenario: NAME` included), already merged into its targets' tags.
    pub(crate) tags: Tags,
    /// Index in the whole run's `Plan::targets` of each of its targets, in order: its own
    /// plan's target `i` is the run's target `targets[i]`.
    pub(crate) targets: Vec<usize>,
    /// Index in the whole run's `Plan::flows` of each of its flows, in order.
    pub(crate) flows: Vec<usize>,
    /// Its own plan: its targets and flows only, its load (executor, stages, `graceful_stop`,
    /// `max_duration` in `LoadPlan`), the thresholds and regression rules over its requests
    /// (`Scope::Total` there is the scenario's requests; its targets' and flows' own), no
    /// service (the whole run's starts once), `scenarios` empty.
    pub(crate) plan: Plan,
}

/// A scenario checked and its load planned, before the targets are built.
#[derive(Debug)]
pub(super) struct Draft {
    name: String,
    executor: Executor,
    start_time: Duration,
    tags: Tags,
    /// Its load, planned.
    pub(super) load: LoadPlan,
    /// Indices of its plain targets in the spec's `targets` (= the whole plan's).
    targets: Vec<usize>,
    /// Indices of its flows in the spec's `flows` (= the whole plan's).
    flows: Vec<usize>,
}

/// Checks the spec's `scenarios` and plans each one's load; their thresholds go to `slo`
/// (`Scope::Scenario(i)`) and their rules to `regression` (`RuleScope::Scenario(name)`, only
/// the rules written). Every problem goes to `errors`, with its field path; the drafts are
/// complete only when there is none.
pub(super) fn resolve(
    spec: &Spec,
    errors: &mut Errors,
    slo: &mut Vec<Threshold>,
    regression: &mut Vec<RegressionRule>,
) -> Vec<Draft> {
    let shared = executor::shared_load(spec.load.as_ref(), errors);
    let members = Members::check(spec, errors);
    refuse_whole_run_abort(&spec.slo, errors);
    let mut drafts = Vec::with_capacity(spec.scenarios.len());
    for (i, s) in spec.scenarios.iter().enumerate() {
        let path = format!("scenarios[{i}]");
        check_name(spec, i, errors);
        let start_time = match &s.start_time {
            Some(t) => errors.duration(&format!("{path}.start_time"), t, true),
            None => Some(Duration::ZERO),
        };
        let tags = tags(s, &path, errors);
        slo.extend(scenario_slo(s, &path, i, errors));
        regression.extend(regression::build_scoped(
            &s.regression,
            &format!("{path}.regression"),
            &RuleScope::Scenario(s.name.clone()),
            errors,
        ));
        let load = executor::build(s, &path, &shared, errors);
        if let (Some(start_time), Some(load)) = (start_time, load) {
            drafts.push(Draft {
                name: s.name.clone(),
                executor: s.executor,
                start_time,
                tags,
                load,
                targets: members.targets_of(i),
                flows: members.flows_of(i),
            });
        }
    }
    drafts
}

/// The scenario's thresholds as `Scope::Scenario(index)` (`window` and `abort_on_fail`
/// allowed, for the scenario's own live watch; no default `errors` threshold).
fn scenario_slo(
    s: &spec::Scenario,
    path: &str,
    index: usize,
    errors: &mut Errors,
) -> Vec<Threshold> {
    build_slo(
        &s.slo,
        &format!("{path}.slo"),
        Scope::Scenario(index),
        errors,
    )
}

/// With scenarios, each runs on its own: a whole run's `abort_on_fail` would watch nothing.
fn refuse_whole_run_abort(slo: &spec::Slo, errors: &mut Errors) {
    let lists = [
        ("latency", &slo.latency),
        ("errors", &slo.errors),
        ("requests", &slo.requests),
        ("checks", &slo.checks),
    ];
    for (field, list) in lists {
        for (k, entry) in list.iter().enumerate() {
            if let spec::ThresholdSpec::Detailed(d) = entry
                && d.abort_on_fail
            {
                errors.push(
                    format!("slo.{field}[{k}].abort_on_fail"),
                    "with `scenarios`, each scenario is watched on its own: give \
                     `abort_on_fail` in a scenario's `slo`",
                );
            }
        }
    }
}

/// The scenario's name: printable, without `/` nor the characters a tag selector splits on
/// (`{`, `}`, `:`, `,`), unique.
fn check_name(spec: &Spec, i: usize, errors: &mut Errors) {
    let path = format!("scenarios[{i}].name");
    let name = &spec.scenarios[i].name;
    if !errors.printable(&path, name) {
        return;
    }
    if let Some(c) = name.chars().find(|c| "/{}:,".contains(*c)) {
        errors.push(
            &path,
            format!(
                "a scenario name may not hold `{c}` (nor `/`, `{{`, `}}`, `:`, `,`: its tag is \
                 selected as `{{scenario:NAME}}`)"
            ),
        );
    } else if name.trim() != name {
        errors.push(
            &path,
            "a scenario name may not start or end with white space",
        );
    }
    if spec.scenarios[..i].iter().any(|s| &s.name == name) {
        errors.push(&path, format!("scenario name `{name}` is used twice"));
    }
}

/// The scenario's tags with `scenario: NAME`; tag names and values printable.
fn tags(s: &spec::Scenario, path: &str, errors: &mut Errors) -> Tags {
    let mut tags = Tags::new();
    super::tags::check(&s.tags, &format!("{path}.tags"), errors);
    for (name, value) in &s.tags {
        let field = format!("{path}.tags.{name}");
        if name == "scenario" {
            errors.push(
                field,
                "the tag `scenario` is the scenario's name, added by loadgate: leave it out",
            );
            continue;
        }
        tags.insert(name.clone(), value.clone());
    }
    tags.insert("scenario".to_string(), s.name.clone());
    tags
}

/// Which scenario each target and flow belongs to.
struct Members {
    /// Per spec target: the scenario naming it.
    targets: Vec<Option<usize>>,
    /// Per spec flow: the scenario naming it.
    flows: Vec<Option<usize>>,
}

impl Members {
    /// Reads the scenarios' `targets` and `flows`. Errors: a scenario with neither or both,
    /// an unknown name, a name given twice (by one scenario or a second one), a target or
    /// flow that no scenario names.
    fn check(spec: &Spec, errors: &mut Errors) -> Members {
        let mut members = Members {
            targets: vec![None; spec.targets.len()],
            flows: vec![None; spec.flows.len()],
        };
        let target_names: Vec<&str> = spec.targets.iter().map(|t| t.name.as_str()).collect();
        let flow_names: Vec<&str> = spec.flows.iter().map(|f| f.name.as_str()).collect();
        for (i, s) in spec.scenarios.iter().enumerate() {
            let path = format!("scenarios[{i}]");
            match (s.targets.is_empty(), s.flows.is_empty()) {
                (true, true) => errors.push(
                    &path,
                    "missing `targets` or `flows`: give the targets or the flows it runs",
                ),
                (false, false) => errors.push(
                    format!("{path}.flows"),
                    "give `targets` or `flows`, not both (one scenario runs one kind)",
                ),
                _ => {}
            }
            let lists = [
                (
                    "target",
                    "targets",
                    &s.targets,
                    &target_names,
                    &mut members.targets,
                ),
                ("flow", "flows", &s.flows, &flow_names, &mut members.flows),
            ];
            for (what, field, named, names, owner) in lists {
                for (k, name) in named.iter().enumerate() {
                    let at = format!("{path}.{field}[{k}]");
                    let Some(index) = names.iter().position(|n| n == name) else {
                        errors.push(
                            at,
                            format!(
                                "no {what} is named `{name}`; the {field}: {}",
                                names.join(", ")
                            ),
                        );
                        continue;
                    };
                    match owner[index] {
                        Some(first) if first == i => {
                            errors.push(at, format!("{what} `{name}` is named twice here"))
                        }
                        Some(first) => errors.push(
                            at,
                            format!(
                                "{what} `{name}` is already in scenario `{}`: a {what} \
                                 belongs to one scenario",
                                spec.scenarios[first].name
                            ),
                        ),
                        None => owner[index] = Some(i),
                    }
                }
            }
        }
        members.unused(spec, errors);
        members
    }

    /// Errors for the targets and flows that no scenario names.
    fn unused(&self, spec: &Spec, errors: &mut Errors) {
        let targets = spec.targets.iter().map(|t| ("target", "targets", &t.name));
        let flows = spec.flows.iter().map(|f| ("flow", "flows", &f.name));
        let owners = self.targets.iter().chain(&self.flows);
        let mut index: BTreeMap<&str, usize> = BTreeMap::new();
        for ((what, field, name), owner) in targets.chain(flows).zip(owners) {
            let k = index.entry(field).or_default();
            if owner.is_none() {
                errors.push(
                    format!("{field}[{k}].name"),
                    format!(
                        "{what} `{name}` is in no scenario: name it in one scenario's `{field}`"
                    ),
                );
            }
            *k += 1;
        }
    }

    /// The spec indices of scenario `i`'s targets, in the spec's order.
    fn targets_of(&self, i: usize) -> Vec<usize> {
        (0..self.targets.len())
            .filter(|&t| self.targets[t] == Some(i))
            .collect()
    }

    /// The spec indices of scenario `i`'s flows, in the spec's order.
    fn flows_of(&self, i: usize) -> Vec<usize> {
        (0..self.flows.len())
            .filter(|&f| self.flows[f] == Some(i))
            .collect()
    }
}

/// Gives each scenario's targets and flows its tags (their own win), then cuts each
/// scenario's plan out of the whole `plan` (whose targets and flows are all of them, in the
/// spec's order: plain targets first, then the flows' steps), and sets the whole plan's
/// load to the first scenario's.
pub(super) fn assemble(plan: &mut Plan, drafts: Vec<Draft>) {
    let mut scenarios = Vec::with_capacity(drafts.len());
    for (i, draft) in drafts.into_iter().enumerate() {
        let mut targets = draft.targets;
        for &f in &draft.flows {
            targets.extend(plan.flows[f].steps.iter().map(|s| s.target));
        }
        for &t in &targets {
            merge_tags(&mut plan.targets[t].tags, &draft.tags);
        }
        for &f in &draft.flows {
            merge_tags(&mut plan.flows[f].tags, &draft.tags);
        }
        let sub = sub_plan(plan, i, &targets, &draft.flows, draft.load);
        scenarios.push(ScenarioPlan {
            name: draft.name,
            executor: draft.executor,
            start_time: draft.start_time,
            tags: draft.tags,
            targets,
            flows: draft.flows,
            plan: sub,
        });
    }
    if let Some(first) = scenarios.first() {
        plan.load = first.plan.load.clone();
    }
    plan.scenarios = scenarios;
}

/// Adds `scenario`'s tags that `own` does not give.
fn merge_tags(own: &mut Tags, scenario: &Tags) {
    for (name, value) in scenario {
        own.entry(name.clone()).or_insert_with(|| value.clone());
    }
}

/// Scenario `index`'s own plan: the whole plan's `targets` and `flows` at those indices
/// (steps' targets renumbered into its own), `load`, and the thresholds over them: the
/// scenario's as `Scope::Total`, its targets' and flows' with their own indices.
fn sub_plan(
    whole: &Plan,
    index: usize,
    targets: &[usize],
    flows: &[usize],
    load: LoadPlan,
) -> Plan {
    let local = |t: usize| targets.iter().position(|&x| x == t);
    let flow_plans = flows
        .iter()
        .map(|&f| {
            let mut flow = whole.flows[f].clone();
            for step in &mut flow.steps {
                step.target = local(step.target).expect("a flow's steps are its scenario's");
            }
            flow
        })
        .collect();
    let slo = whole
        .slo
        .iter()
        .filter_map(|t| {
            let scope = match t.scope {
                Scope::Scenario(i) if i == index => Scope::Total,
                Scope::Target(j) => Scope::Target(local(j)?),
                Scope::Flow(j) => Scope::Flow(flows.iter().position(|&f| f == j)?),
                _ => return None,
            };
            Some(Threshold { scope, ..t.clone() })
        })
        .collect();
    Plan {
        name: whole.name.clone(),
        spec_hash: whole.spec_hash.clone(),
        service: None,
        targets: targets.iter().map(|&t| whole.targets[t].clone()).collect(),
        flows: flow_plans,
        load,
        slo,
        regression: Vec::new(),
        regression_alpha: whole.regression_alpha,
        shard: None,
        start_at: None,
        scenarios: Vec::new(),
    }
}
