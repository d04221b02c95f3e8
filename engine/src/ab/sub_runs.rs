//! Duet mode's sub-runs: the spec's measured duration `D` split into `R` sub-runs (an even
//! number, at least [`MIN_SUB_RUNS`]), one after the other, with the sides' positions swapped
//! from one to the next. The side in the first position has its thread started first and its
//! schedule not offset (the other side's is offset by half an inter-arrival interval, see
//! `mod.rs`); which side opens the first sub-run is drawn at random, then it alternates, so a
//! position's advantage (start order, one generator's stall, thread placement) falls on each
//! side in half of the sub-runs and cancels in their mean (Bulej et al., "Duet Benchmarking",
//! ICPE 2020; Kalibera & Jones, "Rigorous Benchmarking in Reasonable Time", ISMM 2013). The
//! paired verdict is taken across the sub-runs (`compare`).
//!
//! # Each sub-run's load
//!
//! A sub-run plays the spec's **whole timeline compressed** `R` times: each measured stage
//! lasts `1/R` of its length at the same levels, so the sub-runs are replicates of one another
//! (a ramp is ramped in each) and, laid end to end, hold the spec's load exactly: the sides'
//! whole results (`join.rs`) match the spec's stages. In count mode (`requests: N`) each
//! sub-run stops after `⌈N/R⌉` requests. The first sub-run gets the spec's warmup; later ones,
//! the services being up and warm already, a short one at the level where measuring starts:
//! the spec's warmup, at most [`LATER_WARMUP`] and at most a sub-run's measured length (none
//! when the spec has none). So the invocation plans at most `W + 2·D` of load (`W + D` for a
//! run): within the bound of 3 × one run of the spec, with `W + D` to spare for each
//! sub-run's connection check and thread start.
//!
//! # The number of sub-runs
//!
//! More sub-runs give the across-sub-run interval more degrees of freedom (Student t with
//! `R − 1`: at the Holm step of 33 rules the one-sided quantile is about 10 for 3 degrees of
//! freedom and 4.8 for 7), while each sub-run still needs enough responses for its
//! percentiles and costs a short warmup. The default is [`DEFAULT_SUB_RUNS`] when each
//! measures at least [`SHORTEST_SUB_RUN`], else the largest even number that keeps them that
//! long, never below [`MIN_SUB_RUNS`].
//!
//! # Late sub-runs
//!
//! A sub-run is **late** when on either side more than 1% of its requests started more than
//! 10 ms after they were due (the per-epoch lateness check, applied to the sub-run as one
//! epoch: the generator did not apply the planned load). More than half of the sub-runs late
//! make the measurement invalid (exit 5): both sides' health says so.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::join::{empty, join};
use crate::plan::{Plan, Stage, Stop};
use crate::result::ab::{AbResult, EpochSample, SubRun, complete_epochs};
use crate::result::{self, RunResult};
use crate::run::{Progress, RunOutput};

/// The fewest sub-runs per invocation: the paired verdict's minimum.
pub(crate) const MIN_SUB_RUNS: u32 = crate::stats::MIN_SUB_RUNS as u32;

/// Sub-runs per invocation when neither `--sub-runs` nor `ab.sub_runs` gives them, as long as
/// each measures at least [`SHORTEST_SUB_RUN`].
pub(crate) const DEFAULT_SUB_RUNS: u32 = 8;

/// The shortest measured length of a sub-run that the default keeps (a 0.5 s sub-run at 400
/// requests/s holds 200 responses: a p(99) between its two slowest).
pub(crate) const SHORTEST_SUB_RUN: Duration = Duration::from_millis(500);

/// The longest warmup of a sub-run after the first.
pub(crate) const LATER_WARMUP: Duration = Duration::from_millis(250);

/// Parses `--sub-runs`: an even number, at least [`MIN_SUB_RUNS`]. Errors: the message.
pub(crate) fn parse_sub_runs(text: &str) -> Result<u32, String> {
    let n = text
        .parse::<u32>()
        .map_err(|_| format!("expected a whole number of sub-runs, not `{text}`"))?;
    check(n)
}

/// `n` when it is even and at least [`MIN_SUB_RUNS`]. Errors: the message, saying why.
fn check(n: u32) -> Result<u32, String> {
    if n < MIN_SUB_RUNS || !n.is_multiple_of(2) {
        return Err(format!(
            "sub-runs come in an even number, at least {MIN_SUB_RUNS} (the sides swap \
             positions from one sub-run to the next, and the paired verdict is taken across at \
             least {MIN_SUB_RUNS} of them), not {n}"
        ));
    }
    Ok(n)
}

/// The default number of sub-runs for a spec measuring `measured` (`None`: a request count):
/// [`DEFAULT_SUB_RUNS`], fewer when a sub-run would measure under [`SHORTEST_SUB_RUN`], never
/// below [`MIN_SUB_RUNS`].
pub(crate) fn default_count(measured: Option<Duration>) -> u32 {
    let Some(measured) = measured else {
        return DEFAULT_SUB_RUNS;
    };
    let fits = (measured.as_nanos() / SHORTEST_SUB_RUN.as_nanos()) as u32;
    (fits - fits % 2).clamp(MIN_SUB_RUNS, DEFAULT_SUB_RUNS)
}

/// The plan of sub-run `k` (0-based) of `r`: the spec's measured stages `r` times shorter,
/// after the spec's warmup (`k = 0`) or a short one ([`later_warmup`]); stopped after `D/r`
/// or, in count mode, `⌈N/r⌉` requests.
pub(super) fn sub_plan(plan: &Plan, k: u32, r: u32) -> Plan {
    let load = &plan.load;
    let measured = load.stages.iter().filter(|s| !s.warmup).map(|s| Stage {
        duration: s.duration.map(|d| d / r),
        ..*s
    });
    let mut stages: Vec<Stage> = if k == 0 {
        load.stages
            .iter()
            .take_while(|s| s.warmup)
            .copied()
            .collect()
    } else {
        let warmup = later_warmup(plan, r);
        let level = load.level_at(load.warmup().as_secs_f64());
        (!warmup.is_zero())
            .then_some(Stage {
                burst: 0,
                duration: Some(warmup),
                from: level,
                to: level,
                warmup: true,
            })
            .into_iter()
            .collect()
    };
    stages.extend(measured);
    let mut sub = plan.clone();
    sub.load.stages = stages;
    sub.load.stop = match load.stop {
        Stop::Duration(d) => Stop::Duration(d / r),
        Stop::Requests(n) => Stop::Requests(n.div_ceil(u64::from(r)).max(1)),
    };
    if k > 0 {
        sub.load.warmup_requests = 0;
    }
    sub
}

/// The warmup of the sub-runs after the first: the spec's (a warmup of N requests counting as
/// [`LATER_WARMUP`]), at most [`LATER_WARMUP`], at most a sub-run's measured length.
fn later_warmup(plan: &Plan, r: u32) -> Duration {
    let load = &plan.load;
    let spec = if load.warmup_requests > 0 {
        LATER_WARMUP
    } else {
        load.warmup()
    };
    let sub_run = match load.stop {
        Stop::Duration(d) => d / r,
        Stop::Requests(_) => LATER_WARMUP,
    };
    spec.min(LATER_WARMUP).min(sub_run)
}

/// The generator fell behind in a side's sub-run of `epochs` (all of them, the last cut short
/// included): more than 1% of its requests started more than 10 ms after they were due (the
/// per-epoch check, over the sub-run).
pub(super) fn late(epochs: impl IntoIterator<Item = (u64, u64)>) -> bool {
    let (late, requests) = epochs
        .into_iter()
        .fold((0, 0), |(l, n), (late, requests)| (l + late, n + requests));
    late * 100 > requests
}

/// `baseline_first` of sub-run `k` when the first sub-run's is `first`: it alternates.
pub(super) fn baseline_first(first: bool, k: u32) -> bool {
    first == k.is_multiple_of(2)
}

/// One side's part of a sub-run, as [`Joined::add`] takes it.
pub(super) struct SidePart {
    /// The plan the sub-run carried out (its result's load and health are judged against it).
    pub(super) plan: Plan,
    /// What it measured.
    pub(super) output: RunOutput,
    /// Its complete epochs, numbered on from the sides' epochs before ([`Joined::next_epoch`]).
    pub(super) epochs: Vec<EpochSample>,
    /// The generator fell behind in it ([`late`]).
    pub(super) late: bool,
    /// Per stage of `plan`, the spec's stage its generator stats and CPU time go to in the
    /// side's whole result; `None`: left out.
    pub(super) stage_of: Vec<Option<usize>>,
}

/// Each side's whole output and its complete epochs, and the sub-runs.
pub(super) type Ran = ([(RunOutput, Vec<EpochSample>); 2], Vec<SubRun>);

/// One duet of two sub-plans: `(plans, baseline_first, progress)` to each side's output.
pub(super) type Duet<'a> = dyn Fn(&[Plan; 2], bool, &mut (dyn FnMut(&Progress) + Send)) -> anyhow::Result<[RunOutput; 2]>
    + 'a;

/// Each side's sub-runs joined so far: its whole output and its complete epochs, numbered on
/// across the sub-runs; and the sub-runs' records.
pub(super) struct Joined<'a> {
    /// The spec's plans, whose stages the whole outputs have.
    plans: &'a [Plan; 2],
    sides: [Option<(RunOutput, Vec<EpochSample>)>; 2],
    sub_runs: Vec<SubRun>,
}

impl<'a> Joined<'a> {
    pub(super) fn new(plans: &'a [Plan; 2]) -> Joined<'a> {
        Joined {
            plans,
            sides: [None, None],
            sub_runs: Vec::new(),
        }
    }

    /// The number the next sub-run's first epoch takes: after the last of either side's.
    pub(super) fn next_epoch(&self) -> u32 {
        self.sides
            .iter()
            .flatten()
            .filter_map(|(_, e)| e.last().map(|e| e.epoch + 1))
            .max()
            .unwrap_or(0)
    }

    /// Adds sub-run `k`, with `baseline_first`: its record (each side's result without time
    /// series) and each side's output and epochs joined to the side's whole.
    pub(super) fn add(&mut self, k: u32, baseline_first: bool, parts: [SidePart; 2]) {
        let result = |part: &SidePart| -> RunResult {
            let mut r = result::build_ab_side(&part.plan, &part.output);
            r.time_series.clear();
            for t in &mut r.targets {
                t.time_series.clear();
            }
            r
        };
        self.sub_runs.push(SubRun {
            index: k,
            baseline_first,
            late: parts.iter().any(|p| p.late),
            baseline: result(&parts[0]),
            candidate: result(&parts[1]),
        });
        for (side, part) in parts.into_iter().enumerate() {
            let (whole, mut epochs) = match self.sides[side].take() {
                Some(joined) => joined,
                None => (
                    empty(&part.output, self.plans[side].load.stages.len()),
                    Vec::new(),
                ),
            };
            epochs.extend(part.epochs);
            let stage_of = |i: usize| part.stage_of.get(i).copied().flatten();
            self.sides[side] = Some((join(whole, part.output, &stage_of), epochs));
        }
    }

    /// Each side's whole output and epochs, and the sub-runs; `None` when no sub-run ran.
    pub(super) fn finish(self) -> Option<Ran> {
        let [b, c] = self.sides;
        Some(([b?, c?], self.sub_runs))
    }
}

/// Side `side`'s part of duet sub-run `k`: `sub` carried out as `output`, its complete epochs
/// of `epoch_ms` numbered on from `first_epoch`. The spec's warmup stages take the first
/// sub-run's; the later ones' short warmups are left out; measured stage `i` is the spec's.
fn duet_part(
    spec: &Plan,
    (k, sub, output): (u32, Plan, RunOutput),
    epoch_ms: u64,
    first_epoch: u32,
) -> SidePart {
    let mut epochs = complete_epochs(&output.epochs, epoch_ms, output.elapsed.as_secs_f64());
    for e in &mut epochs {
        e.epoch += first_epoch;
    }
    let warmups = |p: &Plan| p.load.stages.iter().filter(|s| s.warmup).count();
    let (spec_warmups, own_warmups) = (warmups(spec), warmups(&sub));
    let stage_of = sub
        .load
        .stages
        .iter()
        .enumerate()
        .map(|(i, s)| match (s.warmup, k) {
            (true, 0) => Some(i),
            (true, _) => None,
            (false, _) => Some(spec_warmups + i - own_warmups),
        })
        .collect();
    SidePart {
        late: late(output.epochs.iter().map(|e| (e.late, e.requests))),
        plan: sub,
        output,
        epochs,
        stage_of,
    }
}

/// Runs `r` sub-runs of `plans` one after the other with `run(sub_plans, baseline_first,
/// progress)` (a duet), until `stop`; the first sub-run's `baseline_first` is `first`. The
/// progress line goes on across the sub-runs: `progress` sees the measured time and
/// responses of the sub-runs before added.
pub(super) fn run_sub_runs(
    plans: &[Plan; 2],
    (r, first): (u32, bool),
    stop: &Arc<AtomicBool>,
    epoch_ms: u64,
    progress: &mut (dyn FnMut(&Progress) + Send),
    run: &Duet<'_>,
) -> anyhow::Result<Ran> {
    let mut joined = Joined::new(plans);
    let (mut before, mut responses, mut errors) = (Duration::ZERO, 0, 0);
    for k in 0..r {
        if k > 0 && stop.load(Ordering::Relaxed) {
            break;
        }
        let subs = [sub_plan(&plans[0], k, r), sub_plan(&plans[1], k, r)];
        let baseline_first = baseline_first(first, k);
        let [b, c] = run(&subs, baseline_first, &mut |p: &Progress| {
            progress(&Progress {
                elapsed: before + p.elapsed,
                responses: responses + p.responses,
                errors: errors + p.errors,
                warming_up: p.warming_up && k == 0,
                ..*p
            });
        })?;
        before += b.elapsed;
        responses += b.targets.iter().map(|t| t.latency_us.len()).sum::<u64>();
        errors += b
            .targets
            .iter()
            .map(|t| t.errors.iter().sum::<u64>())
            .sum::<u64>();
        let first_epoch = joined.next_epoch();
        let [bs, cs] = subs;
        let parts = [
            duet_part(&plans[0], (k, bs, b), epoch_ms, first_epoch),
            duet_part(&plans[1], (k, cs, c), epoch_ms, first_epoch),
        ];
        joined.add(k, baseline_first, parts);
    }
    joined
        .finish()
        .ok_or_else(|| anyhow::anyhow!("the run was stopped before its first sub-run ended"))
}

/// More than half of `ab`'s sub-runs late: the generator did not apply the planned load, so
/// both sides' health is made invalid, saying how many.
pub(super) fn judge_lateness(ab: &mut AbResult) {
    let late = ab.sub_runs.iter().filter(|s| s.late).count();
    let all = ab.sub_runs.len();
    if late * 2 <= all {
        return;
    }
    let problem = format!(
        "the generator fell behind in {late} of {all} sub-runs (more than 1% of a side's \
         requests started over 10 ms late): more than half, so the pairs measure the generator"
    );
    for side in [&mut ab.baseline, &mut ab.candidate] {
        side.health.valid = false;
        side.health.problems.push(problem.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::SourceSpec;

    /// An open-model plan: `warmup` of warmup at 100/s, 1 s at 100/s, 100/s → 300/s over 2 s,
    /// 1 s at 300/s (4 s measured).
    fn timeline(warmup: &str) -> Plan {
        let text = format!(
            "version: 1\nname: sub\ntargets:\n  - name: t\n    url: http://127.0.0.1:9/x\n\
             load:\n  model: open\n  max_in_flight: 10\n  stages:\n\
             \x20   - {{duration: {warmup}, level: 100/s, warmup: true}}\n\
             \x20   - {{duration: 1s, level: 100/s}}\n\
             \x20   - {{duration: 2s, level: 300/s}}\n\
             \x20   - {{duration: 1s, level: 300/s}}\n"
        );
        let source = SourceSpec::parse("spec.yaml".into(), text).unwrap();
        crate::validate::check(&source, &|_| None).expect("a valid spec")
    }

    #[test]
    fn sub_runs_are_even_and_at_least_four() {
        assert_eq!(parse_sub_runs("8"), Ok(8));
        assert_eq!(parse_sub_runs("4"), Ok(4));
        for bad in ["2", "3", "7", "0"] {
            let err = parse_sub_runs(bad).unwrap_err();
            assert!(err.contains("an even number, at least 4"), "{bad}: {err}");
        }
        assert!(parse_sub_runs("x").unwrap_err().contains("whole number"));
    }

    #[test]
    fn the_default_keeps_sub_runs_of_half_a_second_and_at_least_four() {
        let s = Duration::from_secs;
        assert_eq!(default_count(Some(s(8))), 8);
        assert_eq!(default_count(Some(s(4))), 8);
        assert_eq!(default_count(Some(Duration::from_millis(3_500))), 6);
        assert_eq!(default_count(Some(s(3))), 6);
        assert_eq!(default_count(Some(s(2))), 4);
        assert_eq!(default_count(Some(Duration::from_millis(300))), 4);
        assert_eq!(default_count(Some(s(600))), 8);
        assert_eq!(default_count(None), 8);
    }

    #[test]
    fn a_sub_run_plays_the_whole_timeline_compressed() {
        let spec = timeline("1s");
        let plan = &spec;
        let ms = Duration::from_millis;
        // The first: the spec's warmup, then each measured stage a quarter as long.
        let first = sub_plan(plan, 0, 4);
        assert_eq!(first.load.warmup(), plan.load.warmup());
        let lengths: Vec<_> = first.load.stages.iter().map(|s| s.duration).collect();
        assert_eq!(
            lengths,
            [Some(ms(1_000)), Some(ms(250)), Some(ms(500)), Some(ms(250))]
        );
        assert_eq!(first.load.stop, Stop::Duration(ms(1_000)));
        let levels: Vec<_> = first.load.stages.iter().map(|s| (s.from, s.to)).collect();
        let planned: Vec<_> = plan.load.stages.iter().map(|s| (s.from, s.to)).collect();
        assert_eq!(levels, planned);
        // Later ones: 250 ms of warmup at the level where measuring starts.
        let later = sub_plan(plan, 3, 4);
        assert_eq!(later.load.warmup(), ms(250));
        assert_eq!(later.load.stages.len(), 4);
        assert_eq!(later.load.stages[0].from, 100.0);
        // A short spec warmup stays short; none stays none; a sub-run bounds it.
        assert_eq!(sub_plan(&timeline("100ms"), 1, 4).load.warmup(), ms(100));
        let mut none = plan.clone();
        none.load.stages.remove(0);
        assert_eq!(sub_plan(&none, 1, 4).load.warmup(), Duration::ZERO);
        assert_eq!(sub_plan(plan, 1, 40).load.warmup(), ms(100));
        // Count mode: the count split, rounded up.
        let mut counted = plan.clone();
        counted.load.stop = Stop::Requests(1_001);
        assert_eq!(sub_plan(&counted, 2, 4).load.stop, Stop::Requests(251));
    }

    #[test]
    fn positions_alternate_from_the_drawn_first() {
        let order: Vec<bool> = (0..6).map(|k| baseline_first(false, k)).collect();
        assert_eq!(order, [false, true, false, true, false, true]);
        assert!(baseline_first(true, 0) && !baseline_first(true, 1));
    }

    /// The planned length of an invocation, warmups and measured time, stays within 3 × one
    /// run's for every number of sub-runs the default or a user picks.
    #[test]
    fn the_planned_load_stays_within_twice_a_run() {
        for warmup in ["100ms", "250ms", "1s", "5s"] {
            let plan = &timeline(warmup);
            let run = plan.load.warmup() + Duration::from_secs(4);
            for r in [4, 6, 8, 16, 40] {
                let planned: Duration = (0..r)
                    .map(|k| {
                        let sub = sub_plan(plan, k, r);
                        let Stop::Duration(d) = sub.load.stop else {
                            panic!()
                        };
                        sub.load.warmup() + d
                    })
                    .sum();
                assert!(planned <= run + Duration::from_secs(4), "{warmup} × {r}");
            }
        }
    }

    /// More than half of the sub-runs late make both sides invalid; half do not.
    #[test]
    fn more_than_half_late_is_an_invalid_measurement() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/results/v2-current.json"
        );
        let side = crate::result::read(std::path::Path::new(path)).expect("the fixture reads");
        assert!(side.health.valid);
        let ab = |late: &[bool]| AbResult {
            ab_version: crate::result::ab::AB_VERSION,
            mode: "duet".to_string(),
            epoch_ms: 250,
            baseline: side.clone(),
            candidate: side.clone(),
            sub_runs: (0..)
                .zip(late)
                .map(|(k, &late)| SubRun {
                    index: k,
                    baseline_first: baseline_first(true, k),
                    late,
                    baseline: side.clone(),
                    candidate: side.clone(),
                })
                .collect(),
            baseline_epochs: vec![],
            candidate_epochs: vec![],
            machine_busy: None,
        };
        let mut half = ab(&[true, false, true, false]);
        judge_lateness(&mut half);
        assert!(half.baseline.health.valid && half.candidate.health.valid);
        let mut most = ab(&[true, false, true, true]);
        judge_lateness(&mut most);
        for side in [&most.baseline, &most.candidate] {
            assert!(!side.health.valid);
            assert!(
                side.health
                    .problems
                    .iter()
                    .any(|p| p.contains("fell behind in 3 of 4 sub-runs")),
                "{:?}",
                side.health.problems
            );
        }
        // A late sub-run: more than 1% of a side's requests started late.
        assert!(late([(3, 100), (0, 100)]));
        assert!(!late([(1, 100), (1, 100)]));
    }
}
