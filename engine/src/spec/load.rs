//! Reading a spec file: YAML text -> a JSON value for schema validation, with the line and
//! column of every field path, so that diagnostics point into the file.
//!
//! The YAML is read by serde-saphyr into a small recursive node type whose every node is
//! [`Spanned`], then flattened into a [`serde_json::Value`] plus two maps from field path
//! to location: where each value starts, and where each mapping key is.
//!
//! YAML 1.1 surprises are kept out: `yes`, `no`, `on` and `off` stay strings (only
//! `true`/`false` are booleans), `017` and `1_000` stay strings, and there are no legacy
//! octal numbers. Duplicate keys are an error.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_saphyr::budget::BudgetBreach;
use serde_saphyr::{MessageFormatter, Spanned};

/// A 1-based line and column in the spec file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Location {
    /// Line, from 1.
    pub(crate) line: u64,
    /// Column in characters, from 1.
    pub(crate) column: u64,
}

impl Location {
    fn from_saphyr(location: serde_saphyr::Location) -> Option<Location> {
        (location.line() > 0).then(|| Location {
            line: location.line(),
            column: location.column().max(1),
        })
    }
}

/// A spec file as read: its text, the YAML as a JSON value, and where each field is.
#[derive(Debug, Clone)]
pub struct SourceSpec {
    /// The file's path, as given (diagnostics print it as is).
    pub(crate) path: PathBuf,
    /// The file's text.
    pub(crate) text: String,
    /// The YAML document as JSON, for schema validation and deserialization.
    pub(crate) value: serde_json::Value,
    /// Field path (`targets[1].expect.status`, root is ``) -> where its value starts.
    locations: HashMap<String, Location>,
    /// Field path of a mapping entry -> where its key starts.
    key_locations: HashMap<String, Location>,
}

/// The largest spec file read, in bytes (10 MiB): a spec is a small YAML file, and a larger
/// input (a log given by mistake) is refused before it fills the memory; so is anything that
/// is not a regular file (`/dev/zero`, a named pipe: `crate::files`).
pub const MAX_SPEC_BYTES: u64 = 10 * 1024 * 1024;

/// Why a spec file could not be read as YAML.
#[derive(Debug, thiserror::Error)]
pub enum SpecLoadError {
    /// The file could not be read, or is not a regular file (`crate::files`).
    #[error(transparent)]
    File(crate::files::FileError),
    /// The file is larger than [`MAX_SPEC_BYTES`].
    #[error(
        "spec `{}` is larger than {} MiB: a spec is a small YAML file",
        path.display(),
        MAX_SPEC_BYTES / (1024 * 1024)
    )]
    TooLarge {
        /// The spec's path.
        path: PathBuf,
    },
    /// The file is not valid YAML (or uses YAML that a spec may not, such as duplicate keys).
    #[error("{}:{line}:{column}: {message}", path.display())]
    Syntax {
        /// The spec's path.
        path: PathBuf,
        /// 1-based line of the error.
        line: u64,
        /// 1-based column of the error.
        column: u64,
        /// What is wrong.
        message: String,
    },
}

impl SourceSpec {
    /// Reads and parses the spec file at `path`.
    ///
    /// At most [`MAX_SPEC_BYTES`] are read; the text must be UTF-8 (an error names the line,
    /// column and byte offset of the first byte that is not).
    pub fn read(path: &Path) -> Result<SourceSpec, SpecLoadError> {
        use crate::files::{Problem, bounded_read};
        let bytes = bounded_read(path, MAX_SPEC_BYTES, "spec").map_err(|e| match e.problem {
            Problem::TooLarge { .. } => SpecLoadError::TooLarge { path: e.path },
            _ => SpecLoadError::File(e),
        })?;
        let text = String::from_utf8(bytes).map_err(|e| not_utf8(path, &e))?;
        SourceSpec::parse(path.to_path_buf(), text)
    }

    /// Parses `text` (named `path` in errors).
    pub fn parse(path: PathBuf, text: String) -> Result<SourceSpec, SpecLoadError> {
        let options = serde_saphyr::options! {
            strict_booleans: true,
            legacy_octal_numbers: false,
            leading_zero_numbers_as_strings: true,
            underscored_numbers_as_strings: true,
            with_snippet: false,
            budget: Some(budget()),
        };
        let root: Option<Spanned<Node>> = serde_saphyr::from_str_with_options(&text, options)
            .map_err(|e| syntax_error(&path, &e))?;
        let mut locations = HashMap::new();
        let mut key_locations = HashMap::new();
        let value = match root {
            Some(root) => flatten(root, String::new(), &mut locations, &mut key_locations),
            // An empty document (or only comments): the schema reports what is missing.
            None => {
                locations.insert(String::new(), Location { line: 1, column: 1 });
                Value::Null
            }
        };
        Ok(SourceSpec {
            path,
            text,
            value,
            locations,
            key_locations,
        })
    }

    /// Where the value at `field_path` starts; falls back to the nearest ancestor (so a
    /// missing field points at the mapping that lacks it).
    pub(crate) fn locate(&self, field_path: &str) -> Option<Location> {
        let mut path = field_path;
        loop {
            if let Some(location) = self.locations.get(path) {
                return Some(*location);
            }
            path = parent_path(path)?;
        }
    }

    /// Where the key of the mapping entry at `field_path` starts (`defaults.timeout` ->
    /// `timeout:`); for an array element or a missing field, the same as [`Self::locate`].
    pub(crate) fn locate_key(&self, field_path: &str) -> Option<Location> {
        self.key_locations
            .get(field_path)
            .copied()
            .or_else(|| self.locate(field_path))
    }
}

/// The path of the enclosing value: `a.b[2]` -> `a.b`, `a.b` -> `a`, `a` -> ``, `` -> none.
///
/// Map keys are joined with `.` unescaped, so a key containing `.` or `[` yields a parent
/// that may not exist; [`SourceSpec::locate`] then keeps walking up.
fn parent_path(path: &str) -> Option<&str> {
    if path.is_empty() {
        return None;
    }
    Some(path.rfind(['.', '[']).map_or("", |i| &path[..i]))
}

fn syntax_error(path: &Path, error: &serde_saphyr::Error) -> SpecLoadError {
    let location = error
        .without_snippet()
        .location()
        .and_then(Location::from_saphyr)
        .unwrap_or(Location { line: 1, column: 1 });
    // The error itself, out of the wrappers that add a snippet or the alias it went through.
    let mut error = error;
    while let serde_saphyr::Error::WithSnippet { error: inner, .. }
    | serde_saphyr::Error::AliasError { error: inner, .. } = error
    {
        error = inner;
    }
    let message = match error {
        serde_saphyr::Error::DuplicateMappingKey { key: Some(key), .. } => {
            format!("duplicate key `{key}`: each key may appear once in a mapping")
        }
        serde_saphyr::Error::DuplicateMappingKey { key: None, .. } => {
            "duplicate key: each key may appear once in a mapping".to_string()
        }
        serde_saphyr::Error::MultipleDocuments { .. } => {
            "a spec is a single YAML document; remove the `---` separator".to_string()
        }
        serde_saphyr::Error::Budget { breach, .. } => budget_message(breach, &budget()),
        serde_saphyr::Error::AliasReplayLimitExceeded {
            max_total_replayed_events: limit,
            ..
        } => format!(
            "the YAML's aliases (`*name`) repeat more than {limit} values in all; a spec needs \
             far fewer"
        ),
        serde_saphyr::Error::AliasExpansionLimitExceeded {
            max_expansions_per_anchor: limit,
            ..
        } => format!(
            "an anchor (`&name`) is repeated more than {limit} times through aliases (`*name`); \
             a spec needs far fewer"
        ),
        serde_saphyr::Error::AliasReplayStackDepthExceeded {
            max_depth: limit, ..
        } => format!("aliases (`*name`) of aliases are nested more than {limit} deep"),
        serde_saphyr::Error::AliasReplayCounterOverflow { .. } => {
            "the YAML's aliases (`*name`) repeat too many values; a spec needs far fewer"
                .to_string()
        }
        other => serde_saphyr::DefaultMessageFormatter
            .format_message(other)
            .into_owned(),
    };
    SpecLoadError::Syntax {
        path: path.to_path_buf(),
        line: location.line,
        column: location.column,
        // The message may quote the input: keep control characters out of the terminal.
        message: printable(&message),
    }
}

/// The YAML reader's limits: serde-saphyr's defaults (at most 250,000 values, 50,000 aliases,
/// ...), but nesting at most 24 levels deep (a spec needs about 8): reading, validating and
/// dropping a document recurse once per level, and must fit a 2 MiB thread stack in a debug
/// build (64 levels do not).
fn budget() -> serde_saphyr::Budget {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = 24;
    budget
}

/// A limit of the YAML reader that `breach` broke, in words, with the limit (from `budget`,
/// the one [`SourceSpec::parse`] reads with, see [`budget()`]). An alias bomb (aliases of aliases, each
/// repeating the one before) breaks the count of values or of aliases; deep nesting, the depth.
fn budget_message(breach: &BudgetBreach, budget: &serde_saphyr::Budget) -> String {
    let expanded = "once its aliases (`*name`) are expanded; a spec needs far fewer";
    match breach {
        BudgetBreach::Depth { .. } => format!(
            "the YAML is nested more than {} levels deep; a spec needs fewer than 10",
            budget.max_depth
        ),
        BudgetBreach::Nodes { .. } => format!(
            "the YAML has more than {} values {expanded}",
            budget.max_nodes
        ),
        BudgetBreach::Events { .. } => format!(
            "the YAML has more than {} values, keys and ends of lists or mappings {expanded}",
            budget.max_events
        ),
        BudgetBreach::ScalarBytes { .. } => format!(
            "the YAML has more than {} MiB of text {expanded}",
            budget.max_total_scalar_bytes / (1024 * 1024)
        ),
        BudgetBreach::Aliases { .. } => format!(
            "the YAML uses more than {} aliases (`*name`); a spec needs far fewer",
            budget.max_aliases
        ),
        BudgetBreach::RecordedAnchorEvents { .. } => format!(
            "the YAML's anchors (`&name`) hold more than {} values in all {expanded}",
            budget.max_recorded_anchor_events
        ),
        BudgetBreach::AliasAnchorRatio { aliases, anchors } => format!(
            "the YAML uses {aliases} aliases (`*name`) of {anchors} anchors (`&name`): more than \
             {} per anchor, as an alias bomb does",
            budget.alias_anchor_ratio_multiplier
        ),
        BudgetBreach::Anchors { .. } => format!(
            "the YAML defines more than {} anchors (`&name`); a spec needs far fewer",
            budget.max_anchors
        ),
        BudgetBreach::MergeKeys { .. } => format!(
            "the YAML uses more than {} merge keys (`<<`); a spec needs far fewer",
            budget.max_merge_keys
        ),
        _ => "the YAML is too large or too deeply nested to be read safely; a spec is small"
            .to_string(),
    }
}

/// The error for a file that is not UTF-8: the line and column (in characters) of the first
/// byte that is not, and its byte offset.
fn not_utf8(path: &Path, error: &std::string::FromUtf8Error) -> SpecLoadError {
    let offset = error.utf8_error().valid_up_to();
    let bytes = error.as_bytes();
    let valid = std::str::from_utf8(&bytes[..offset]).unwrap_or_default();
    let line_start = valid.rfind('\n').map_or(0, |i| i + 1);
    SpecLoadError::Syntax {
        path: path.to_path_buf(),
        line: valid.matches('\n').count() as u64 + 1,
        column: valid[line_start..].chars().count() as u64 + 1,
        message: format!(
            "the file is not UTF-8: byte 0x{:02X} (byte offset {offset}) is not valid UTF-8; \
             save the spec as UTF-8",
            bytes[offset]
        ),
    }
}

/// `text` with its control characters (ESC as `\u{1b}`, TAB as `\t`) and its hidden
/// characters ([`is_hidden`]: U+202E as `\u{202e}`) escaped: safe to print on a terminal and
/// in every report.
pub(crate) fn printable(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            if c.is_control() || is_hidden(c) {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// Whether `c` changes how the text around it is shown while being invisible itself: the
/// bidirectional controls (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069; "Trojan
/// Source", CVE-2021-42574; Unicode's UAX #9) and the invisible format characters U+200B-U+200D
/// (zero-width space, non-joiner, joiner), U+2060-U+2064 (word joiner, invisible operators) and
/// U+FEFF (zero-width no-break space). Every output escapes them as [`printable`] does.
pub(crate) fn is_hidden(c: char) -> bool {
    matches!(
        c,
        '\u{061c}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{feff}'
    )
}

/// Turns the spanned tree into JSON, recording each node's location under its field path.
fn flatten(
    node: Spanned<Node>,
    path: String,
    locations: &mut HashMap<String, Location>,
    key_locations: &mut HashMap<String, Location>,
) -> Value {
    if let Some(location) = Location::from_saphyr(node.referenced) {
        locations.insert(path.clone(), location);
    }
    match node.value {
        Node::Scalar(value) => value,
        Node::Seq(items) => Value::Array(
            items
                .into_iter()
                .enumerate()
                .map(|(i, item)| flatten(item, format!("{path}[{i}]"), locations, key_locations))
                .collect(),
        ),
        Node::Map(entries) => {
            let mut object = serde_json::Map::with_capacity(entries.len());
            for (key, value) in entries {
                let Key(name) = key.value;
                let child = if path.is_empty() {
                    name.clone()
                } else {
                    format!("{path}.{name}")
                };
                if let Some(location) = Location::from_saphyr(key.referenced) {
                    key_locations.insert(child.clone(), location);
                }
                let value = flatten(value, child, locations, key_locations);
                object.insert(name, value);
            }
            Value::Object(object)
        }
    }
}

/// One YAML node, its children spanned.
enum Node {
    Scalar(Value),
    Seq(Vec<Spanned<Node>>),
    Map(Vec<(Spanned<Key>, Spanned<Node>)>),
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Node, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Scalar(Value::Bool(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Scalar(Value::from(v)))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Scalar(Value::from(v)))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
        serde_json::Number::from_f64(v)
            .map(|n| Node::Scalar(Value::Number(n)))
            .ok_or_else(|| E::custom(format!("{v} is not a finite number")))
    }

    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Scalar(Value::String(v.to_string())))
    }

    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node::Scalar(Value::String(v)))
    }

    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Scalar(Value::Null))
    }

    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Scalar(Value::Null))
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node, D::Error> {
        Node::deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some(key) = map.next_key()? {
            entries.push((key, map.next_value()?));
        }
        Ok(Node::Map(entries))
    }
}

/// A mapping key: any scalar, as text (JSON object keys are strings).
struct Key(String);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Key, D::Error> {
        deserializer.deserialize_any(KeyVisitor)
    }
}

struct KeyVisitor;

impl Visitor<'_> for KeyVisitor {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a scalar mapping key")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Key, E> {
        Ok(Key(v.to_string()))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Key, E> {
        Ok(Key(v.to_string()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Key, E> {
        Ok(Key(v.to_string()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Key, E> {
        Ok(Key(v.to_string()))
    }

    fn visit_str<E>(self, v: &str) -> Result<Key, E> {
        Ok(Key(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Key, E> {
        Ok(Key(v))
    }

    fn visit_unit<E>(self) -> Result<Key, E> {
        Ok(Key("null".to_string()))
    }

    fn visit_none<E>(self) -> Result<Key, E> {
        Ok(Key("null".to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(text: &str) -> Result<SourceSpec, SpecLoadError> {
        SourceSpec::parse(PathBuf::from("spec.yaml"), text.to_string())
    }

    fn at(line: u64, column: u64) -> Option<Location> {
        Some(Location { line, column })
    }

    const SPEC: &str = "\
# a comment
name: demo
targets:
  - name: a
    url: http://x/
  - name: b
    expect:
      status: [200, \"2xx\"]
    headers:
      X.Trace: on
load: {connections: 2}
";

    #[test]
    fn values_and_locations() {
        let spec = parse(SPEC).unwrap();
        assert_eq!(
            spec.value,
            json!({
                "name": "demo",
                "targets": [
                    {"name": "a", "url": "http://x/"},
                    {"name": "b", "expect": {"status": [200, "2xx"]}, "headers": {"X.Trace": "on"}},
                ],
                "load": {"connections": 2},
            })
        );
        let cases = [
            ("", at(2, 1)),
            ("name", at(2, 7)),
            ("targets", at(4, 3)),
            ("targets[0]", at(4, 5)),
            ("targets[1].expect.status", at(8, 15)),
            ("targets[1].expect.status[1]", at(8, 21)),
            ("targets[1].headers.X.Trace", at(10, 16)),
            ("load.connections", at(11, 21)),
        ];
        for (path, want) in cases {
            assert_eq!(spec.locate(path), want, "{path:?}");
        }
        assert_eq!(spec.locate_key("targets[1].expect.status"), at(8, 7));
        assert_eq!(spec.locate_key("load"), at(11, 1));
        // Not a mapping entry: the value's location.
        assert_eq!(spec.locate_key("targets[1]"), at(6, 5));
    }

    #[test]
    fn missing_paths_fall_back_to_the_nearest_ancestor() {
        let spec = parse(SPEC).unwrap();
        assert_eq!(spec.locate("targets[1].expect.nope"), at(8, 7));
        assert_eq!(spec.locate("targets[7].url"), at(4, 3));
        assert_eq!(spec.locate("load.duration"), at(11, 7));
        assert_eq!(spec.locate("version"), at(2, 1));
        assert_eq!(spec.locate_key("version"), at(2, 1));
    }

    #[test]
    fn parent_paths() {
        let cases = [
            ("a.b[2]", Some("a.b")),
            ("a.b", Some("a")),
            ("a[0]", Some("a")),
            ("a", Some("")),
            ("", None),
        ];
        for (path, want) in cases {
            assert_eq!(parent_path(path), want, "{path:?}");
        }
    }

    #[test]
    fn no_yaml_1_1_surprises() {
        let spec = parse(
            "a: yes\nb: no\nc: on\nd: off\ne: true\nf: 017\ng: 0755\nh: 1_000\ni: 17\nj: 1.5\nk: ~\n",
        )
        .unwrap();
        assert_eq!(
            spec.value,
            json!({
                "a": "yes", "b": "no", "c": "on", "d": "off", "e": true,
                "f": "017", "g": "0755", "h": "1_000", "i": 17, "j": 1.5, "k": null,
            })
        );
    }

    #[test]
    fn syntax_errors_have_a_line_and_column() {
        let cases = [
            ("a: 1\nb: [1, 2\n", 2, 4, "unclosed bracket"),
            ("a:\n  b: 1\n c: 2\n", 3, 2, "did not find expected key"),
            ("a: 1\na: 2\n", 2, 1, "duplicate key `a`"),
            ("a: 1\n---\nb: 2\n", 3, 1, "single YAML document"),
        ];
        for (text, want_line, want_column, want_message) in cases {
            match parse(text) {
                Err(SpecLoadError::Syntax {
                    line,
                    column,
                    message,
                    ..
                }) => {
                    assert_eq!((line, column), (want_line, want_column), "{text:?}");
                    assert!(message.contains(want_message), "{text:?}: {message}");
                }
                other => panic!("{text:?}: expected a syntax error, got {other:?}"),
            }
        }
    }

    #[test]
    fn a_file_that_is_not_utf8_names_its_first_bad_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spec.yaml");
        // Line 2: `k`, `:`, ` `, `é` (two bytes), then 0xFF at byte offset 13.
        std::fs::write(&path, b"name: x\nk: \xc3\xa9\xff\n").unwrap();
        match SourceSpec::read(&path) {
            Err(SpecLoadError::Syntax {
                line: 2,
                column: 5,
                message,
                ..
            }) => assert!(
                message.contains("byte 0xFF (byte offset 13) is not valid UTF-8"),
                "{message}"
            ),
            other => panic!("expected a syntax error at 2:5, got {other:?}"),
        }
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(
            printable("a\u{1b}[31mb\u{7}\0\tc é"),
            "a\\u{1b}[31mb\\u{7}\\u{0}\\tc é"
        );
        assert_eq!(
            printable("abc\u{202e}fed\u{2066}\u{200b}\u{feff}\u{61c}"),
            "abc\\u{202e}fed\\u{2066}\\u{200b}\\u{feff}\\u{61c}"
        );
    }

    #[test]
    fn an_empty_document_is_null() {
        for text in ["", "# nothing here\n"] {
            let spec = parse(text).unwrap();
            assert_eq!(spec.value, Value::Null);
            assert_eq!(spec.locate("load"), at(1, 1));
        }
    }
}
