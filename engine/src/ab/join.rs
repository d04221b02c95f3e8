//! A side's short runs, one after the other, joined into its whole run: alternating mode's
//! epochs and duet mode's sub-runs. Counts and histograms are added, each short run's complete
//! seconds laid end to end (a short run under a second adds none), the measured time summed,
//! so that rates are over the summed measured time.

use std::time::Duration;

use crate::run::RunOutput;

/// An output with nothing measured yet, shaped for the spec's `stages`, from the first short
/// run's (whose run-level fields it keeps: start time, negotiated parameters), before `join`
/// adds it.
pub(super) fn empty(first: &RunOutput, stages: usize) -> RunOutput {
    RunOutput {
        started_at: first.started_at,
        elapsed: Duration::ZERO,
        targets: first.targets.iter().map(|_| Default::default()).collect(),
        flows: first.flows.iter().map(|_| Default::default()).collect(),
        stages: (0..stages).map(|_| Default::default()).collect(),
        stage_cpu_s: vec![0.0; stages],
        time_series: Vec::new(),
        epochs: Vec::new(),
        cpu: (Duration::ZERO, Duration::ZERO),
        interrupted: false,
        aborted_by: None,
        windows: first.windows.iter().map(|_| None).collect(),
        negotiated: first.negotiated.clone(),
        udp_buffers: first.udp_buffers,
    }
}

/// A side's output so far and its next short run's, as one run: counts and histograms added,
/// the next run's complete seconds after the last, measured time summed. `stage_of(i)`: the
/// spec's stage where the next run's stage `i` goes (its generator stats and CPU time), `None`
/// to leave it out.
pub(super) fn join(
    mut joined: RunOutput,
    next: RunOutput,
    stage_of: &dyn Fn(usize) -> Option<usize>,
) -> RunOutput {
    for (sum, t) in joined.targets.iter_mut().zip(&next.targets) {
        sum.merge(t);
    }
    for (sum, f) in joined.flows.iter_mut().zip(&next.flows) {
        sum.merge(f);
    }
    for (i, (s, cpu)) in next.stages.iter().zip(&next.stage_cpu_s).enumerate() {
        let Some(into) = stage_of(i) else { continue };
        if let Some(sum) = joined.stages.get_mut(into) {
            sum.merge(s);
        }
        if let Some(sum) = joined.stage_cpu_s.get_mut(into) {
            *sum += cpu;
        }
    }
    let offset = joined.time_series.len() as u32;
    joined.time_series.extend(
        next.time_series
            .iter()
            .filter(|s| f64::from(s.index) + 1.0 <= next.elapsed.as_secs_f64() + 1e-9)
            .map(|s| crate::measure::SpanSample {
                index: s.index + offset,
                ..s.clone()
            }),
    );
    joined.elapsed += next.elapsed;
    joined.cpu = (joined.cpu.0 + next.cpu.0, joined.cpu.1 + next.cpu.1);
    joined.interrupted |= next.interrupted;
    joined.aborted_by = joined.aborted_by.or(next.aborted_by);
    for (sum, w) in joined.windows.iter_mut().zip(next.windows) {
        // The first failing window stays; else the latest.
        if sum.as_ref().is_none_or(|s| s.passed) && w.is_some() {
            *sum = w;
        }
    }
    joined
}
