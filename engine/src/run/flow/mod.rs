//! Flows on the hot path: a virtual user's iterations of a flow (`plan::flow`), step by step.
//!
//! Per virtual user: one value buffer per variable slot of each flow (reused; emptied at the
//! start of each iteration, then filled from the iteration's data row and the extractors),
//! one buffer the request is rendered into (reused), and a cookie jar (RFC 6265, by
//! cookie_store) emptied at the start of each iteration (docs/spec.md, "Cookies"; a cookie
//! set again replaces the one of the same name, domain and path). Each step's request goes
//! through [`Vu::request`] exactly as a target's
//! (recorded in its target's stats, epoch, stage health), with the rendered bytes in place of
//! the target's pre-built ones; the response's head is kept for the jar and the extractors,
//! its body only when an extractor needs it.
//!
//! An iteration's duration runs from when it was due (the open model's arrival, a paced
//! virtual user's schedule, else its start) to the end of its last step, that step's think
//! time included. An iteration cut short by the end of the run (its duration passed, or a
//! stop) is not recorded.

mod extract;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use cookie_store::CookieStore;

use super::clock;
use super::exchange::{Job, Times, Vu};
use super::multiplexed::Outgoing;
use super::pause::{pause_until, think};
use crate::measure::{ErrorKind, IterationFailure};
use crate::plan::flow::Generators;
use crate::plan::flow::{DataOrder, DataPlan, OnError, Source, StepPlan};
use crate::plan::{FlowPlan, Plan};

/// The flows of a run, shared by the workers: the plans, their weights and the data cursors.
pub(super) struct Flows {
    pub(super) plans: Vec<FlowPlan>,
    /// Running sums of the flows' weights, for a weighted choice.
    cumulative_weights: Vec<u32>,
    /// Per flow: the next row of its data file (orders `sequential` and `once`), over all
    /// workers.
    cursors: Vec<AtomicU64>,
    /// Per target: the next row of its data file, likewise.
    target_cursors: Vec<AtomicU64>,
    /// A data file read `once` has no rows left: the run ends.
    pub(super) used_up: AtomicBool,
}

impl Flows {
    /// The flows of `plan` (none for a plan of targets).
    pub(super) fn new(plan: &Plan) -> Flows {
        Flows {
            plans: plan.flows.clone(),
            cumulative_weights: plan
                .flows
                .iter()
                .scan(0u32, |sum, f| {
                    *sum = sum.saturating_add(f.weight);
                    Some(*sum)
                })
                .collect(),
            cursors: plan.flows.iter().map(|_| AtomicU64::new(0)).collect(),
            target_cursors: plan.targets.iter().map(|_| AtomicU64::new(0)).collect(),
            used_up: AtomicBool::new(false),
        }
    }

    /// Whether the run has flows (its work is iterations, not requests).
    pub(super) fn any(&self) -> bool {
        !self.plans.is_empty()
    }

    /// A flow, drawn by weight.
    fn pick(&self, rng: &mut fastrand::Rng) -> usize {
        match self.cumulative_weights.as_slice() {
            [_] => 0,
            weights => {
                let total = (*weights.last().expect("at least one flow")).max(1);
                let x = rng.u32(0..total);
                weights.iter().position(|&w| x < w).unwrap_or(0)
            }
        }
    }

    /// The data row of flow `f`'s next iteration, by its order: `Some(None)` without a data
    /// file; `None` when a file read `once` has no rows left.
    fn row(&self, f: usize, rng: &mut fastrand::Rng) -> Option<Option<&[String]>> {
        match &self.plans[f].data {
            Some(data) => next_row(data, &self.cursors[f], rng),
            None => Some(None),
        }
    }
}

/// The next row of `data` by its order (`cursor`: the next row over all workers):
/// `Some(None)` when it has none; `None` when a file read `once` has no rows left.
fn next_row<'d>(
    data: &'d DataPlan,
    cursor: &AtomicU64,
    rng: &mut fastrand::Rng,
) -> Option<Option<&'d [String]>> {
    let rows = &data.rows;
    if rows.is_empty() {
        return Some(None);
    }
    let n = rows.len() as u64;
    let r = match data.order {
        DataOrder::Sequential => cursor.fetch_add(1, Ordering::Relaxed) % n,
        DataOrder::Random => rng.u64(0..n),
        DataOrder::Once => {
            let r = cursor.fetch_add(1, Ordering::Relaxed);
            if r >= n {
                return None;
            }
            r
        }
    };
    Some(Some(&rows[r as usize]))
}

/// One virtual user's variables, request buffer and cookie jar, its number and its
/// iteration count.
pub(super) struct User {
    /// Its number within the run, from 1 (`{{vu}}`): its request loop's index + 1.
    number: u64,
    /// Its iterations (a target's: requests) begun so far.
    begun: u64,
    /// The number of its current iteration, from 0 (`{{iteration}}`).
    iteration: u64,
    /// Per flow, per slot: the value (its buffer reused) and whether it is set.
    vars: Vec<Vars>,
    /// The request being sent, rendered.
    request: Vec<u8>,
    /// The `Cookie` header's value being sent.
    cookie: Vec<u8>,
    jar: CookieStore,
}

/// A flow's variables: a value per slot, set or not in the current iteration.
#[derive(Debug, Default)]
pub(super) struct Vars {
    values: Vec<Vec<u8>>,
    set: Vec<bool>,
}

impl Vars {
    fn new(slots: usize) -> Vars {
        Vars {
            values: vec![Vec::new(); slots],
            set: vec![false; slots],
        }
    }

    /// The value of `slot`, if it is set.
    fn get(&self, slot: usize) -> Option<&[u8]> {
        self.set[slot].then(|| self.values[slot].as_slice())
    }

    /// Unsets every slot (keeping the buffers).
    fn clear(&mut self) {
        self.set.iter_mut().for_each(|s| *s = false);
    }

    /// Unsets `slot`.
    fn unset(&mut self, slot: usize) {
        self.set[slot] = false;
    }

    /// Sets `slot` to `value`.
    fn put(&mut self, slot: usize, value: &[u8]) {
        let buf = self.buffer(slot);
        buf.extend_from_slice(value);
    }

    /// The buffer of `slot`, emptied and marked set, to write its value into.
    fn buffer(&mut self, slot: usize) -> &mut Vec<u8> {
        self.set[slot] = true;
        let buf = &mut self.values[slot];
        buf.clear();
        buf
    }
}

/// The first failure of an iteration: its reason and, for a request, the request's kind.
type Failure = (IterationFailure, Option<ErrorKind>);

impl User {
    /// The state of virtual user `number` (from 1: `{{vu}}`) for the flows of `flows` (or the
    /// targets rendered per request).
    pub(super) fn new(flows: &Flows, number: u64) -> User {
        User {
            number,
            begun: 0,
            iteration: 0,
            vars: flows
                .plans
                .iter()
                .map(|f| Vars::new(f.vars.len()))
                .collect(),
            request: Vec::with_capacity(1024),
            cookie: Vec::new(),
            jar: CookieStore::new(),
        }
    }

    /// Runs one iteration of a flow drawn by weight on `vu`, due at `times.intended` (`times`:
    /// its first step's), recording it when `measured`. Returns why its first failed request
    /// failed, if one did (the caller backs off after a failed connect). With a data file read
    /// `once` whose rows are used up, runs nothing and ends the run: [`Flows::used_up`] admits no more iterations
    /// ([`Shared::admit`](super::Shared::admit)), and those in flight finish.
    pub(super) async fn iteration(
        &mut self,
        vu: &mut Vu<'_>,
        rng: &mut fastrand::Rng,
        times: Times,
        measured: bool,
    ) -> Option<ErrorKind> {
        let shared = vu.shared;
        let flows = &shared.flows;
        let f = flows.pick(rng);
        let flow = &flows.plans[f];
        let Some(row) = flows.row(f, rng) else {
            flows.used_up.store(true, Ordering::Relaxed);
            return None;
        };
        // Each iteration starts with an empty jar (k6's default), so that the cookies of one
        // data row's user never go with the next one's requests.
        if flow.cookies && self.jar.iter_any().next().is_some() {
            self.jar.clear();
        }
        self.iteration = self.begun;
        self.begun += 1;
        let vars = &mut self.vars[f];
        vars.clear();
        for (slot, value) in row.unwrap_or_default().iter().enumerate() {
            vars.put(slot, value.as_bytes());
        }
        let mut step_times = times;
        let mut failure: Option<Failure> = None;
        let mut request_failure = None;
        for (j, step) in flow.steps.iter().enumerate() {
            if j > 0 {
                let now = clock::now();
                // Past the end: with a graceful stop (a scenario's, k6's `gracefulStop`) the
                // iteration goes on until the hard deadline cuts it; without one it is cut
                // short here. Either way a cut iteration is not recorded.
                let graceful = shared.load.graceful_stop.is_some() && !shared.halted();
                if shared.over(now) && !graceful {
                    return request_failure;
                }
                step_times = Times::at(now);
            }
            let outcome = self.step(vu, (f, step), rng, step_times, measured).await;
            if let Err((reason, kind)) = outcome {
                failure.get_or_insert((reason, kind));
                request_failure = request_failure.or(kind);
                if flow.on_error != OnError::Continue {
                    break;
                }
            }
            let think = think(step.think_time, rng);
            if !think.is_zero() && !pause_until(shared, clock::now() + think).await {
                return request_failure;
            }
        }
        if measured {
            let duration_us = clock::now().duration_since(times.intended).as_micros() as u64;
            vu.stats.borrow_mut().flows[f].record(duration_us, failure);
        }
        request_failure
    }

    /// Runs `step` of flow number `f` on `vu` (recorded when `measured`): renders its request
    /// (failing with [`IterationFailure::MissingVariable`], sending nothing, when a variable
    /// has no value), sends it with [`Vu::request`] at `times`, stores the response's cookies
    /// and runs the extractors. Errors: the step's failure; with `on_error: fail_iteration`, a
    /// failed check of a response with the expected status is one
    /// ([`IterationFailure::Check`]).
    async fn step(
        &mut self,
        vu: &mut Vu<'_>,
        (f, step): (usize, &StepPlan),
        rng: &mut fastrand::Rng,
        times: Times,
        measured: bool,
    ) -> Result<(), Failure> {
        let shared = vu.shared;
        let flow = &shared.flows.plans[f];
        // An empty jar (a virtual user's first step) is not searched.
        let cookie = if flow.cookies && self.jar.iter_any().next().is_some() {
            self.cookie.clear();
            for (name, value) in self.jar.get_request_values(&step.url) {
                if !self.cookie.is_empty() {
                    self.cookie.extend_from_slice(b"; ");
                }
                self.cookie.extend_from_slice(name.as_bytes());
                self.cookie.push(b'=');
                self.cookie.extend_from_slice(value.as_bytes());
            }
            Some(self.cookie.as_slice())
        } else {
            None
        };
        let vars = &mut self.vars[f];
        let mut gens = Generators {
            rng,
            vu: self.number,
            iteration: self.iteration,
        };
        step.template
            .render(
                |slot| vars.get(slot),
                cookie,
                Some(&mut gens),
                &mut self.request,
            )
            .map_err(|_| (IterationFailure::MissingVariable, None))?;
        // The head is kept for the jar and the extractors, the body for those that read it.
        let needs_head = flow.cookies || !step.extract.is_empty();
        let needs_body = step
            .extract
            .iter()
            .any(|e| matches!(e.source, Source::Json(_) | Source::Regex(_)));
        let job = Job {
            target: step.target,
            outgoing: Outgoing::Rendered(&self.request),
            keep: needs_head.then_some(needs_body),
            measured,
        };
        let answer = vu.request(job, times).await;
        if flow.on_error == OnError::FailIteration && answer.is_ok() && vu.conns.check_failed() {
            return Err((IterationFailure::Check, None));
        }
        if needs_head && matches!(answer, Ok(_) | Err(ErrorKind::UnexpectedStatus)) {
            let capture = vu.conns.capture();
            let jar = flow.cookies.then_some((&mut self.jar, &step.url));
            let extracted =
                extract::response(&capture.head, &capture.body, jar, &step.extract, vars);
            answer.map_err(|kind| (IterationFailure::Request, Some(kind)))?;
            return if extracted {
                Ok(())
            } else {
                Err((IterationFailure::Extraction, None))
            };
        }
        answer
            .map(|_| ())
            .map_err(|kind| (IterationFailure::Request, Some(kind)))
    }
}

/// One unit of a virtual user's work on `vu` (at `times`): a request of a target drawn by
/// weight or, with flows (`user`: the virtual user's flow state), an iteration of a flow drawn
/// by weight. `measured`: whether it is recorded. Returns why its (first) failed request
/// failed, if one did.
pub(super) async fn work(
    vu: &mut Vu<'_>,
    user: &mut Option<User>,
    rng: &mut fastrand::Rng,
    times: Times,
    measured: bool,
) -> Option<ErrorKind> {
    // Tests on a virtual clock: the fake server takes the request (`run/virtual_clock.rs`).
    #[cfg(test)]
    if vu.shared.fake.is_some() {
        return vu.fake_request(times, measured).await;
    }
    let shared = vu.shared;
    if shared.flows.any()
        && let Some(user) = user
    {
        // Boxed: inline, an iteration's future would make every request's future larger.
        return Box::pin(user.iteration(vu, rng, times, measured)).await;
    }
    let t = shared.pick(rng);
    if shared.targets[t].template.is_none() {
        return vu.request(Job::planned(t, measured), times).await.err();
    }
    let user = user.get_or_insert_with(|| User::new(&shared.flows, vu.number));
    user.target_request(vu, t, rng, times, measured).await
}

impl User {
    /// Sends a request of target `t` (a target rendered per request) on `vu` at `times`,
    /// recorded when `measured`: its data file's next row and generated values rendered into
    /// its request. With a data file read `once` whose rows are used up, sends nothing and
    /// ends the run ([`Flows::used_up`]). Returns why it failed, if it did.
    async fn target_request(
        &mut self,
        vu: &mut Vu<'_>,
        t: usize,
        rng: &mut fastrand::Rng,
        times: Times,
        measured: bool,
    ) -> Option<ErrorKind> {
        let shared = vu.shared;
        let template = shared.targets[t].template.as_deref()?;
        let row = match &template.data {
            Some(data) => {
                let Some(row) = next_row(data, &shared.flows.target_cursors[t], rng) else {
                    shared.flows.used_up.store(true, Ordering::Relaxed);
                    return None;
                };
                row
            }
            None => None,
        };
        let mut gens = Generators {
            rng,
            vu: self.number,
            iteration: self.begun,
        };
        self.begun += 1;
        let value = |c: usize| row.map(|r| r[c].as_bytes());
        // Every slot is a column of the row: rendering cannot fail.
        (template.request)
            .render(value, None, Some(&mut gens), &mut self.request)
            .ok()?;
        let job = Job {
            target: t,
            outgoing: Outgoing::Rendered(&self.request),
            keep: None,
            measured,
        };
        vu.request(job, times).await.err()
    }
}

#[cfg(test)]
mod tests;
