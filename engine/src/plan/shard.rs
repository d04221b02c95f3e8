//! Shards: one process's share of a run spread over several machines (`loadgate run --shard
//! K/N`), and when the shards start together (`--start-at`).
//!
//! A shard applies its share of the load: connections, arrival rates, `max_in_flight` and
//! request counts are split so that the N shares add up exactly to the spec's (remainders
//! over the first shards); stages keep their timing. `loadgate merge` adds the shards' results
//! back into one (`result::merge`).
//!
//! # The shares
//!
//! A count `L` (connections at a stage's ends, `connections`, `max_in_flight`,
//! `load.requests`, `warmup: N` requests) gives shard K of N `floor(L/N) + (K ≤ L mod N ? 1 :
//! 0)` ([`share`]): the first `L mod N` shards take one more, and the N shares add up to `L`.
//! An arrival rate `r` (requests/s, open model) gives every shard `r/N`, unrounded: the shares
//! add up to `r` within f64 rounding. Pacing (per connection) and think time are unchanged:
//! they apply to each connection, wherever it runs. A flow's (or a target's) data file read
//! `once` gives shard K the rows K−1, K−1+N, K−1+2N, … (0-based), so that no row is used twice.
//!
//! # Closed-model ramps
//!
//! A closed-model stage ramps its level (connections) linearly between its ends, and a run
//! keeps virtual-user group `g` (0-based) busy while the level is at least `g + 0.5`
//! (`LoadPlan::level_at`, `run/vu.rs`): the level rounded half up. A shard's stage ends are
//! whole shares of the spec's ends, so the shards' levels add up to the spec's level at every
//! instant (a sum of lines with the right ends is the line between them), and their
//! connections add up exactly at every stage's ends. Mid-ramp, each shard rounds its own
//! level: the shards together may run up to ⌈N/2⌉ connections more or fewer than one
//! process would, until the ramp reaches its next whole share (e.g. 0 → 2 connections over
//! 10 s on 2 shards: each shard ramps 0 → 1 and opens its connection at 5 s, when its level
//! passes 0.5; one process opens its first at 2.5 s and its second at 7.5 s).
//!
//! `abort_on_fail` does not act on a shard: a shard sees only its share (a rate threshold
//! would fail on every shard), and stopping every shard when the merged value fails is out of
//! scope. The shards' thresholds are judged on the merged result.

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, SystemTime};

use super::flow::DataOrder;
use super::{Model, Plan, Stop};
use crate::units::parse_duration;

/// Shard `index` of `count` (`K/N`, 1-based: `1/4` … `4/4`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// K: which shard, from 1 to `count`.
    pub index: u32,
    /// N: how many shards the run is spread over, at least 1.
    pub count: u32,
}

/// The most shards a run may be spread over (as many as `loadgate merge` takes).
pub const MAX_SHARDS: u32 = 1024;

impl FromStr for Shard {
    type Err = String;

    /// Parses `K/N` with `1 ≤ K ≤ N ≤` [`MAX_SHARDS`]. Errors: another shape, K or N out of
    /// range.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let shape = || format!("`{s}` is not a shard: give K/N, e.g. 1/4 (shard 1 of 4)");
        let (k, n) = s.trim().split_once('/').ok_or_else(shape)?;
        let (index, count): (u32, u32) = (
            k.trim().parse().map_err(|_| shape())?,
            n.trim().parse().map_err(|_| shape())?,
        );
        if count == 0 || count > MAX_SHARDS {
            return Err(format!("`{s}`: the shard count must be 1 to {MAX_SHARDS}"));
        }
        if index == 0 || index > count {
            return Err(format!("`{s}`: the shard index must be 1 to {count}"));
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Why a sharded or timed run cannot start: bad input (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// A count that cannot be split over the shards: some would get none.
    #[error(
        "shard {shard}: the spec has {count} {what}: at most {count} shards (each shard needs \
         at least one)"
    )]
    TooManyShards {
        /// The shard asked for.
        shard: Shard,
        /// What is split (`connections`, `max_in_flight`, `requests`, `rows read once in
        /// flow `x``).
        what: String,
        /// How many the spec gives.
        count: u64,
    },
    /// `--start-at` is not a time.
    #[error(
        "--start-at `{0}` is not a time: give RFC 3339 in UTC (`2026-11-24T10:00:00Z`) or a \
         duration from now (`+30s`)"
    )]
    StartAt(String),
    /// `--start-at` is already past by more than the warmup.
    #[error(
        "--start-at {planned} was {late_ms} ms ago, more than the warmup ({warmup_ms} ms): the \
         run would start measuring late; give a later time"
    )]
    TooLate {
        /// The planned start, RFC 3339.
        planned: String,
        /// How late, in ms.
        late_ms: u128,
        /// The warmup, in ms.
        warmup_ms: u128,
    },
    /// `--shard` with a spec of `scenarios`.
    #[error(
        "shard {0}: a spec of `scenarios` cannot be split over shards yet; run it whole, or \
         split its scenarios into specs of their own (one `load` each) and shard those"
    )]
    Scenarios(Shard),
    /// `--baseline` with `--shard`.
    #[error(
        "--baseline does not apply to a shard (shard {0}), which sees only its share: merge the \
         shards' results (`loadgate merge`) and compare the merged result"
    )]
    Baseline(Shard),
}

/// Shard `shard`'s share of a count `total`: `floor(total/N) + (K ≤ total mod N ? 1 : 0)`. The
/// N shares add up to `total`.
pub fn share(total: u64, shard: Shard) -> u64 {
    let n = u64::from(shard.count);
    total / n + u64::from(u64::from(shard.index) <= total % n)
}

impl Plan {
    /// The plan of shard `shard`: this process's share of the load, as the [module
    /// docs](self) say, with `shard` recorded. Errors: a count that would give a shard
    /// nothing (fewer connections, `max_in_flight`, requests or rows read `once` than shards);
    /// a plan of `scenarios` ([`ShardError::Scenarios`]).
    pub fn shard(mut self, shard: Shard) -> Result<Plan, ShardError> {
        if !self.scenarios.is_empty() {
            return Err(ShardError::Scenarios(shard));
        }
        let too_many = |what: &str, count: u64| {
            (count < u64::from(shard.count)).then(|| ShardError::TooManyShards {
                shard,
                what: what.to_string(),
                count,
            })
        };
        let load = &mut self.load;
        let whole = |level: f64| share(level.round() as u64, shard) as f64;
        match load.model {
            Model::Closed => {
                if let Some(e) = too_many("connections", u64::from(load.connections)) {
                    return Err(e);
                }
                for stage in &mut load.stages {
                    (stage.from, stage.to) = (whole(stage.from), whole(stage.to));
                }
                load.connections = share(u64::from(load.connections), shard) as u32;
            }
            Model::Open => {
                if let Some(e) = too_many("max_in_flight", u64::from(load.max_in_flight)) {
                    return Err(e);
                }
                let n = f64::from(shard.count);
                for stage in &mut load.stages {
                    (stage.from, stage.to) = (stage.from / n, stage.to / n);
                }
                load.max_in_flight = share(u64::from(load.max_in_flight), shard) as u32;
            }
        }
        if let Stop::Requests(requests) = load.stop {
            if let Some(e) = too_many("requests", requests) {
                return Err(e);
            }
            load.stop = Stop::Requests(share(requests, shard));
        }
        load.warmup_requests = share(load.warmup_requests, shard);
        for flow in &mut self.flows {
            if let Some(data) = &mut flow.data {
                let rows = data.rows.len() as u64;
                if data.order == DataOrder::Once
                    && let Some(e) =
                        too_many(&format!("rows read once in flow `{}`", flow.name), rows)
                {
                    return Err(e);
                }
                data.shard(shard);
            }
        }
        for target in &mut self.targets {
            let Some(data) = target.template.as_ref().and_then(|t| t.data.as_ref()) else {
                continue;
            };
            let rows = data.rows.len() as u64;
            if data.order == DataOrder::Once
                && let Some(e) =
                    too_many(&format!("rows read once by target `{}`", target.name), rows)
            {
                return Err(e);
            }
            let template = std::sync::Arc::make_mut(target.template.as_mut().expect("it has one"));
            template.data.as_mut().expect("it has one").shard(shard);
        }
        for threshold in &mut self.slo {
            threshold.abort_on_fail = false;
        }
        self.shard = Some(shard);
        Ok(self)
    }

    /// Plans the run's time zero (the start of the warmup) at `start_at`, as `--start-at`
    /// gives it, `now` being the wall clock: a time still to come is kept; a time past by at
    /// most the warmup shortens the warmup by the lateness (`LoadPlan::skip`) and
    /// time zero becomes now, so that measuring still starts at `start_at` + warmup. Errors:
    /// a time past by more than the warmup.
    pub fn with_start_at(
        mut self,
        start_at: SystemTime,
        now: SystemTime,
    ) -> Result<Plan, ShardError> {
        let late = now.duration_since(start_at).unwrap_or(Duration::ZERO);
        let warmup = self.load.warmup();
        if late > warmup {
            return Err(ShardError::TooLate {
                planned: humantime::format_rfc3339_millis(start_at).to_string(),
                late_ms: late.as_millis(),
                warmup_ms: warmup.as_millis(),
            });
        }
        self.load.skip(late);
        self.start_at = Some(start_at + late);
        Ok(self)
    }
}

/// Parses `--start-at`: RFC 3339 in UTC (`2026-11-24T10:00:00Z`, any fraction of a second)
/// or `+DURATION` from `now` (`+30s`, `+1.5m`: the units of `load.duration`).
pub fn parse_start_at(text: &str, now: SystemTime) -> Result<SystemTime, ShardError> {
    let bad = || ShardError::StartAt(text.to_string());
    match text.trim().strip_prefix('+') {
        Some(after) => parse_duration(after).map(|d| now + d).map_err(|_| bad()),
        None => humantime::parse_rfc3339(text.trim()).map_err(|_| bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Stage;
    use crate::spec::SourceSpec;

    /// Plans `yaml` (a spec; `extra` files beside it), schema checks aside.
    fn plan_with(yaml: &str, extra: &[(&str, &str)]) -> Plan {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in extra {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let path = dir.path().join("spec.yaml");
        std::fs::write(&path, yaml).unwrap();
        let source = SourceSpec::read(&path).unwrap();
        let spec: crate::spec::Spec = serde_json::from_value(source.value.clone()).unwrap();
        let ctx = crate::plan::BuildContext {
            source: source.text.as_bytes(),
            spec_dir: dir.path(),
            var: &|_| None,
        };
        crate::plan::build(&spec, &ctx).unwrap_or_else(|e| panic!("{e:?}"))
    }

    fn plan(load: &str) -> Plan {
        plan_with(
            &format!(
                "version: 1\nname: s\ntargets:\n  - name: a\n    url: http://127.0.0.1:9/\n\
                 load:\n{load}"
            ),
            &[],
        )
    }

    fn shards(plan: &Plan, count: u32) -> Vec<Plan> {
        (1..=count)
            .map(|index| plan.clone().shard(Shard { index, count }).unwrap())
            .collect()
    }

    #[test]
    fn shares_add_up_to_the_whole() {
        for (total, count) in [
            (1, 1),
            (10, 3),
            (7, 7),
            (100, 8),
            (5, 2),
            (1000, 1024),
            (0, 4),
        ] {
            let shares: Vec<u64> = (1..=count)
                .map(|index| share(total, Shard { index, count }))
                .collect();
            assert_eq!(shares.iter().sum::<u64>(), total, "{total}/{count}");
            // Remainders over the first shards: no share differs from another by more than 1.
            assert!(shares.windows(2).all(|w| w[0] >= w[1] && w[0] - w[1] <= 1));
        }
    }

    #[test]
    fn closed_model_connections_and_stage_ends_add_up() {
        for (peak, count) in [(10, 3), (7, 7), (100, 8), (5, 2), (13, 4)] {
            let whole = plan(&format!(
                "  stages:\n    - {{ duration: 2s, level: {}, warmup: true }}\n    \
                 - {{ duration: 3s, level: {peak} }}\n    - {{ duration: 1s, level: 3 }}\n",
                peak / 2
            ));
            let parts = shards(&whole, count);
            let sum = |f: &dyn Fn(&Plan) -> f64| parts.iter().map(f).sum::<f64>();
            assert_eq!(
                sum(&|p| f64::from(p.load.connections)),
                f64::from(peak),
                "{peak}/{count}"
            );
            for (i, stage) in whole.load.stages.iter().enumerate() {
                assert_eq!(sum(&|p| p.load.stages[i].from), stage.from);
                assert_eq!(sum(&|p| p.load.stages[i].to), stage.to);
                for p in &parts {
                    let s = &p.load.stages[i];
                    assert_eq!((s.duration, s.warmup), (stage.duration, stage.warmup));
                    assert_eq!((s.from.fract(), s.to.fract()), (0.0, 0.0));
                }
            }
            // The levels add up at every instant, mid-ramp too; the connections a run keeps
            // busy (group g while the level is at least g + 0.5) differ by at most ⌈N/2⌉,
            // and by none at the stages' ends (0, 2, 5 and 6 s).
            let busy = |level: f64| (level + 0.5).floor();
            for tenth in 0..70 {
                let t = f64::from(tenth) / 10.0;
                let levels = sum(&|p| p.load.level_at(t));
                assert!(
                    (levels - whole.load.level_at(t)).abs() < 1e-9,
                    "{t}: {levels}"
                );
                let apart = sum(&|p| busy(p.load.level_at(t))) - busy(whole.load.level_at(t));
                assert!(apart.abs() <= f64::from(count.div_ceil(2)), "{t}: {apart}");
                if [0, 20, 50, 60].contains(&tenth) {
                    assert_eq!(apart, 0.0, "{t}");
                }
            }
            assert!(
                parts
                    .iter()
                    .all(|p| p.shard.is_some_and(|s| s.count == count))
            );
        }
    }

    #[test]
    fn open_model_rates_divide_and_max_in_flight_splits() {
        let whole = plan(
            "  model: open\n  max_in_flight: 50\n  stages:\n    \
             - { duration: 1s, level: 333/s, warmup: true }\n    \
             - { duration: 2s, level: 1000/s }\n    - { duration: 1s, level: 7.5/s }\n",
        );
        for count in [1, 3, 7, 50] {
            let parts = shards(&whole, count);
            let in_flight: u32 = parts.iter().map(|p| p.load.max_in_flight).sum();
            assert_eq!(in_flight, 50);
            for (i, stage) in whole.load.stages.iter().enumerate() {
                let to: f64 = parts.iter().map(|p| p.load.stages[i].to).sum();
                assert!(
                    (to - stage.to).abs() <= stage.to * 1e-12,
                    "{to} {}",
                    stage.to
                );
                assert!(
                    parts
                        .iter()
                        .all(|p| p.load.stages[i].to == stage.to / f64::from(count))
                );
            }
        }
        let err = whole
            .shard(Shard {
                index: 1,
                count: 51,
            })
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "shard 1/51: the spec has 50 max_in_flight: at most 50 shards (each shard needs at \
             least one)"
        );
    }

    #[test]
    fn request_counts_split_and_pacing_stays() {
        let whole = plan("  connections: 6\n  requests: 1001\n  warmup: 10\n  pacing: 20/s\n");
        for count in [1, 2, 3, 6] {
            let parts = shards(&whole, count);
            let requests: u64 = parts
                .iter()
                .map(|p| match p.load.stop {
                    Stop::Requests(n) => n,
                    Stop::Duration(_) => panic!("count mode"),
                })
                .sum();
            assert_eq!(requests, 1001);
            let warmup: u64 = parts.iter().map(|p| p.load.warmup_requests).sum();
            assert_eq!(warmup, 10);
            assert!(parts.iter().all(|p| p.load.pacing == Some(20.0)));
        }
        let err = whole.shard(Shard { index: 7, count: 7 }).unwrap_err();
        assert!(
            err.to_string()
                .contains("the spec has 6 connections: at most 6 shards"),
            "{err}"
        );
        let few = plan("  connections: 8\n  requests: 3\n");
        let err = few.shard(Shard { index: 1, count: 4 }).unwrap_err();
        assert!(
            err.to_string().contains("3 requests: at most 3 shards"),
            "{err}"
        );
    }

    #[test]
    fn rows_read_once_go_round_the_shards() {
        let yaml = "version: 1\nname: s\nload:\n  connections: 4\n  duration: 1s\nflows:\n  \
                    - name: f\n    data: { file: rows.csv, order: once }\n    steps:\n      \
                    - { name: a, url: 'http://127.0.0.1:9/{{id}}' }\n";
        let rows = (0..10).fold("id\n".to_string(), |s, i| format!("{s}{i}\n"));
        let whole = plan_with(yaml, &[("rows.csv", &rows)]);
        let ids = |p: &Plan| -> Vec<String> {
            let data = p.flows[0].data.as_ref().unwrap();
            data.rows.iter().map(|r| r[0].clone()).collect()
        };
        let parts = shards(&whole, 4);
        assert_eq!(ids(&parts[0]), ["0", "4", "8"]);
        assert_eq!(ids(&parts[1]), ["1", "5", "9"]);
        assert_eq!(ids(&parts[3]), ["3", "7"]);
        let mut all: Vec<String> = parts.iter().flat_map(ids).collect();
        all.sort_by_key(|id| id.parse::<u32>().unwrap());
        assert_eq!(all, ids(&whole));
        // Rows read in order are every shard's.
        let sequential = plan_with(&yaml.replace(", order: once", ""), &[("rows.csv", &rows)]);
        assert_eq!(ids(&shards(&sequential, 4)[2]).len(), 10);
        let err = plan_with(yaml, &[("rows.csv", "id\n1\n2\n")])
            .shard(Shard { index: 1, count: 3 })
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("2 rows read once in flow `f`: at most 2 shards"),
            "{err}"
        );
    }

    #[test]
    fn rows_a_target_reads_once_go_round_the_shards() {
        let yaml = "version: 1\nname: s\nload:\n  connections: 4\n  duration: 1s\ntargets:\n  \
                    - { name: t, url: 'http://127.0.0.1:9/{{id}}', data: { file: rows.csv, order: once } }\n";
        let rows = (0..5).fold("id\n".to_string(), |s, i| format!("{s}{i}\n"));
        let ids = |p: &Plan| -> Vec<String> {
            let data = p.targets[0]
                .template
                .as_ref()
                .unwrap()
                .data
                .as_ref()
                .unwrap();
            data.rows.iter().map(|r| r[0].clone()).collect()
        };
        let whole = plan_with(yaml, &[("rows.csv", &rows)]);
        let parts = shards(&whole, 2);
        assert_eq!(ids(&parts[0]), ["0", "2", "4"]);
        assert_eq!(ids(&parts[1]), ["1", "3"]);
        assert_eq!(ids(&whole).len(), 5, "the whole plan keeps its rows");
        let err = plan_with(yaml, &[("rows.csv", "id\n1\n2\n")])
            .shard(Shard { index: 1, count: 3 })
            .unwrap_err();
        assert!(
            err.to_string().contains("2 rows read once by target `t`"),
            "{err}"
        );
    }

    #[test]
    fn a_shard_does_not_abort_on_its_share() {
        let whole = plan(
            "  connections: 2\n  duration: 1s\nslo:\n  requests:\n    \
             - { threshold: 'rate > 100/s', abort_on_fail: true }\n",
        );
        assert!(whole.slo.iter().any(|t| t.abort_on_fail));
        let part = whole.shard(Shard { index: 1, count: 2 }).unwrap();
        assert!(part.slo.iter().all(|t| !t.abort_on_fail));
    }

    #[test]
    fn a_late_start_shortens_the_warmup() {
        let whole = plan(
            "  stages:\n    - { duration: 2s, level: 10, warmup: true }\n    \
             - { duration: 3s, level: 10 }\n",
        );
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        // Still to come: unchanged.
        let early = whole
            .clone()
            .with_start_at(t, t - Duration::from_secs(5))
            .unwrap();
        assert_eq!((early.start_at, &early.load), (Some(t), &whole.load));
        // 500 ms late: time zero is now, the warmup 1.5 s; measuring still starts at t + 2 s.
        let late = whole
            .clone()
            .with_start_at(t, t + Duration::from_millis(500))
            .unwrap();
        assert_eq!(late.start_at, Some(t + Duration::from_millis(500)));
        assert_eq!(late.load.warmup(), Duration::from_millis(1500));
        assert_eq!(
            late.load.measured_duration(),
            whole.load.measured_duration()
        );
        // Later than the warmup: refused.
        let err = whole
            .with_start_at(t, t + Duration::from_millis(2500))
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("was 2500 ms ago, more than the warmup (2000 ms)"),
            "{err}"
        );
    }

    #[test]
    fn skipping_into_a_ramp_starts_at_its_level_then() {
        let mut load = plan(
            "  stages:\n    - { duration: 1s, level: 2, warmup: true }\n    \
             - { duration: 10s, level: 12, warmup: true }\n    - { duration: 3s, level: 12 }\n",
        )
        .load;
        load.skip(Duration::from_secs(5));
        assert_eq!(
            load.stages[0],
            Stage {
                burst: 0,
                duration: Some(Duration::from_secs(6)),
                from: 6.0,
                to: 12.0,
                warmup: true
            }
        );
        assert_eq!(load.stages.len(), 2);
        assert_eq!(load.warmup(), Duration::from_secs(6));
    }

    #[test]
    fn start_at_is_rfc3339_or_a_duration_from_now() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        assert_eq!(
            parse_start_at("+30s", now),
            Ok(now + Duration::from_secs(30))
        );
        assert_eq!(
            parse_start_at("2026-11-24T10:00:00.250Z", now),
            Ok(SystemTime::UNIX_EPOCH + Duration::from_millis(1_795_514_400_250))
        );
        for bad in ["30s", "+", "+30", "tomorrow", "2026-11-24 10:00"] {
            let err = parse_start_at(bad, now).unwrap_err();
            assert!(err.to_string().contains("RFC 3339"), "{bad}: {err}");
        }
    }

    #[test]
    fn parses_k_of_n_and_refuses_the_rest() {
        assert_eq!("2/4".parse(), Ok(Shard { index: 2, count: 4 }));
        assert_eq!(" 1 / 1 ".parse(), Ok(Shard { index: 1, count: 1 }));
        for bad in ["0/4", "5/4", "1/0", "4", "a/b", "1/2/3", "1/1025"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        assert_eq!(Shard { index: 3, count: 8 }.to_string(), "3/8");
    }

    #[test]
    fn a_spec_of_scenarios_is_not_sharded() {
        let whole = plan_with(
            "version: 1\nname: s\ntargets:\n  - { name: a, url: http://127.0.0.1:9/ }\n\
             scenarios:\n  - { name: x, executor: shared-iterations, vus: 2, targets: [a] }\n",
            &[],
        );
        let shard = Shard { index: 1, count: 2 };
        let e = whole.shard(shard).unwrap_err();
        assert_eq!(e, ShardError::Scenarios(shard));
        assert!(
            e.to_string()
                .contains("a spec of `scenarios` cannot be split"),
            "{e}"
        );
    }
}
