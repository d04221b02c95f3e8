//! What a merge checks before it adds anything, and what the checks tell about the results
//! taken together: when each started and where its seconds go ([`Starts`]), which shards
//! were merged and which are missing ([`MergeInfo`]).

use std::collections::BTreeMap;
use std::time::SystemTime;

use super::{MergeError, MergeOptions};
use crate::plan::shard::Shard;
use crate::result::{MergeInfo, RunResult};

/// The most the results' `started_at` may be apart, µs (1 s): shards of one run start
/// together (`--start-at`).
pub const MAX_START_SKEW_US: u64 = 1_000_000;

/// When the results started measuring, and where each one's seconds go in the merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Starts {
    /// Per result, in the order given: the merged second of its second 0, its `started_at`
    /// minus the earliest rounded to whole seconds (`round(Δt / 1 s)`); all 0 when a result
    /// predates version 4 (seconds are then merged by their index, as before).
    pub(super) offsets_s: Vec<u32>,
    /// Position (0-based) of the result that started first.
    pub(super) earliest: usize,
    /// The latest `started_at` minus the earliest, µs.
    pub(super) skew_us: u64,
}

/// Runs every check on `results` (at least one): each given once, one spec and result
/// version, shards of one run (all or none sharded, one N, each K once, none missing unless
/// `options.allow_missing`), started within [`MAX_START_SKEW_US`] of each other (results of
/// version 4 and later). Returns the starts and what the merge merged.
pub(super) fn check(
    results: &[RunResult],
    options: MergeOptions,
) -> Result<(Starts, MergeInfo), MergeError> {
    check_same_run(results)?;
    let (shard_count, missing) = check_shards(results)?;
    if let Some(count) = shard_count
        && !missing.is_empty()
        && !options.allow_missing
    {
        return Err(MergeError::Missing { missing, count });
    }
    let starts = starts(results)?;
    let info = MergeInfo {
        results: results.len() as u32,
        shard_count,
        partial: !missing.is_empty(),
        missing,
        start_skew_us: starts.skew_us,
    };
    Ok((starts, info))
}

/// Checks that the results come from one spec file and one result version, each given once.
/// A result is the same as another when both started at the same time (`started_at`) on the
/// same host, from the same spec file, with the same latency histogram (every response's
/// latency): a result given twice, or a copy of it. Two shards of one run differ in their
/// host, or at least in their histograms.
fn check_same_run(results: &[RunResult]) -> Result<(), MergeError> {
    let first = &results[0];
    fn identity(r: &RunResult) -> [&str; 4] {
        [
            &r.started_at,
            &r.environment.hostname,
            &r.spec.hash,
            &r.total.histogram,
        ]
    }
    let mut seen = BTreeMap::new();
    for (i, r) in results.iter().enumerate() {
        if let Some(j) = seen.insert(identity(r), i) {
            return Err(MergeError::Duplicate {
                index: i + 1,
                first: j + 1,
            });
        }
        if r.result_version != first.result_version {
            return Err(MergeError::Version {
                index: i + 1,
                found: r.result_version,
                expected: first.result_version,
            });
        }
        if r.spec.name != first.spec.name || r.spec.hash != first.spec.hash {
            return Err(MergeError::DifferentSpecs {
                index: i + 1,
                name: r.spec.name.clone(),
                hash: r.spec.hash.clone(),
                first_name: first.spec.name.clone(),
                first_hash: first.spec.hash.clone(),
            });
        }
    }
    Ok(())
}

/// Checks the results' `shard`s: every result is a shard (`run --shard K/N`) or none is; a
/// shard is a valid `K/N` ([`Shard`]'s bounds); all have the first's N; no K is given twice.
/// Returns N (`None` when the results are not shards) and the K of `1..=N` not given,
/// ascending.
fn check_shards(results: &[RunResult]) -> Result<(Option<u32>, Vec<u32>), MergeError> {
    let Some(first) = results[0].shard else {
        return match results.iter().position(|r| r.shard.is_some()) {
            Some(i) => Err(MergeError::MixedShards {
                sharded: i + 1,
                unsharded: 1,
            }),
            None => Ok((None, Vec::new())),
        };
    };
    let mut given: BTreeMap<u32, usize> = BTreeMap::new();
    for (i, r) in results.iter().enumerate() {
        let Some(shard) = r.shard else {
            return Err(MergeError::MixedShards {
                sharded: 1,
                unsharded: i + 1,
            });
        };
        let text = format!("{}/{}", shard.index, shard.count);
        if let Err(reason) = text.parse::<Shard>() {
            return Err(MergeError::BadShard {
                index: i + 1,
                reason,
            });
        }
        if shard.count != first.count {
            return Err(MergeError::ShardCount {
                index: i + 1,
                count: shard.count,
                first: first.count,
            });
        }
        if let Some(j) = given.insert(shard.index, i) {
            return Err(MergeError::SameShard {
                index: i + 1,
                first: j + 1,
                shard: text,
            });
        }
    }
    let missing = (1..=first.count)
        .filter(|k| !given.contains_key(k))
        .collect();
    Ok((Some(first.count), missing))
}

/// Reads the results' `started_at`; when every result is of version 4 or later (see
/// [`to_the_microsecond`]), refuses starts more than [`MAX_START_SKEW_US`] apart and aligns
/// the results' seconds by wall clock.
fn starts(results: &[RunResult]) -> Result<Starts, MergeError> {
    let times = results
        .iter()
        .enumerate()
        .map(|(i, r)| parse_time(i, "started_at", &r.started_at))
        .collect::<Result<Vec<_>, _>>()?;
    let by_time = |a: &(usize, &SystemTime), b: &(usize, &SystemTime)| a.1.cmp(b.1);
    let (earliest, &first) = times.iter().enumerate().min_by(by_time).expect("not empty");
    let (latest, &last) = times.iter().enumerate().max_by(by_time).expect("not empty");
    let since_first = |t: SystemTime| t.duration_since(first).unwrap_or_default();
    let skew_us = u64::try_from(since_first(last).as_micros()).unwrap_or(u64::MAX);
    if !results.iter().all(|r| to_the_microsecond(&r.started_at)) {
        return Ok(Starts {
            offsets_s: vec![0; results.len()],
            earliest,
            skew_us,
        });
    }
    if skew_us > MAX_START_SKEW_US {
        return Err(MergeError::StartsApart {
            index: latest + 1,
            earliest: earliest + 1,
            apart_us: skew_us,
        });
    }
    Ok(Starts {
        offsets_s: times
            .iter()
            .map(|&t| since_first(t).as_secs_f64().round() as u32)
            .collect(),
        earliest,
        skew_us,
    })
}

/// The merged `planned_start_at`: the results' common one, else the earliest (`--start-at`
/// given to some shards only, or different ones); absent when none has one.
pub(super) fn planned_start(results: &[RunResult]) -> Result<Option<String>, MergeError> {
    let mut earliest: Option<(SystemTime, &String)> = None;
    for (i, r) in results.iter().enumerate() {
        if let Some(text) = &r.planned_start_at {
            let at = parse_time(i, "planned_start_at", text)?;
            if earliest.is_none_or(|(e, _)| at < e) {
                earliest = Some((at, text));
            }
        }
    }
    Ok(earliest.map(|(_, text)| text.clone()))
}

/// Reads the time `text` of field `field` of result `index` (0-based): RFC 3339 in UTC
/// (humantime's `parse_rfc3339_weak`).
fn parse_time(index: usize, field: &'static str, text: &str) -> Result<SystemTime, MergeError> {
    humantime::parse_rfc3339_weak(text).map_err(|e| MergeError::Time {
        index: index + 1,
        field,
        value: text.to_string(),
        reason: e.to_string(),
    })
}

/// Whether `started_at` is to the microsecond (six digits after the seconds:
/// `2026-11-24T09:00:00.123456Z`), as results of version 4 and later write it. Results of
/// earlier versions (to the millisecond) read as version 4 too, upgraded as they are read
/// (`upgrade.rs`), so this, not `result_version`, tells them apart.
pub(super) fn to_the_microsecond(started_at: &str) -> bool {
    started_at
        .rsplit_once('.')
        .is_some_and(|(_, fraction)| fraction.bytes().take_while(u8::is_ascii_digit).count() == 6)
}

/// `shard 3` or `shards 3, 4`.
pub(super) fn shard_list(shards: &[u32]) -> String {
    let list: Vec<String> = shards.iter().map(u32::to_string).collect();
    let noun = if shards.len() == 1 { "shard" } else { "shards" };
    format!("{noun} {}", list.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_of_version_4_are_told_by_their_microseconds() {
        assert!(to_the_microsecond("2026-11-24T09:00:00.123456Z"));
        assert!(to_the_microsecond("2026-11-24T09:00:00.000000Z"));
        assert!(!to_the_microsecond("2026-11-22T02:09:00.258Z"));
        assert!(!to_the_microsecond("2026-11-22T02:09:00Z"));
    }

    #[test]
    fn shards_are_listed_in_words() {
        assert_eq!(shard_list(&[3]), "shard 3");
        assert_eq!(shard_list(&[2, 4]), "shards 2, 4");
    }
}
