//! Where the spec file writes each SLO threshold and regression rule: the line the JSON
//! verdict gives each of them, so that the GitHub Action annotates that line.
//!
//! The spec is read again at report time (`--spec FILE`), and used only when it is the very
//! file the run was made from: its SHA-256 is the result's `spec.hash`. A threshold is found by
//! its block (`slo` or `regression`), its scope (the whole run, a target, a flow or a flow's
//! step, `flow/step`), its metric and its text as written.

use sha2::{Digest, Sha256};

use crate::plan::threshold::Metric;
use crate::spec::SourceSpec;

/// The two blocks that hold what the verdict judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Block {
    /// `slo:` thresholds.
    Slo,
    /// `regression:` rules.
    Regression,
}

impl Block {
    fn key(self) -> &'static str {
        match self {
            Block::Slo => "slo",
            Block::Regression => "regression",
        }
    }
}

/// One threshold or rule as the spec writes it.
#[derive(Debug)]
struct Written {
    block: Block,
    /// `total`, or the target's, flow's or step's (`flow/step`) name.
    scope: String,
    /// The metric it gates (a flow's `iteration_duration` is [`Metric::Latency`]); `None` for a
    /// key that names none.
    metric: Option<Metric>,
    text: String,
    /// 1-based line of the threshold's entry.
    line: u64,
}

/// The lines of a spec's thresholds and rules.
#[derive(Debug)]
pub(crate) struct SpecLines(Vec<Written>);

impl SpecLines {
    /// Reads the spec at `path` and finds its thresholds' lines; `None` when the file cannot be
    /// read or parsed, or is not the spec `hash` (hex SHA-256 of its bytes) names: lines of
    /// another version of the file would point at the wrong place.
    pub(crate) fn read(path: &std::path::Path, hash: &str) -> Option<SpecLines> {
        let source = SourceSpec::read(path).ok()?;
        let digest: String = Sha256::digest(source.text.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        (digest == hash).then(|| SpecLines::of(&source))
    }

    /// The thresholds and rules of `source`: the whole run's, each target's, each flow's and
    /// each flow step's.
    fn of(source: &SourceSpec) -> SpecLines {
        let mut found = Vec::new();
        let v = &source.value;
        collect(source, v, "", "total", &mut found);
        for (list, key) in [("targets", "targets"), ("flows", "flows")] {
            for (i, item) in array(v.get(list)).iter().enumerate() {
                let Some(name) = item.get("name").and_then(|n| n.as_str()) else {
                    continue;
                };
                collect(source, item, &format!("{key}[{i}]."), name, &mut found);
                if list != "flows" {
                    continue;
                }
                for (j, step) in array(item.get("steps")).iter().enumerate() {
                    if let Some(step_name) = step.get("name").and_then(|n| n.as_str()) {
                        let path = format!("flows[{i}].steps[{j}].");
                        collect(
                            source,
                            step,
                            &path,
                            &format!("{name}/{step_name}"),
                            &mut found,
                        );
                    }
                }
            }
        }
        SpecLines(found)
    }

    /// The line of `text` (a threshold or rule as written) in `block` for `scope` and `metric`.
    pub(crate) fn line(
        &self,
        block: Block,
        scope: &str,
        metric: Metric,
        text: &str,
    ) -> Option<u64> {
        self.0
            .iter()
            .find(|w| {
                w.block == block
                    && w.scope == scope
                    && w.metric == Some(metric)
                    && w.text == text.trim()
            })
            .map(|w| w.line)
    }
}

fn array(v: Option<&serde_json::Value>) -> &[serde_json::Value] {
    v.and_then(serde_json::Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The thresholds and rules of the mapping `scope_value` at field path `prefix` (`` or
/// `targets[2].`), named `scope` in the verdict.
fn collect(
    source: &SourceSpec,
    scope_value: &serde_json::Value,
    prefix: &str,
    scope: &str,
    found: &mut Vec<Written>,
) {
    for block in [Block::Slo, Block::Regression] {
        let Some(metrics) = scope_value.get(block.key()).and_then(|b| b.as_object()) else {
            continue;
        };
        for (key, entries) in metrics {
            for (k, entry) in array(Some(entries)).iter().enumerate() {
                let text = entry
                    .as_str()
                    .or_else(|| entry.get("threshold").and_then(|t| t.as_str()));
                let path = format!("{prefix}{}.{key}[{k}]", block.key());
                if let (Some(text), Some(at)) = (text, source.locate(&path)) {
                    found.push(Written {
                        block,
                        scope: scope.to_string(),
                        metric: verdict_metric(key),
                        text: text.trim().to_string(),
                        line: at.line,
                    });
                }
            }
        }
    }
}

/// The metric a key of the spec's `slo` or `regression` block gates: a flow's
/// `iteration_duration`, `failed_iterations` and `iterations` ([`Metric::flow_name`]) are
/// judged as `latency`, `errors` and `requests` of its iterations.
fn verdict_metric(key: &str) -> Option<Metric> {
    [
        Metric::Latency,
        Metric::Errors,
        Metric::Responses,
        Metric::Checks,
    ]
    .into_iter()
    .find(|m| m.name() == key || m.flow_name() == key)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = "\
version: 1
name: demo
targets:
  - name: home
    path: /
    slo:
      latency: [\"p(99) < 300ms\"]
slo:
  latency:
    - \"p(95) < 50ms\"
    - threshold: \"p(99) < 1s\"
      window: 10s
  errors: [\"rate < 1%\"]
regression:
  latency: [\"p(95) +10%\"]
flows:
  - name: shop
    regression:
      iteration_duration: [\"p(95) +20%\"]
    steps:
      - name: login
        slo: { latency: [\"p(99) < 2s\"] }
";

    fn lines() -> SpecLines {
        SpecLines::of(&SourceSpec::parse("spec.yaml".into(), SPEC.to_string()).unwrap())
    }

    #[test]
    fn each_threshold_and_rule_has_the_line_of_its_entry() {
        let l = lines();
        assert_eq!(
            l.line(Block::Slo, "home", Metric::Latency, "p(99) < 300ms"),
            Some(7)
        );
        assert_eq!(
            l.line(Block::Slo, "total", Metric::Latency, "p(95) < 50ms"),
            Some(10)
        );
        assert_eq!(
            l.line(Block::Slo, "total", Metric::Latency, "p(99) < 1s"),
            Some(11)
        );
        assert_eq!(
            l.line(Block::Slo, "total", Metric::Errors, "rate < 1%"),
            Some(13)
        );
        assert_eq!(
            l.line(Block::Regression, "total", Metric::Latency, "p(95) +10%"),
            Some(15)
        );
        assert_eq!(
            l.line(Block::Regression, "shop", Metric::Latency, "p(95) +20%"),
            Some(19)
        );
        assert_eq!(
            l.line(Block::Slo, "shop/login", Metric::Latency, "p(99) < 2s"),
            Some(22)
        );
    }

    #[test]
    fn lines_are_read_only_from_the_file_the_run_was_made_from() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spec.yaml");
        std::fs::write(&path, SPEC).unwrap();
        let hash: String = Sha256::digest(SPEC.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let read = SpecLines::read(&path, &hash).expect("the same file");
        assert_eq!(
            read.line(Block::Slo, "total", Metric::Errors, "rate < 1%"),
            Some(13)
        );
        // An edited spec (another hash), or none at the path: no lines rather than wrong ones.
        assert!(SpecLines::read(&path, &"0".repeat(64)).is_none());
        assert!(SpecLines::read(&dir.path().join("gone.yaml"), &hash).is_none());
    }

    #[test]
    fn a_threshold_of_another_scope_block_or_text_has_no_line() {
        let l = lines();
        assert_eq!(
            l.line(Block::Slo, "home", Metric::Latency, "p(95) < 50ms"),
            None
        );
        assert_eq!(
            l.line(Block::Regression, "total", Metric::Latency, "p(95) < 50ms"),
            None
        );
        assert_eq!(
            l.line(Block::Regression, "total", Metric::Latency, "p(50) +10%"),
            None
        );
    }
}
