//! The spec's YAML against the published JSON Schema: each violation explained for a person,
//! at its field path, with what the schema expected and, for a likely typo, the closest name.

use std::sync::OnceLock;

use jsonschema::ValidationError;
use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

use super::spec_schema;
use crate::spec::{
    DURATION_PATTERN, METHOD_PATTERN, RATE_PATTERN, STATUS_CLASS_PATTERN, THINK_TIME_PATTERN,
};

/// The spec schema, compiled once.
fn validator() -> &'static (Value, jsonschema::Validator) {
    static VALIDATOR: OnceLock<(Value, jsonschema::Validator)> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let schema = spec_schema();
        let validator = jsonschema::validator_for(&schema).expect("the spec schema compiles");
        (schema, validator)
    })
}

/// One schema violation, explained for a person.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Finding {
    /// Field path, such as `targets[1].expect.status`.
    pub(super) path: String,
    /// Whether the problem is the field's name (point at the key, not the value).
    pub(super) at_key: bool,
    /// What is wrong, and what was expected.
    pub(super) message: String,
}

/// Every way `value` fails the spec schema.
pub(super) fn schema_findings(value: &Value) -> Vec<Finding> {
    let (schema, validator) = validator();
    let mut findings = Vec::new();
    for error in validator.iter_errors(value) {
        explain(&error, schema, value, &mut findings);
    }
    findings
}

/// Turns one validation error into findings: the keyword decides the wording, the schema
/// around the keyword says what was expected.
fn explain(error: &ValidationError<'_>, schema: &Value, root: &Value, out: &mut Vec<Finding>) {
    let path = field_path(root, error.instance_path().as_str());
    let instance: &Value = error.instance();
    // The (sub)schema that holds the failing keyword: `/$defs/Load/properties/duration` for
    // `/$defs/Load/properties/duration/pattern`.
    let keyword_at = error.schema_path().as_str();
    let owner = keyword_at
        .rsplit_once('/')
        .and_then(|(parent, _)| schema.pointer(parent))
        .map_or(&Value::Null, |node| resolve(schema, node));
    let found = describe_value(instance);
    let message = match error.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let allowed: Vec<&str> = owner
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().map(String::as_str).collect())
                .unwrap_or_default();
            for name in unexpected {
                out.push(Finding {
                    path: join(&path, name),
                    at_key: true,
                    message: unknown_field(name, &allowed),
                });
            }
            return;
        }
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            out.push(Finding {
                path: join(&path, name),
                at_key: false,
                message: format!("missing required field `{name}`"),
            });
            return;
        }
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            let branches = owner
                .get("anyOf")
                .or_else(|| owner.get("oneOf"))
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice);
            // `service: {...}` against `anyOf: [Service, null]`: the problem is inside the
            // mapping, so report what is wrong there rather than "not any of".
            if let Some(i) = structural_branch(schema, branches, instance)
                && let Some(errors) = context.get(i)
                && !errors.is_empty()
            {
                for e in errors {
                    explain(e, schema, root, out);
                }
                return;
            }
            expected(schema, owner, instance)
        }
        ValidationErrorKind::Type { .. }
        | ValidationErrorKind::Pattern { .. }
        | ValidationErrorKind::Enum { .. }
        | ValidationErrorKind::Constant { .. } => expected(schema, owner, instance),
        ValidationErrorKind::Minimum { .. } | ValidationErrorKind::Maximum { .. } => {
            let min = owner.get("minimum");
            let max = owner.get("maximum");
            let range = match (min, max) {
                (Some(a), Some(b)) if a == b => format!("{a}"),
                (Some(a), Some(b)) => format!("from {a} to {b}"),
                (Some(a), None) => format!("at least {a}"),
                (None, Some(b)) => format!("at most {b}"),
                (None, None) => "in range".to_string(),
            };
            format!("must be {range}, found {found}")
        }
        ValidationErrorKind::MinItems { limit: 1 } => "must not be empty".to_string(),
        ValidationErrorKind::MinItems { limit } => format!("must have at least {limit} items"),
        ValidationErrorKind::MaxItems { limit } => format!("must have at most {limit} items"),
        ValidationErrorKind::MinLength { limit: 1 } => "must not be empty".to_string(),
        ValidationErrorKind::MinLength { limit } => {
            format!("must be at least {limit} characters long")
        }
        ValidationErrorKind::MaxLength { limit } => {
            format!("must be at most {limit} characters long")
        }
        _ => error.to_string(),
    };
    out.push(Finding {
        path,
        at_key: false,
        message,
    });
}

/// `expected ..., found ...` for a value that `node` (a schema) does not accept, with a hint
/// where one helps: the closest allowed word for a likely typo (`opne` -> `open`), quotes for
/// a number allowed only as text (`1.3` -> `"1.3"`), the unit for a bare number where a rate
/// is expected (`500` -> `500/s`).
fn expected(root: &Value, node: &Value, instance: &Value) -> String {
    let found = describe_value(instance);
    let choices = choices(root, node);
    if !choices.is_empty() {
        let listed: Vec<String> = choices.iter().map(|c| format!("`{c}`")).collect();
        let message = format!("expected one of {}, found {found}", listed.join(", "));
        let choices: Vec<&str> = choices.iter().map(String::as_str).collect();
        return match instance {
            // A word of one or two characters (`h3`) is too short to guess what was meant.
            Value::String(s) if s.chars().count() > 2 => match nearest(s, &choices) {
                Some(closest) => format!("{message}; did you mean `{closest}`?"),
                None => message,
            },
            Value::Number(n) if choices.contains(&n.to_string().as_str()) => {
                format!("{message}; quote it: `\"{n}\"`")
            }
            _ => message,
        };
    }
    let message = format!("expected {}, found {found}", describe(root, node));
    let pattern = resolve(root, node).get("pattern").and_then(Value::as_str);
    match instance {
        Value::Number(n) if pattern == Some(RATE_PATTERN) => format!("{message}; write `{n}/s`"),
        _ => message,
    }
}

/// The words a schema allows when it allows only a list of words: an `enum`, a `const`, or
/// those of every branch of an `anyOf`/`oneOf` but `null`. Empty when it allows more.
fn choices(root: &Value, node: &Value) -> Vec<String> {
    let node = resolve(root, node);
    if let Some(options) = node.get("enum").and_then(Value::as_array) {
        return options
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
    }
    if let Some(word) = node.get("const").and_then(Value::as_str) {
        return vec![word.to_string()];
    }
    let Some(branches) = node
        .get("anyOf")
        .or_else(|| node.get("oneOf"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    let mut all = Vec::new();
    for branch in branches {
        if types(resolve(root, branch)) == ["null"] {
            continue;
        }
        let words = choices(root, branch);
        if words.is_empty() {
            return Vec::new();
        }
        all.extend(words);
    }
    all
}

/// `unknown field `timout`; did you mean `timeout`?`, or the list of allowed names.
fn unknown_field(name: &str, allowed: &[&str]) -> String {
    // k6's stages ramp to a `target`; ours to a `level` (a target is an endpoint under test).
    if name == "target" && allowed.contains(&"level") {
        return "unknown field `target`; use `level` (k6's `target`): connections, or a rate \
                such as `100/s`"
            .to_string();
    }
    match nearest(name, allowed) {
        Some(candidate) => format!("unknown field `{name}`; did you mean `{candidate}`?"),
        None if allowed.is_empty() => format!("unknown field `{name}`"),
        None => {
            let list: Vec<String> = allowed.iter().map(|a| format!("`{a}`")).collect();
            format!(
                "unknown field `{name}`; expected one of {}",
                list.join(", ")
            )
        }
    }
}

/// Every number in `value` that is not an integer (`2.0`, `1e3`): no spec field takes one.
pub(super) fn float_numbers(
    value: &Value,
    path: String,
    out: &mut Vec<(String, serde_json::Number)>,
) {
    match value {
        Value::Number(n) if n.is_f64() => out.push((path, n.clone())),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                float_numbers(item, format!("{path}[{i}]"), out);
            }
        }
        Value::Object(entries) => {
            for (key, item) in entries {
                float_numbers(item, join(&path, key), out);
            }
        }
        _ => {}
    }
}

/// The allowed name closest to `name`, if it is close enough to be a likely typo: at most
/// one edit (insertion, deletion, substitution or swap) per three characters.
fn nearest<'a>(name: &str, allowed: &[&'a str]) -> Option<&'a str> {
    allowed
        .iter()
        .map(|candidate| (strsim::damerau_levenshtein(name, candidate), *candidate))
        .filter(|(distance, candidate)| {
            let longer = name.chars().count().max(candidate.chars().count());
            *distance <= (longer / 3).max(1)
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// The dotted/bracketed field path (`targets[1].expect.status`) of a JSON pointer into `root`.
fn field_path(root: &Value, pointer: &str) -> String {
    let mut path = String::new();
    let mut node = Some(root);
    for raw in pointer.split('/').skip(1) {
        let segment = raw.replace("~1", "/").replace("~0", "~");
        if let Some(Value::Array(items)) = node
            && let Ok(i) = segment.parse::<usize>()
        {
            path.push_str(&format!("[{i}]"));
            node = items.get(i);
            continue;
        }
        node = node
            .and_then(|n| n.as_object())
            .and_then(|o| o.get(&segment));
        path = join(&path, &segment);
    }
    path
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// Follows `$ref`s (local ones, `#/$defs/...`) to the schema they name.
fn resolve<'a>(root: &'a Value, mut node: &'a Value) -> &'a Value {
    for _ in 0..16 {
        let Some(target) = node
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
            .and_then(|pointer| root.pointer(pointer))
        else {
            break;
        };
        node = target;
    }
    node
}

/// The JSON types a schema allows (`type`, a string or a list); empty when it does not say.
fn types(node: &Value) -> Vec<&str> {
    match node.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn type_matches(json_type: &str, value: &Value) -> bool {
    match json_type {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

/// The one branch of an `anyOf` that `instance` (a mapping or a list) could be meant for.
fn structural_branch(root: &Value, branches: &[Value], instance: &Value) -> Option<usize> {
    if !(instance.is_object() || instance.is_array()) {
        return None;
    }
    let mut matching = branches.iter().enumerate().filter(|(_, branch)| {
        types(resolve(root, branch))
            .iter()
            .any(|t| type_matches(t, instance))
    });
    match (matching.next(), matching.next()) {
        (Some((i, _)), None) => Some(i),
        _ => None,
    }
}

/// What a schema accepts, in words: `an integer from 100 to 599 or a status class such as
/// `2xx``. `null` is left out when something else is allowed: in YAML it means "not given".
fn describe(root: &Value, node: &Value) -> String {
    let node = resolve(root, node);
    if let Some(branches) = node
        .get("anyOf")
        .or_else(|| node.get("oneOf"))
        .and_then(Value::as_array)
    {
        let parts: Vec<String> = branches
            .iter()
            .filter(|b| types(resolve(root, b)) != ["null"])
            .map(|b| describe(root, b))
            .collect();
        return if parts.is_empty() {
            "nothing".to_string()
        } else {
            parts.join(" or ")
        };
    }
    let all = types(node);
    let mut wanted: Vec<&str> = all.iter().copied().filter(|t| *t != "null").collect();
    if wanted.is_empty() {
        wanted = all;
    }
    if wanted.is_empty() {
        return "a valid value".to_string();
    }
    let parts: Vec<String> = wanted.iter().map(|t| describe_type(node, t)).collect();
    parts.join(" or ")
}

fn describe_type(node: &Value, json_type: &str) -> String {
    match json_type {
        "string" => match node.get("pattern").and_then(Value::as_str) {
            _ if node.get("enum").is_some_and(Value::is_array) => {
                let options: Vec<String> = node["enum"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|v| format!("`{}`", v.as_str().unwrap_or_default()))
                    .collect();
                format!("one of {}", options.join(", "))
            }
            _ if node.get("const").is_some_and(Value::is_string) => {
                format!("`{}`", node["const"].as_str().unwrap_or_default())
            }
            Some(pattern) => describe_pattern(pattern),
            None if node.get("minLength").and_then(Value::as_u64) >= Some(1) => {
                "a non-empty string".to_string()
            }
            None => "a string".to_string(),
        },
        "integer" => match (node.get("minimum"), node.get("maximum")) {
            (Some(a), Some(b)) if a == b => format!("the number {a}"),
            (Some(a), Some(b)) => format!("an integer from {a} to {b}"),
            (Some(a), None) => format!("an integer of at least {a}"),
            (None, Some(b)) => format!("an integer of at most {b}"),
            (None, None) => "an integer".to_string(),
        },
        "number" => "a number".to_string(),
        "boolean" => "`true` or `false`".to_string(),
        "array" => "a list".to_string(),
        "object" => "a mapping".to_string(),
        "null" => "nothing".to_string(),
        other => format!("a value of type {other}"),
    }
}

/// The spec's patterns in words; others are quoted.
fn describe_pattern(pattern: &str) -> String {
    match pattern {
        DURATION_PATTERN => "a duration with a unit, such as `200ms` or `1.5s`".to_string(),
        STATUS_CLASS_PATTERN => "a status class such as `2xx`".to_string(),
        METHOD_PATTERN => "an HTTP method in capitals, such as `GET`".to_string(),
        RATE_PATTERN => "a rate with its unit, such as `500/s`".to_string(),
        THINK_TIME_PATTERN => {
            "a duration such as `100ms`, or a range such as `50ms..150ms`".to_string()
        }
        other => format!("a string matching `{other}`"),
    }
}

/// What was found, in words: `the number `10``, `the string `yes``, `a mapping`.
fn describe_value(value: &Value) -> String {
    match value {
        Value::Null => "an empty value".to_string(),
        Value::Bool(b) => format!("the boolean `{b}`"),
        Value::Number(n) => format!("the number `{n}`"),
        Value::String(s) => {
            const MAX: usize = 40;
            if s.chars().count() > MAX {
                let head: String = s.chars().take(MAX).collect();
                format!("the string `{head}...`")
            } else {
                format!("the string `{s}`")
            }
        }
        Value::Array(_) => "a list".to_string(),
        Value::Object(_) => "a mapping".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn findings(value: Value) -> Vec<(String, String)> {
        schema_findings(&value)
            .into_iter()
            .map(|f| (f.path, f.message))
            .collect()
    }

    fn minimal() -> Value {
        json!({
            "version": 1,
            "name": "t",
            "targets": [{"name": "a", "url": "http://127.0.0.1/"}],
            "load": {"connections": 1, "requests": 1},
        })
    }

    #[test]
    fn a_minimal_spec_matches_the_schema() {
        assert_eq!(findings(minimal()), []);
    }

    #[test]
    fn suggestions_are_for_likely_typos_only() {
        let allowed = ["connections", "duration", "requests", "warmup"];
        let cases = [
            ("duraton", Some("duration")),
            ("conections", Some("connections")),
            ("warmpu", Some("warmup")),
            ("request", Some("requests")),
            ("ramp", None),
            ("x", None),
            ("timeout", None),
        ];
        for (name, want) in cases {
            assert_eq!(nearest(name, &allowed), want, "{name}");
        }
        assert_eq!(
            unknown_field("ramp", &allowed),
            "unknown field `ramp`; expected one of `connections`, `duration`, `requests`, `warmup`"
        );
        assert_eq!(unknown_field("ramp", &[]), "unknown field `ramp`");
        assert!(unknown_field("target", &["duration", "level", "warmup"]).contains("use `level`"));
    }

    #[test]
    fn json_pointers_become_field_paths() {
        let value = json!({
            "targets": [{}, {"expect": {"status": [1, 2]}, "headers": {"200": "x", "a/b": "y"}}],
        });
        let cases = [
            ("", ""),
            ("/targets", "targets"),
            ("/targets/1/expect/status/0", "targets[1].expect.status[0]"),
            // A map key that looks like an index is still a key.
            ("/targets/1/headers/200", "targets[1].headers.200"),
            ("/targets/1/headers/a~1b", "targets[1].headers.a/b"),
            // Past the end of the document (a missing field): keys all the way.
            ("/targets/1/nope/3", "targets[1].nope.3"),
        ];
        for (pointer, want) in cases {
            assert_eq!(field_path(&value, pointer), want, "{pointer}");
        }
    }

    #[test]
    fn untagged_status_says_what_is_accepted() {
        let mut spec = minimal();
        spec["targets"][0]["expect"] = json!({"status": [200, "2xx", 99, "2XX", true]});
        let expected = "expected an integer from 100 to 599 or a status class such as `2xx`";
        assert_eq!(
            findings(spec),
            [
                (
                    "targets[0].expect.status[2]".to_string(),
                    format!("{expected}, found the number `99`")
                ),
                (
                    "targets[0].expect.status[3]".to_string(),
                    format!("{expected}, found the string `2XX`")
                ),
                (
                    "targets[0].expect.status[4]".to_string(),
                    format!("{expected}, found the boolean `true`")
                ),
            ]
        );
    }

    #[test]
    fn an_optional_mapping_reports_what_is_wrong_inside_it() {
        let mut spec = minimal();
        spec["service"] = json!({"command": [], "ready_url": 5});
        let mut got = findings(spec.clone());
        got.sort();
        assert_eq!(
            got,
            [
                (
                    "service.command".to_string(),
                    "must not be empty".to_string()
                ),
                (
                    "service.ready_url".to_string(),
                    "expected a string, found the number `5`".to_string()
                ),
            ]
        );
        spec["service"] = json!("./server");
        assert_eq!(
            findings(spec),
            [(
                "service".to_string(),
                "expected a mapping, found the string `./server`".to_string()
            )]
        );
    }

    #[test]
    fn null_is_accepted_for_optional_fields() {
        let mut spec = minimal();
        spec["description"] = Value::Null;
        spec["service"] = Value::Null;
        spec["targets"][0]["weight"] = Value::Null;
        assert_eq!(findings(spec), []);
    }
}
