//! Alternating mode (`loadgate ab --mode alternating`): the sides take turns, one epoch at a
//! time, in ABBA blocks (A B, then B A, …) whose first side is drawn at random, so that a
//! drift of the machine over a block weighs on both sides alike (a balanced crossover order:
//! Kalibera & Jones, "Rigorous Benchmarking in Reasonable Time", ISMM 2013, on randomising
//! and balancing the order of repeated measurements).
//!
//! Each side plays the spec's load timeline across its own epochs: its epoch `j` is a short
//! run of the spec's level over `[warmup + j·E, warmup + (j+1)·E)` of that timeline (its first
//! epoch preceded by the spec's warmup stages). Epoch `j` of the baseline pairs with epoch `j`
//! of the candidate: the two epochs of one ABBA half-block, next to each other in time.
//!
//! The epochs are grouped into sub-runs of consecutive epochs (`--sub-runs`, at most one per
//! epoch pair: [`groups`]), each opened by the side that did not open the one before, its
//! epochs alternating from there; the paired verdict is taken across the sub-runs, as in duet
//! mode. A side's epochs are joined into its sub-run's result and its whole result
//! (`join.rs`): counts and histograms added, the seconds laid end to end.

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;

use super::join::{empty, join};
use super::sub_runs::{self, Joined, Ran, SidePart};
use crate::plan::{Plan, Stage, Stop};
use crate::result::ab::EpochSample;
use crate::run::{self, RunOutput};

/// Why alternating mode cannot run a spec.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AlternateError {
    /// Count mode has no timeline to cut into epochs.
    #[error(
        "alternating mode needs a spec whose load ends after a `duration`, not a request count"
    )]
    CountMode,
    /// An epoch is not a whole number of seconds.
    #[error("alternating mode takes epochs of whole seconds (1s, 2s, …), not {0:?}")]
    Epoch(Duration),
}

/// Whether alternating mode can run `plan` in epochs of `epoch`; its measured duration if so.
pub(super) fn check(plan: &Plan, epoch: Duration) -> Result<Duration, AlternateError> {
    let Stop::Duration(measured) = plan.load.stop else {
        return Err(AlternateError::CountMode);
    };
    if epoch.is_zero() || epoch.subsec_nanos() != 0 {
        return Err(AlternateError::Epoch(epoch));
    }
    Ok(measured)
}

/// Both sides, epoch by epoch in ABBA order, the epochs grouped into `r` sub-runs of
/// consecutive epochs (fewer, an even number, when there are fewer epochs: [`groups`]): each
/// side's whole output (its epochs joined) and epochs, and the sub-runs. Sub-run `g` is opened
/// by the baseline when `sub_runs::baseline_first(first, g)`, and its epochs alternate from
/// there (A B, B A, … within it).
pub(super) fn run_alternating(
    plans: &[Plan; 2],
    stop: &Arc<AtomicBool>,
    epoch: Duration,
    (r, first): (u32, bool),
) -> anyhow::Result<Ran> {
    let measured = check(&plans[0], epoch)?;
    let epochs = (measured.as_nanos() / epoch.as_nanos()) as u32;
    let mut joined = Joined::new(plans);
    for (g, range) in (0..).zip(groups(epochs, r)) {
        let group_first = sub_runs::baseline_first(first, g);
        let mut sides: [Option<(RunOutput, Vec<EpochSample>)>; 2] = [None, None];
        for j in range.clone() {
            let baseline_first = group_first == ((j - range.start) % 2 == 0);
            let order = if baseline_first { [0, 1] } else { [1, 0] };
            for side in order {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let slice = slice(&plans[side], j, epoch);
                let output = run::prepare(&slice)
                    .and_then(|ready| ready.run(Instant::now(), stop.clone(), &mut |_| {}))
                    .with_context(|| format!("the {} side", ["baseline", "candidate"][side]))?;
                // The epoch's own stages: the spec's warmup stages (first epoch only), then
                // its one measured stage, the sub-run's stage of epoch `j`.
                let last = output.stages.len().saturating_sub(1);
                let into = group_warmups(plans, range.start) + (j - range.start) as usize;
                let (so_far, mut samples) = match sides[side].take() {
                    Some(s) => s,
                    None => (empty(&output, group_stages(plans, &range)), Vec::new()),
                };
                samples.push(epoch_sample(j, &output));
                let joined = join(so_far, output, &|i| Some(if i == last { into } else { i }));
                sides[side] = Some((joined, samples));
            }
        }
        let [Some(b), Some(c)] = sides else { break };
        let part = |side: usize, (output, epochs): (RunOutput, Vec<EpochSample>)| {
            let plan = group_plan(&plans[side], &range, epoch);
            let warmups = group_warmups(plans, range.start);
            SidePart {
                late: sub_runs::late(epochs.iter().map(|e| (e.late, e.requests))),
                stage_of: (0..plan.load.stages.len())
                    .map(|i| match i.checked_sub(warmups) {
                        None => Some(i),
                        Some(n) => Some(stage_of(&plans[side], range.start + n as u32, epoch)),
                    })
                    .collect(),
                plan,
                output,
                epochs,
            }
        };
        joined.add(g, group_first, [part(0, b), part(1, c)]);
    }
    joined
        .finish()
        .ok_or_else(|| anyhow::anyhow!("the run was stopped before each side had an epoch"))
}

/// The sub-runs of `epochs` epochs: `r` runs of consecutive epochs, fewer when there are fewer
/// epochs (an even number then, unless a single epoch), as even in length as they can be.
fn groups(epochs: u32, r: u32) -> Vec<Range<u32>> {
    let n = match epochs.min(r) {
        n if n >= 2 => n - n % 2,
        n => n,
    };
    (0..n)
        .map(|g| g * epochs / n..(g + 1) * epochs / n)
        .collect()
}

/// The spec's warmup stages in the sub-run that starts at epoch `start` (only the first has
/// them).
fn group_warmups(plans: &[Plan; 2], start: u32) -> usize {
    if start == 0 {
        plans[0].load.stages.iter().take_while(|s| s.warmup).count()
    } else {
        0
    }
}

/// The stages of the sub-run of `range`: its warmups, then one per epoch.
fn group_stages(plans: &[Plan; 2], range: &Range<u32>) -> usize {
    group_warmups(plans, range.start) + range.len()
}

/// The plan a sub-run of the epochs in `range` carried out: the spec's warmup stages (the
/// first sub-run's), then each epoch's stage, measured for their length.
fn group_plan(plan: &Plan, range: &Range<u32>, epoch: Duration) -> Plan {
    let mut stages: Vec<Stage> = Vec::new();
    for j in range.clone() {
        let s = slice(plan, j, epoch);
        let own = if j == range.start {
            s.load.stages.len()
        } else {
            1
        };
        stages.extend_from_slice(&s.load.stages[s.load.stages.len() - own..]);
    }
    let mut group = plan.clone();
    group.load.stages = stages;
    group.load.stop = Stop::Duration(epoch * range.len() as u32);
    group
}

/// The plan of epoch `j` of a side: one stage of `epoch` at the spec's level over that part of
/// its measured timeline, measured whole; the first epoch is preceded by the spec's warmup
/// stages.
fn slice(plan: &Plan, j: u32, epoch: Duration) -> Plan {
    let load = &plan.load;
    let warmup = load.warmup().as_secs_f64();
    let t0 = warmup + epoch.as_secs_f64() * f64::from(j);
    let t1 = t0 + epoch.as_secs_f64();
    let mut stages: Vec<Stage> = if j == 0 {
        load.stages
            .iter()
            .take_while(|s| s.warmup)
            .copied()
            .collect()
    } else {
        Vec::new()
    };
    stages.push(Stage {
        burst: 0,
        duration: Some(epoch),
        from: load.level_at(t0),
        to: load.level_at(t1),
        warmup: false,
    });
    let mut slice = plan.clone();
    slice.load.stages = stages;
    slice.load.stop = Stop::Duration(epoch);
    slice
}

/// The index, among the spec's stages, of the stage epoch `j` starts in.
fn stage_of(plan: &Plan, j: u32, epoch: Duration) -> usize {
    let t = plan.load.warmup() + epoch * j;
    let mut end = Duration::ZERO;
    for (i, stage) in plan.load.stages.iter().enumerate() {
        end += stage.duration.unwrap_or(Duration::MAX);
        if t < end {
            return i;
        }
    }
    plan.load.stages.len().saturating_sub(1)
}

/// One epoch of a side from its short run: counts and percentiles of all targets together
/// (HDR histograms of 3 significant digits), and the requests that started late (from the
/// run's seconds).
fn epoch_sample(j: u32, output: &RunOutput) -> EpochSample {
    let mut all = crate::measure::TargetStats::default();
    for t in &output.targets {
        all.merge(t);
    }
    let h = &all.latency_us;
    let at = |q| {
        if h.is_empty() {
            0
        } else {
            h.value_at_quantile(q)
        }
    };
    EpochSample {
        epoch: j,
        requests: all.requests(),
        responses: all.responses(),
        errors: all.error_count(),
        late: output.epochs.iter().map(|e| e.late).sum(),
        p50_us: at(0.5),
        p90_us: at(0.9),
        p95_us: at(0.95),
        p99_us: at(0.99),
        p99_9_us: at(0.999),
        max_us: h.max(),
        mean_us: if h.is_empty() { 0.0 } else { h.mean() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::SourceSpec;

    /// An open-model plan: 1 s of warmup at 100/s, 1 s at 100/s, 100/s → 300/s over 4 s, 2 s
    /// at 300/s (7 s measured).
    fn plan() -> Plan {
        let text = "version: 1\nname: alt\ntargets:\n  - name: t\n    url: http://127.0.0.1:9/x\n\
                    load:\n  model: open\n  max_in_flight: 10\n  stages:\n\
                    \x20   - {duration: 1s, level: 100/s, warmup: true}\n\
                    \x20   - {duration: 1s, level: 100/s}\n\
                    \x20   - {duration: 4s, level: 300/s}\n\
                    \x20   - {duration: 2s, level: 300/s}\n";
        let source = SourceSpec::parse("spec.yaml".into(), text.to_string()).unwrap();
        crate::validate::check(&source, &|_| None).expect("a valid spec")
    }

    #[test]
    fn an_epoch_is_the_spec_timeline_between_its_bounds() {
        let plan = plan();
        let second = Duration::from_secs(1);
        let level = |p: &Plan| {
            let s = p.load.stages.last().unwrap();
            (s.from, s.to)
        };
        // Epoch 0: the warmup stage, then [1 s, 2 s) of the timeline: 100/s.
        let first = slice(&plan, 0, second);
        assert_eq!(first.load.warmup(), plan.load.warmup());
        assert_eq!(first.load.stages.len(), 2);
        assert_eq!(level(&first), (100.0, 100.0));
        assert_eq!(first.load.stop, Stop::Duration(second));
        // Epoch 1: [2 s, 3 s), the first quarter of the ramp; no warmup.
        let ramp = slice(&plan, 1, second);
        assert_eq!(ramp.load.warmup(), Duration::ZERO);
        assert_eq!(ramp.load.stages.len(), 1);
        assert_eq!(level(&ramp), (100.0, 150.0));
        assert_eq!(level(&slice(&plan, 5, second)), (300.0, 300.0));
        // The spec's stages the epochs start in.
        let stages: Vec<usize> = (0..7).map(|j| stage_of(&plan, j, second)).collect();
        assert_eq!(stages, [1, 2, 2, 2, 2, 3, 3]);
    }

    #[test]
    fn epochs_group_into_sub_runs_with_their_own_plans() {
        assert_eq!(groups(6, 8), [0..1, 1..2, 2..3, 3..4, 4..5, 5..6]);
        assert_eq!(groups(7, 8), [0..1, 1..2, 2..3, 3..4, 4..5, 5..7]);
        assert_eq!(
            groups(16, 8),
            [0..2, 2..4, 4..6, 6..8, 8..10, 10..12, 12..14, 14..16]
        );
        assert_eq!(groups(9, 4), [0..2, 2..4, 4..6, 6..9]);
        assert_eq!(groups(1, 8).len(), 1);
        // The first sub-run's plan: the warmup, then its epochs' levels; a later one's, its
        // epochs only.
        let plan = plan();
        let second = Duration::from_secs(1);
        let first = group_plan(&plan, &(0..2), second);
        let levels: Vec<_> = first
            .load
            .stages
            .iter()
            .map(|s| (s.warmup, s.from, s.to))
            .collect();
        assert_eq!(
            levels,
            [
                (true, 0.0, 100.0),
                (false, 100.0, 100.0),
                (false, 100.0, 150.0)
            ]
        );
        assert_eq!(first.load.stop, Stop::Duration(2 * second));
        let later = group_plan(&plan, &(5..7), second);
        assert_eq!(later.load.warmup(), Duration::ZERO);
        assert_eq!(later.load.stages.len(), 2);
    }

    #[test]
    fn count_mode_and_fractional_epochs_are_refused() {
        let plans = [plan(), plan()];
        let stop = Arc::new(AtomicBool::new(false));
        let err =
            run_alternating(&plans, &stop, Duration::from_millis(500), (8, true)).unwrap_err();
        assert!(err.to_string().contains("whole seconds"), "{err}");
        let mut counted = plan();
        counted.load.stop = Stop::Requests(100);
        let err = run_alternating(
            &[counted.clone(), counted],
            &stop,
            Duration::from_secs(1),
            (8, true),
        )
        .unwrap_err();
        assert!(err.to_string().contains("request count"), "{err}");
    }
}
