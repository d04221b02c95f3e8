//! The two sides of `loadgate ab`: from the spec's `ab:` block, then the command line
//! (`--baseline-url`, `--baseline NAME=VALUE`, …), whose values come after the block's (the
//! last of a name wins) and whose URL replaces the block's.

use anyhow::Context as _;

use crate::options::AbOptions;
use crate::plan::Plan;
use crate::spec::{Ab, AbSide, SourceSpec};
use crate::validate;

/// One side: where its load goes and its values of `${NAME}`.
pub(super) struct Side {
    /// `baseline` or `candidate`.
    pub(super) label: &'static str,
    /// Replaces the spec's `defaults.base_url`.
    url: Option<String>,
    /// `NAME=VALUE` pairs answering `${NAME}`; the last of a name wins.
    values: Vec<(String, String)>,
}

/// The spec's `ab:` block as written (read before any `${NAME}` is answered, since it gives
/// the values); the default when absent. Errors: a block that does not fit the schema, with
/// the validator's diagnostics (field path and line) when it finds them.
pub(super) fn ab_block(
    source: &SourceSpec,
    env: &dyn Fn(&str) -> Option<String>,
) -> anyhow::Result<Ab> {
    let Some(value) = source.value.get("ab") else {
        return Ok(Ab::default());
    };
    serde_json::from_value(value.clone()).or_else(|e| {
        validate::check(source, env)?;
        Err(anyhow::anyhow!("the spec's `ab` block: {e}"))
    })
}

/// The baseline and the candidate from `block` and `args`; with `--aa` the candidate is the
/// baseline.
pub(super) fn sides(args: &AbOptions, block: &Ab) -> [Side; 2] {
    let side = |label, from: &AbSide, url: &Option<String>, values: &[(String, String)]| Side {
        label,
        url: url.clone().or_else(|| from.base_url.clone()),
        values: from
            .values
            .iter()
            .map(|(n, v)| (n.clone(), v.clone()))
            .chain(values.iter().cloned())
            .collect(),
    };
    let baseline = || {
        side(
            "baseline",
            &block.baseline,
            &args.baseline_url,
            &args.baseline,
        )
    };
    let candidate = if args.aa {
        Side {
            label: "candidate",
            ..baseline()
        }
    } else {
        side(
            "candidate",
            &block.candidate,
            &args.candidate_url,
            &args.candidate,
        )
    };
    [baseline(), candidate]
}

impl Side {
    /// The side's value of `${name}`, if it gives one.
    fn value(&self, name: &str) -> Option<String> {
        self.values
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    }

    /// The side's values with the last of each name, sorted: what tells two sides apart.
    fn effective_values(&self) -> Vec<(&str, &str)> {
        let mut values: Vec<(&str, &str)> = Vec::new();
        for (name, value) in self.values.iter().rev() {
            if !values.iter().any(|(n, _)| n == name) {
                values.push((name, value));
            }
        }
        values.sort_unstable();
        values
    }

    /// Nothing tells the two sides apart: the same URL and the same values.
    pub(super) fn same_as(&self, other: &Side) -> bool {
        self.url == other.url && self.effective_values() == other.effective_values()
    }

    /// Validates `source` into this side's plan: its URL as `defaults.base_url`, its values
    /// before `env`'s.
    pub(super) fn plan(
        &self,
        source: &SourceSpec,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> anyhow::Result<Plan> {
        let mut source = source.clone();
        if let (Some(url), Some(spec)) = (&self.url, source.value.as_object_mut()) {
            let defaults = spec
                .entry("defaults")
                .or_insert_with(|| serde_json::Value::Object(Default::default()));
            // A `defaults` that is not a mapping is left for the schema check to report.
            if let Some(defaults) = defaults.as_object_mut() {
                defaults.insert("base_url".to_string(), url.as_str().into());
            }
        }
        let var = |name: &str| self.value(name).or_else(|| env(name));
        validate::check(&source, &var).with_context(|| format!("the {} side", self.label))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The options of `loadgate ab spec.yaml` and `with`'s flags (`cli.rs` tests the parse).
    fn args(with: impl FnOnce(&mut AbOptions)) -> AbOptions {
        let mut args = AbOptions {
            spec: "spec.yaml".into(),
            ..AbOptions::default()
        };
        with(&mut args);
        args
    }

    fn block(yaml_json: serde_json::Value) -> Ab {
        serde_json::from_value(yaml_json).unwrap()
    }

    #[test]
    fn the_command_line_goes_after_the_block() {
        let block = block(serde_json::json!({
            "baseline": {"base_url": "http://127.0.0.1:1", "values": {"A": "1", "B": "2"}},
            "candidate": {"values": {"A": "1", "B": "3"}},
        }));
        let [b, c] = sides(&args(|_| {}), &block);
        assert_eq!(b.url.as_deref(), Some("http://127.0.0.1:1"));
        assert_eq!(c.url, None);
        assert_eq!(
            (b.value("B"), c.value("B")),
            (Some("2".into()), Some("3".into()))
        );
        assert!(!b.same_as(&c));

        // The command line's value of B and URL win; the sides are then alike.
        let [b, c] = sides(
            &args(|a| {
                a.candidate = vec![("B".into(), "2".into())];
                a.candidate_url = Some("http://127.0.0.1:1".into());
            }),
            &block,
        );
        assert_eq!(c.value("B"), Some("2".into()));
        assert!(b.same_as(&c));

        // `--aa`: the candidate is the baseline, block and command line.
        let [b, c] = sides(
            &args(|a| {
                a.aa = true;
                a.baseline = vec![("A".into(), "9".into())];
            }),
            &block,
        );
        assert_eq!(
            (c.label, c.value("A"), &c.url),
            ("candidate", Some("9".into()), &b.url)
        );
        assert!(b.same_as(&c));
    }
}
