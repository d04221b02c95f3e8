//! The `loadgate ab --out` document: both sides' results whole (each usable by `compare` and
//! `report` as any result), each sub-run's two results (the sides' positions swapped from one
//! sub-run to the next), from which `compare` judges the rules, and each side's epochs;
//! `report` renders the paired report (`loadgate report AB.json`).

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::io::{check, from_value, read_json};
use super::{ReadError, RunResult};
use crate::measure::SpanSample;

/// Version of the `loadgate ab --out` document; bumped on any incompatible change. (Version 1,
/// written for a week before epochs were recorded, held a verdict instead; version 2, before
/// sub-runs, held one duet whose sides never swapped positions: neither is read.)
pub const AB_VERSION: u32 = 3;

/// What `loadgate ab --out` writes.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AbResult {
    /// Version of this format: [`AB_VERSION`].
    pub ab_version: u32,
    /// How the sides were loaded: `duet` (both at the same time, on one schedule).
    pub mode: String,
    /// Length of an epoch, in milliseconds: the pairs' unit of time.
    pub epoch_ms: u64,
    /// The baseline side's whole result over all sub-runs: histograms merged, counts summed,
    /// rates over the summed measured time (each sub-run's complete seconds laid end to end in
    /// its time series; the later sub-runs' short warmups are left out of its stages).
    pub baseline: RunResult,
    /// The candidate side's whole result over all sub-runs, as the baseline's.
    pub candidate: RunResult,
    /// The sub-runs, in the order they ran (`loadgate ab --sub-runs`); each side's position
    /// alternates from one to the next.
    pub sub_runs: Vec<SubRun>,
    /// The baseline side's complete epochs, in order, numbered on across the sub-runs; epoch
    /// `i` pairs with the candidate's epoch `i`.
    pub baseline_epochs: Vec<EpochSample>,
    /// The candidate side's complete epochs, in order.
    pub candidate_epochs: Vec<EpochSample>,
    /// Duet only: the share (0 to 1) of all the machine's CPUs' time that was busy while
    /// the sides ran (`/proc/stat`: services, loadgate and anything else on it); absent where
    /// it was not measured (alternating mode, not Linux). Above [`MACHINE_SATURATED`] the
    /// comparison says so (`AbResult::saturation_note`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_busy: Option<f64>,
}

/// One sub-run of `loadgate ab`: both sides loaded at the same time for D/R of measured time.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SubRun {
    /// 0-based, in the order they ran.
    pub index: u32,
    /// The baseline held the first position in this sub-run (its thread started first, its
    /// schedule not offset); the candidate did otherwise.
    pub baseline_first: bool,
    /// The generator fell behind on either side in this sub-run (as the per-epoch lateness check
    /// defines): left out of the verdict and counted.
    pub late: bool,
    /// Each side's result for this sub-run alone (no time series).
    pub baseline: RunResult,
    /// The candidate's, as the baseline's.
    pub candidate: RunResult,
}

/// The share of all CPUs busy during a duet above which the machine is called saturated:
/// the two sides then competed for it (Bulej et al. 2020 assume that they do not).
pub const MACHINE_SATURATED: f64 = 0.9;

impl AbResult {
    /// The note for a duet that saturated the machine, with the measured share and the way
    /// out (`--mode alternating`); `None` otherwise.
    pub(crate) fn saturation_note(&self) -> Option<String> {
        let busy = self.machine_busy?;
        (self.mode == "duet" && busy > MACHINE_SATURATED).then(|| {
            format!(
                "the machine was saturated during the duet: {:.0}% of its {} CPUs' time was \
                 busy (above {:.0}%; loadgate, both services and anything else on it). Duet \
                 loads both sides at once, so they competed for the CPU and the paired changes \
                 may be the machine's, not the candidate's: run `loadgate ab --mode \
                 alternating` (one side at a time), or on a larger machine",
                busy * 100.0,
                self.candidate.environment.cpu_count,
                MACHINE_SATURATED * 100.0
            )
        })
    }
}

/// One epoch of one side, all targets together. Latencies (µs) come from a histogram of 2
/// significant digits and are 0 when the epoch had no response.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EpochSample {
    /// The epoch's index since measuring started: it covers `[epoch × epoch_ms, (epoch + 1) ×
    /// epoch_ms)` milliseconds of the side's measured window.
    pub epoch: u32,
    /// Requests that ended in the epoch: complete responses plus transport errors.
    pub requests: u64,
    /// Complete responses (any status) that ended in the epoch.
    pub responses: u64,
    /// Failed requests (transport errors and unexpected statuses) that ended in the epoch.
    pub errors: u64,
    /// Requests that ended in the epoch and had started more than 10 ms after they were due
    /// (open model and pacing): the generator fell behind its schedule. An epoch where more
    /// than 1% of the requests started late is left out of the pairs.
    pub late: u64,
    /// Median latency, µs.
    pub p50_us: u64,
    /// 90th percentile, µs.
    pub p90_us: u64,
    /// 95th percentile, µs.
    pub p95_us: u64,
    /// 99th percentile, µs.
    pub p99_us: u64,
    /// 99.9th percentile, µs.
    pub p99_9_us: u64,
    /// Longest, µs.
    pub max_us: u64,
    /// Mean latency, µs.
    pub mean_us: f64,
}

/// The complete epochs of a run's epoch series: those that end within its measured window of
/// `duration_s` seconds (the last, cut short when the run ended, is left out), each of
/// `epoch_ms` milliseconds.
pub(crate) fn complete_epochs(
    epochs: &[SpanSample],
    epoch_ms: u64,
    duration_s: f64,
) -> Vec<EpochSample> {
    epochs
        .iter()
        .filter(|s| (f64::from(s.index) + 1.0) * epoch_ms as f64 <= duration_s * 1_000.0 + 1e-6)
        .map(|s| EpochSample {
            epoch: s.index,
            requests: s.requests,
            responses: s.responses,
            errors: s.errors,
            late: s.late,
            p50_us: s.p50_us,
            p90_us: s.p90_us,
            p95_us: s.p95_us,
            p99_us: s.p99_us,
            p99_9_us: s.p99_9_us,
            max_us: s.max_us,
            mean_us: s.mean_us,
        })
        .collect()
}

/// Reads `path` as a `loadgate ab --out` document; `None` when it is JSON without an
/// `ab_version` (a result, for [`super::read`]). Errors: the file cannot be read, is not JSON,
/// has another `ab_version`, or its sides are not results of this version or fail
/// [`super::read`]'s checks (each error naming the field, e.g. `baseline.duration_s`).
pub fn read(path: &Path) -> Result<Option<AbResult>, ReadError> {
    let shown = path.display().to_string();
    let invalid = |reason: String| ReadError::Invalid {
        path: shown.clone(),
        reason,
    };
    let value = read_json(path)?;
    let Some(version) = value.get("ab_version") else {
        return Ok(None);
    };
    if version.as_u64() == Some(2) {
        return Err(invalid(
            "it is a `loadgate ab` document of ab_version 2, written before sub-runs (one duet \
             whose sides never swapped positions, which the paired verdict cannot judge); this \
             loadgate reads ab_version 3: run `loadgate ab` again with this loadgate"
                .to_string(),
        ));
    }
    if version.as_u64() != Some(u64::from(AB_VERSION)) {
        return Err(invalid(format!(
            "it is a `loadgate ab` document of ab_version {version}; this loadgate reads \
             ab_version {AB_VERSION}: run `loadgate ab` again with this loadgate"
        )));
    }
    let ab: AbResult = from_value(value).map_err(invalid)?;
    check(&ab.baseline, "baseline.").map_err(invalid)?;
    check(&ab.candidate, "candidate.").map_err(invalid)?;
    for s in &ab.sub_runs {
        check(&s.baseline, &format!("sub_runs[{}].baseline.", s.index)).map_err(invalid)?;
        check(&s.candidate, &format!("sub_runs[{}].candidate.", s.index)).map_err(invalid)?;
    }
    Ok(Some(ab))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_written_before_sub_runs_is_refused_saying_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ab.json");
        std::fs::write(&path, r#"{"ab_version": 2, "mode": "duet"}"#).unwrap();
        let err = read(&path).unwrap_err().to_string();
        assert!(
            err.contains("ab_version 2, written before sub-runs"),
            "{err}"
        );
        assert!(err.contains("run `loadgate ab` again"), "{err}");
        std::fs::write(&path, r#"{"result_version": 4}"#).unwrap();
        assert!(read(&path).unwrap().is_none());
    }
}
