//! Alternating mode (`loadgate ab --mode alternating`): the sides take turns, one epoch at a
//! time, in ABBA blocks (A B, then B A, …) whose first side is drawn at random, so that a
//! drift of the machine over a block weighs on both sides alike (a balanced crossover order:
//! Kalibera & Jones, "Rigorous Benchmarking in Reasonable Time", ISMM 2013, on randomising
//! and balancing the order of repeated measurements).
//!
//! Each side plays the spec's load timeline across its own epochs: its epoch `j` is a short
//! run of the spec's level over `[warmup + j·E, warmup + (j+1)·E)` of that timeline (its first
//! epoch preceded by the spec's warmup stages). Epoch `j` of the baseline pairs with epoch `j`
//! of the candidate: the two epochs of one ABBA half-block, next to each other in time. A
//! side's epochs are then joined into its whole result (`join.rs`): counts and histograms
//! added, the seconds laid end to end.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;

use super::join::{empty, join};
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

/// Both sides, epoch by epoch in ABBA order: each side's whole output (its epochs joined) and
/// its epochs. `first_is_baseline` picks the side that opens the first block.
pub(super) fn run_alternating(
    plans: &[Plan; 2],
    stop: &Arc<AtomicBool>,
    epoch: Duration,
    first_is_baseline: bool,
) -> anyhow::Result<[(RunOutput, Vec<EpochSample>); 2]> {
    let measured = check(&plans[0], epoch)?;
    let epochs = (measured.as_nanos() / epoch.as_nanos()) as u32;
    let mut sides: [(Option<RunOutput>, Vec<EpochSample>); 2] = Default::default();
    for j in 0..epochs {
        // Blocks of two pairs: A B, then B A.
        let baseline_first = first_is_baseline == (j % 2 == 0);
        let order = if baseline_first { [0, 1] } else { [1, 0] };
        for side in order {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let slice = slice(&plans[side], j, epoch);
            let output = run::prepare(&slice)
                .and_then(|ready| ready.run(Instant::now(), stop.clone(), &mut |_| {}))
                .with_context(|| format!("the {} side", ["baseline", "candidate"][side]))?;
            sides[side].1.push(epoch_sample(j, &output));
            // The epoch's own stages: the spec's warmup stages (first epoch only), then its one
            // measured stage, which goes to the spec's stage the epoch starts in.
            let stage = stage_of(&plans[side], j, epoch);
            let last = output.stages.len().saturating_sub(1);
            let joined = match sides[side].0.take() {
                None => empty(&output, plans[side].load.stages.len()),
                Some(joined) => joined,
            };
            sides[side].0 = Some(join(joined, output, &|i| {
                Some(if i == last { stage } else { i })
            }));
        }
    }
    let [(b, be), (c, ce)] = sides;
    let missing = || anyhow::anyhow!("the run was stopped before each side had an epoch");
    Ok([(b.ok_or_else(missing)?, be), (c.ok_or_else(missing)?, ce)])
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
    let responses = h.len();
    let errors: u64 = all.errors.iter().sum();
    let unexpected = all.errors[crate::measure::ErrorKind::UnexpectedStatus as usize];
    EpochSample {
        epoch: j,
        requests: responses + errors - unexpected,
        responses,
        errors,
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
    fn count_mode_and_fractional_epochs_are_refused() {
        let plans = [plan(), plan()];
        let stop = Arc::new(AtomicBool::new(false));
        let err = run_alternating(&plans, &stop, Duration::from_millis(500), true).unwrap_err();
        assert!(err.to_string().contains("whole seconds"), "{err}");
        let mut counted = plan();
        counted.load.stop = Stop::Requests(100);
        let err = run_alternating(
            &[counted.clone(), counted],
            &stop,
            Duration::from_secs(1),
            true,
        )
        .unwrap_err();
        assert!(err.to_string().contains("request count"), "{err}");
    }
}
