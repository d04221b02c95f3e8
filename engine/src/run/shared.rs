//! What the worker threads share, read-only (but for the request tickets): the targets,
//! their addresses, the schedule's instants and the stop flag.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::flow::Flows;
use super::open::Budget;
use crate::measure::StageStats;
use crate::plan::{LoadPlan, Model, Plan, Stop, TargetPlan};

/// Everything the workers share, read-only (but for the request tickets).
pub(super) struct Shared {
    pub(super) targets: Vec<TargetPlan>,
    /// `endpoint_of[target]` indexes `addrs`.
    pub(super) endpoint_of: Vec<usize>,
    pub(super) addrs: Vec<SocketAddr>,
    /// Running sums of the targets' weights, for a weighted choice.
    pub(super) cumulative_weights: Vec<u32>,
    pub(super) load: LoadPlan,
    /// The flows, their weights and data cursors (none for a plan of targets).
    pub(super) flows: Flows,
    /// Requests have a due time apart from their start (open model, pacing): record lateness.
    pub(super) scheduled: bool,
    pub(super) start: Instant,
    /// Start of each stage.
    pub(super) stage_starts: Vec<Instant>,
    pub(super) measure_start: Instant,
    /// Length of the spans workers hand over, from `measure_start`: 1 s, or an epoch of
    /// `loadgate ab` that divides a second.
    pub(super) epoch: Duration,
    /// End of the stages (duration mode).
    pub(super) end: Option<Instant>,
    /// Count mode: the number of measured requests (with flows: iterations), and how many
    /// have been started.
    pub(super) tickets: Option<(u64, AtomicU64)>,
    /// When workers give up on requests still in flight.
    pub(super) hard_deadline: Option<Instant>,
    pub(super) stop: Arc<AtomicBool>,
    /// Open model: the run's in-flight budget over the workers (none in the closed model).
    pub(super) budget: Budget,
}

impl Shared {
    /// What the `workers` workers of a run of `plan` share: the targets' `addrs` (indexed
    /// through `endpoint_of`), the stages laid out from `start`, the length of the workers'
    /// spans (`epoch`), the `stop` flag and the open model's in-flight budget.
    pub(super) fn new(
        (plan, workers): (&Plan, usize),
        (endpoint_of, addrs): (Vec<usize>, Vec<SocketAddr>),
        start: Instant,
        epoch: Duration,
        stop: Arc<AtomicBool>,
    ) -> Shared {
        let load = plan.load.clone();
        let cumulative_weights = plan
            .targets
            .iter()
            .scan(0u32, |sum, t| {
                *sum = sum.saturating_add(t.weight);
                Some(*sum)
            })
            .collect();
        let max_timeout = plan
            .targets
            .iter()
            .map(|t| t.timeout)
            .max()
            .unwrap_or_default();
        let measure_start = start + load.warmup();
        let mut stage_starts = Vec::with_capacity(load.stages.len());
        let mut stage_start = start;
        for stage in &load.stages {
            stage_starts.push(stage_start);
            stage_start += stage.duration.unwrap_or_default();
        }
        let end = load.measured_duration().map(|d| measure_start + d);
        Shared {
            targets: plan.targets.clone(),
            endpoint_of,
            addrs,
            cumulative_weights,
            scheduled: load.model == Model::Open || load.pacing.is_some(),
            stage_starts,
            tickets: match load.stop {
                Stop::Requests(n) => Some((n, AtomicU64::new(0))),
                Stop::Duration(_) => None,
            },
            hard_deadline: end.map(|end| end + max_timeout + Duration::from_secs(1)),
            flows: Flows::new(plan),
            load,
            start,
            measure_start,
            epoch,
            end,
            stop,
            budget: Budget::new(match plan.load.model {
                Model::Open => workers,
                Model::Closed => 0,
            }),
        }
    }

    #[inline]
    pub(super) fn pick(&self, rng: &mut fastrand::Rng) -> usize {
        match self.cumulative_weights.as_slice() {
            [_] => 0,
            weights => {
                let total = *weights.last().expect("at least one target");
                let x = rng.u32(0..total);
                weights.iter().position(|&w| x < w).unwrap_or(0)
            }
        }
    }

    /// Seconds from the start of the run to `t`.
    pub(super) fn secs(&self, t: Instant) -> f64 {
        t.saturating_duration_since(self.start).as_secs_f64()
    }

    /// The instant `secs` seconds after the start.
    pub(super) fn at(&self, secs: f64) -> Instant {
        self.start + Duration::from_secs_f64(secs.max(0.0))
    }

    /// Index of the stage that `t` falls in.
    #[inline]
    pub(super) fn stage_of(&self, t: Instant) -> usize {
        self.stage_starts.iter().rposition(|s| *s <= t).unwrap_or(0)
    }

    /// Adds a request's time in flight, `[from, to)`, to the busy time of the stages it
    /// overlaps, cut at the end of the stages (duration mode): a request that outlasts its
    /// stage is in flight in the next one, and after the last one in none.
    #[inline]
    pub(super) fn add_busy(&self, stages: &mut [StageStats], from: Instant, to: Instant) {
        let to = self.end.map_or(to, |end| to.min(end));
        let mut i = self.stage_of(from);
        let mut at = from;
        while at < to {
            let until = self
                .stage_starts
                .get(i + 1)
                .map_or(to, |next| (*next).min(to));
            stages[i].busy_us += until.saturating_duration_since(at).as_micros() as u64;
            at = until;
            i += 1;
        }
    }

    /// Whether the run was stopped (Ctrl-C, or an `abort_on_fail` threshold).
    #[inline]
    pub(super) fn halted(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Whether nothing due at `t` may start any more: stopped, or past the end of the stages.
    #[inline]
    pub(super) fn over(&self, t: Instant) -> bool {
        self.halted() || self.end.is_some_and(|end| t >= end)
    }

    /// May a request (with flows: an iteration) due at `intended` start? `None`: the run is
    /// over (stopped, past the end, out of tickets, or out of data rows read `once`: the
    /// iterations in flight then finish). `Some(measured)`: yes, and whether it is counted
    /// (it is due after the warmup).
    #[inline]
    pub(super) fn admit(&self, intended: Instant) -> Option<bool> {
        if self.over(intended) || self.flows.used_up.load(Ordering::Relaxed) {
            return None;
        }
        if intended < self.measure_start {
            return Some(false);
        }
        if let Some((total, tickets)) = &self.tickets
            && tickets.fetch_add(1, Ordering::Relaxed) >= *total
        {
            return None;
        }
        Some(true)
    }
}
