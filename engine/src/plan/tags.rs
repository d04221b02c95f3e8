//! Tags: `name: value` pairs on targets, flow steps, flows and scenarios, and the selectors
//! of thresholds and regression rules that pick requests by them (k6's
//! `http_req_duration{kind:write}`).

use std::collections::BTreeMap;
use std::fmt;

use super::Errors;

/// A request's tags, by name. A target's are merged once at plan time, the more specific
/// winning: scenario < flow < step (its `group` is the tag `group`) < target.
pub type Tags = BTreeMap<String, String>;

/// A tag selector, `{kind:write,scenario:checkout}`: the requests whose tags hold every pair.
/// Empty: every request of the scope.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TagSelector(pub(crate) Vec<(String, String)>);

impl TagSelector {
    /// Whether `tags` hold every pair of the selector (an empty selector matches all).
    pub(crate) fn matches(&self, tags: &Tags) -> bool {
        self.0
            .iter()
            .all(|(name, value)| tags.get(name) == Some(value))
    }

    /// Whether it selects every request (no pairs).
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The pairs as a map (for results and verdicts).
    pub(crate) fn to_map(&self) -> Tags {
        self.0.iter().cloned().collect()
    }

    /// Parses a block's key with a selector, k6's syntax: `latency{kind:write}`,
    /// `errors{kind:write,scenario:checkout}`, into the metric's name as written (trimmed;
    /// `Metric::parse_tagged` names the metric) and the selector; names and values are
    /// trimmed; a name may appear once. Errors say what was expected.
    pub(crate) fn parse_key(key: &str) -> Result<(&str, TagSelector), String> {
        let expected = "expected a metric and tags in braces, e.g. `latency{kind:write}`";
        let (metric, rest) = key
            .split_once('{')
            .ok_or_else(|| format!("`{key}`: {expected}"))?;
        let inner = rest
            .strip_suffix('}')
            .ok_or_else(|| format!("`{key}`: {expected}"))?;
        let mut pairs: Vec<(String, String)> = Vec::new();
        for pair in inner.split(',') {
            let (name, value) = pair
                .split_once(':')
                .ok_or_else(|| format!("`{key}`: `{pair}` is not `tag:value`"))?;
            let (name, value) = (name.trim(), value.trim());
            if name.is_empty() {
                return Err(format!("`{key}`: a tag name is empty"));
            }
            if pairs.iter().any(|(n, _)| n == name) {
                return Err(format!("`{key}`: the tag `{name}` is given twice"));
            }
            pairs.push((name.to_string(), value.to_string()));
        }
        pairs.sort();
        Ok((metric.trim(), TagSelector(pairs)))
    }
}

/// Characters a tag's name or value may not hold: a selector could not name them
/// (`metric{name:value,...}`).
const RESERVED: [char; 4] = ['{', '}', ':', ','];

/// Checks the tags of one block (at `path`, e.g. `targets[0].tags`): names non-empty, names
/// and values printable, without `{`, `}`, `:` or `,` and without white space at either end
/// (a selector could not select them: it splits on those characters and trims); every problem
/// goes to `errors`, at `path.name`. Whether all were right.
pub(super) fn check(tags: &Tags, path: &str, errors: &mut Errors) -> bool {
    let before = errors.0.len();
    for (name, value) in tags {
        let field = format!("{path}.{name}");
        if name.trim().is_empty() {
            errors.push(&field, "a tag name may not be empty");
            continue;
        }
        check_text(&field, name, "name", errors);
        check_text(&field, value, "value", errors);
    }
    errors.0.len() == before
}

/// Checks one tag name or value (`what`), the field at `field`.
pub(super) fn check_text(field: &str, text: &str, what: &str, errors: &mut Errors) -> bool {
    if !errors.printable(field, text) {
        return false;
    }
    let why = if let Some(c) = text.chars().find(|c| RESERVED.contains(c)) {
        format!("holds `{c}`")
    } else if text.trim() != text {
        "starts or ends with white space".to_string()
    } else {
        return true;
    };
    errors.push(
        field,
        format!(
            "the tag {what} `{text}` {why}: a selector (`latency{{name:value}}`) could not \
             select it; tag names and values may not hold `{{`, `}}`, `:` or `,`"
        ),
    );
    false
}

impl fmt::Display for TagSelector {
    /// `{kind:write,scenario:checkout}` (names in order); empty for no pairs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return Ok(());
        }
        f.write_str("{")?;
        for (i, (name, value)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{name}:{value}")?;
        }
        f.write_str("}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_into_a_metric_and_sorted_pairs() {
        let (metric, selector) =
            TagSelector::parse_key("latency{scenario: b ,kind:write}").unwrap();
        assert_eq!(metric, "latency");
        assert_eq!(selector.to_string(), "{kind:write,scenario:b}");
        let tags: Tags = [("kind", "write"), ("scenario", "b"), ("x", "y")]
            .into_iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert!(selector.matches(&tags));
        let mut other = tags.clone();
        other.insert("kind".into(), "read".into());
        assert!(!selector.matches(&other));
        assert!(TagSelector::default().matches(&other));
    }

    #[test]
    fn bad_keys_say_what_was_expected() {
        for (key, says) in [
            ("latency", "in braces"),
            ("latency{kind}", "not `tag:value`"),
            ("errors{a:b,a:c}", "given twice"),
            ("errors{:b}", "empty"),
        ] {
            let e = TagSelector::parse_key(key).unwrap_err();
            assert!(e.contains(says), "{key}: {e}");
        }
    }

    #[test]
    fn tags_that_a_selector_could_not_select_are_refused_with_their_path() {
        let cases = [
            ("kind", "write", None),
            ("kind", "", None),
            ("", "x", Some("a tag name may not be empty")),
            (" ", "x", Some("a tag name may not be empty")),
            ("a:b", "x", Some("the tag name `a:b` holds `:`")),
            ("a,b", "x", Some("holds `,`")),
            ("kind", "{x}", Some("the tag value `{x}` holds `{`")),
            ("kind", "x}", Some("holds `}`")),
            ("kind", " x", Some("starts or ends with white space")),
            ("kind ", "x", Some("starts or ends with white space")),
            ("kind", "a\u{7}", Some("control character U+0007")),
        ];
        for (name, value, want) in cases {
            let tags: Tags = [(name.to_string(), value.to_string())].into();
            let mut errors = Errors::default();
            let ok = check(&tags, "targets[2].tags", &mut errors);
            assert_eq!(ok, want.is_none(), "{name}: {value}: {:?}", errors.0);
            if let Some(want) = want {
                assert_eq!(errors.0.len(), 1, "{:?}", errors.0);
                assert_eq!(errors.0[0].path, format!("targets[2].tags.{name}"));
                assert!(
                    errors.0[0].message.contains(want),
                    "{}",
                    errors.0[0].message
                );
            }
        }
    }
}
