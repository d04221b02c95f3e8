//! What the worker threads share, read-only (but for the request tickets): the targets,
//! their addresses, the schedule's instants and the stop flag.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::flow::Flows;
use super::open::Budget;
use super::timer::PreciseTimer;
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
    /// When nothing more may start: the end of the stages (duration mode), or measuring's
    /// start + `load.max_duration` (count mode; none without it).
    pub(super) end: Option<Instant>,
    /// Count mode: the measured requests (with flows: iterations) left to each worker.
    pub(super) tickets: Option<Tickets>,
    /// When workers give up on requests (iterations) still in flight, which are then not
    /// counted: `end` + `load.graceful_stop`, else `end` + the longest timeout + 1 s.
    pub(super) hard_deadline: Option<Instant>,
    pub(super) stop: Arc<AtomicBool>,
    /// Open model: the run's in-flight budget over the workers (none in the closed model).
    pub(super) budget: Budget,
    /// Tests on a virtual clock: the fake server that takes every request (`fake.rs`).
    #[cfg(test)]
    pub(super) fake: Option<Arc<super::fake::Server>>,
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
        let end = match load.stop {
            Stop::Duration(d) => Some(d),
            Stop::Requests(_) => load.max_duration,
        }
        .map(|d| measure_start + d);
        let grace = load
            .graceful_stop
            .unwrap_or(max_timeout + Duration::from_secs(1));
        Shared {
            targets: plan.targets.clone(),
            endpoint_of,
            addrs,
            cumulative_weights,
            scheduled: load.model == Model::Open || load.pacing.is_some(),
            stage_starts,
            tickets: match load.stop {
                Stop::Requests(n) => Some(Tickets::new(n, &loops_per_worker(&load))),
                Stop::Duration(_) => None,
            },
            hard_deadline: end.map(|end| end + grace),
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
            #[cfg(test)]
            fake: None,
        }
    }

    /// A precise timer for a dispatcher or a paced virtual user; `None` when the system gives
    /// none (tokio's timer then serves). In tests against the fake server, one on tokio's
    /// paused clock, whose ticks count from the run's start (`virtual_clock.rs` lays the run
    /// out from its runtime's first instant).
    pub(super) fn precise_timer(&self) -> Option<PreciseTimer> {
        #[cfg(test)]
        if self.fake.is_some() {
            return Some(PreciseTimer::Paused(self.start));
        }
        PreciseTimer::new().ok()
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

    /// May a request (with flows: an iteration) of worker `worker` due at `intended` start?
    /// `None`: the run is over (stopped, past the end, out of tickets, or out of data rows
    /// read `once`: the iterations in flight then finish). `Some(measured)`: yes, and whether
    /// it is counted (it is due after the warmup).
    #[inline]
    pub(super) fn admit(&self, intended: Instant, worker: usize) -> Option<bool> {
        if self.over(intended) || self.flows.used_up.load(Ordering::Relaxed) {
            return None;
        }
        if intended < self.measure_start {
            return Some(false);
        }
        if let Some(tickets) = &self.tickets
            && !tickets.take(worker)
        {
            return None;
        }
        Some(true)
    }
}

/// Count mode's tickets: the run's measured requests (with flows: iterations), shared out
/// among the workers in proportion to their request loops, each worker's its own. With one
/// pool, a worker whose thread started late (a busy machine wakes threads milliseconds
/// apart) found every ticket taken by the first ones, whose users had sent them all: its
/// connections carried nothing, and a run of `-n 100 -c 20` applied 10 connections of the 20
/// planned. Taking what is left of another worker's share (once it had started) still let a
/// thread preempted after its first request lose the rest. Count mode has no stages (they set
/// the run's length), so every worker's users are active from the start and send its share.
pub(super) struct Tickets {
    /// Tickets left, per worker.
    left: Vec<AtomicU64>,
}

impl Tickets {
    /// `total` tickets for workers with `loops[w]` request loops each, in proportion
    /// (largest remainder to the first workers).
    pub(super) fn new(total: u64, loops: &[u64]) -> Tickets {
        let all = loops.iter().sum::<u64>().max(1);
        let mut shares: Vec<u64> = loops
            .iter()
            .map(|&l| (u128::from(total) * u128::from(l) / u128::from(all)) as u64)
            .collect();
        // Fewer than the workers with loops: the fractions rounded down sum to less.
        let mut rest = total - shares.iter().sum::<u64>();
        for (share, _) in shares.iter_mut().zip(loops).filter(|(_, l)| **l > 0) {
            if rest == 0 {
                break;
            }
            *share += 1;
            rest -= 1;
        }
        Tickets {
            left: shares.into_iter().map(AtomicU64::new).collect(),
        }
    }

    /// Tickets left, over all workers.
    pub(super) fn left(&self) -> u64 {
        self.left.iter().map(|l| l.load(Ordering::Relaxed)).sum()
    }

    /// Takes a ticket of worker `worker`'s share. `false`: none left to it.
    pub(super) fn take(&self, worker: usize) -> bool {
        self.left.get(worker).is_some_and(|left| {
            left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_ok()
        })
    }
}

/// What each worker's share of the tickets is in proportion to (`super::workers`'s count of
/// workers): closed model, its virtual users (every `workers`-th group of `streams`, from its
/// index, as `vu::users` deals them); open model, 1 each, as arrivals are dealt (every
/// `workers`-th, `vu::dispatcher`), so that each worker's share is its arrivals.
fn loops_per_worker(load: &LoadPlan) -> Vec<u64> {
    let workers = super::workers_for(load);
    if load.model == Model::Open {
        return vec![1; workers];
    }
    let (streams, total) = (load.streams as usize, load.request_loops());
    let mut loops = vec![0; workers];
    for g in 0..load.connection_groups() {
        loops[g % workers] += (((g + 1) * streams).min(total) - g * streams) as u64;
    }
    loops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_that_has_not_started_keeps_its_share() {
        // 100 tickets, 2 workers of 10 users: worker 0 alone gets its 50, not all 100.
        let tickets = Tickets::new(100, &[10, 10]);
        let first = (0..200).take_while(|_| tickets.take(0)).count();
        assert_eq!(first, 50);
        let second = (0..200).take_while(|_| tickets.take(1)).count();
        assert_eq!(second, 50);
    }

    #[test]
    fn shares_are_in_proportion_and_add_up() {
        let left = |tickets: Tickets| -> Vec<u64> {
            tickets
                .left
                .iter()
                .map(|l| l.load(Ordering::Relaxed))
                .collect()
        };
        assert_eq!(left(Tickets::new(7, &[3, 3, 1])), [3, 3, 1]);
        // 7 × 2/5 and 7 × 1/5 rounded down (2, 2, 1), and the 2 left to the first workers
        // with loops.
        assert_eq!(left(Tickets::new(7, &[0, 2, 2, 1])), [0, 3, 3, 1]);
    }
}

/// The run's two stop flags, as the calling thread reads and sets them: `stop` is set from
/// outside (Ctrl-C, SIGTERM, a service that died); `halt` tells the workers to stop, set on
/// `stop` or when an `abort_on_fail` threshold fails.
#[derive(Clone, Copy)]
pub(super) struct StopFlags<'a> {
    /// Set from outside the run.
    pub(super) stop: &'a std::sync::atomic::AtomicBool,
    /// Read by the workers ([`Shared::halted`]).
    pub(super) halt: &'a std::sync::atomic::AtomicBool,
}
