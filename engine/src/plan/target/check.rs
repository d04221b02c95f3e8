//! A target's `checks`, resolved: each one kind of test on a response (status, header, body,
//! JSON value, latency) with its regular expressions compiled once, here.

use std::fmt::Write as _;

use regex::bytes::Regex;

use super::{StatusSet, status_set};
use crate::plan::Errors;
use crate::spec;

/// Largest compiled regular expression of a check, in bytes (the `regex` crate's limit on its
/// compiled program): a pattern beyond it is refused at plan time, not slow on the hot path.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// One resolved response check: what it tests, and the name reports show.
#[derive(Debug, Clone)]
pub(crate) struct CheckPlan {
    /// The check's `name`, if the spec gives one.
    pub(crate) name: Option<String>,
    /// What it tests.
    pub(crate) kind: CheckKind,
}

/// What a check tests on a response.
#[derive(Debug, Clone)]
pub(crate) enum CheckKind {
    /// The status is in the set (`text`: the code or class as written, for reports).
    Status { set: StatusSet, text: String },
    /// A header (name lower-case; the first one when repeated).
    Header(String, TextTest),
    /// The body contains these bytes.
    BodyContains(Vec<u8>),
    /// The body matches this regular expression.
    BodyMatches(Regex),
    /// The value at this JSON pointer (RFC 6901) in the JSON body.
    Json(String, JsonTest),
    /// The latency (from when the request was due to the response's last byte) is under
    /// `us` microseconds (`text`: the duration as written, for reports).
    DurationUnder { us: u64, text: String },
}

/// A test of a header's value.
#[derive(Debug, Clone)]
pub(crate) enum TextTest {
    /// Present, whatever its value.
    Present,
    /// Exactly this value.
    Equals(String),
    /// A value that matches this regular expression.
    Matches(Regex),
}

/// A test of a JSON value.
#[derive(Debug, Clone)]
pub(crate) enum JsonTest {
    /// Present (`null` included).
    Exists,
    /// Equal to this value.
    Equals(serde_json::Value),
    /// A string that matches this regular expression.
    Matches(Regex),
    /// A number that passes every comparison.
    Compare(Vec<(Comparison, f64)>),
}

/// How a JSON number compares with a bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Comparison {
    /// `lt`: below it.
    Lt,
    /// `le`: at most it.
    Le,
    /// `gt`: above it.
    Gt,
    /// `ge`: at least it.
    Ge,
}

impl Comparison {
    /// Whether `value` compares so with `bound`.
    pub(crate) fn holds(self, value: f64, bound: f64) -> bool {
        match self {
            Comparison::Lt => value < bound,
            Comparison::Le => value <= bound,
            Comparison::Gt => value > bound,
            Comparison::Ge => value >= bound,
        }
    }

    fn symbol(self) -> &'static str {
        match self {
            Comparison::Lt => "<",
            Comparison::Le => "<=",
            Comparison::Gt => ">",
            Comparison::Ge => ">=",
        }
    }
}

impl CheckPlan {
    /// What reports show for the check: its `name`, else a short description of it, e.g.
    /// `header content-type == "application/json"`.
    pub(crate) fn describe(&self) -> String {
        if let Some(name) = &self.name {
            return name.clone();
        }
        match &self.kind {
            CheckKind::Status { text, .. } => format!("status {text}"),
            CheckKind::Header(name, TextTest::Present) => format!("header {name} present"),
            CheckKind::Header(name, TextTest::Equals(value)) => {
                format!("header {name} == {value:?}")
            }
            CheckKind::Header(name, TextTest::Matches(re)) => format!("header {name} ~ /{re}/"),
            CheckKind::BodyContains(text) => {
                format!("body contains {:?}", String::from_utf8_lossy(text))
            }
            CheckKind::BodyMatches(re) => format!("body ~ /{re}/"),
            CheckKind::Json(pointer, JsonTest::Exists) => format!("json {pointer} exists"),
            CheckKind::Json(pointer, JsonTest::Equals(value)) => {
                format!("json {pointer} == {value}")
            }
            CheckKind::Json(pointer, JsonTest::Matches(re)) => format!("json {pointer} ~ /{re}/"),
            CheckKind::Json(pointer, JsonTest::Compare(bounds)) => {
                let mut text = format!("json {pointer}");
                for (i, (cmp, bound)) in bounds.iter().enumerate() {
                    let and = if i > 0 { " and" } else { "" };
                    let _ = write!(text, "{and} {} {bound}", cmp.symbol());
                }
                text
            }
            CheckKind::DurationUnder { text, .. } => format!("duration < {text}"),
        }
    }

    /// Whether the check reads the response's body.
    pub(crate) fn reads_body(&self) -> bool {
        matches!(
            self.kind,
            CheckKind::BodyContains(_) | CheckKind::BodyMatches(_) | CheckKind::Json(..)
        )
    }

    /// Whether the check reads the response's head (its headers).
    pub(crate) fn reads_head(&self) -> bool {
        !matches!(
            self.kind,
            CheckKind::Status { .. } | CheckKind::DurationUnder { .. }
        )
    }
}

/// Resolves a target's `checks` (the target at `path`), or `None` if one of them is wrong
/// (the errors say which, by field path: `targets[0].checks[2].matches`).
pub(super) fn build_checks(
    checks: &[spec::Check],
    path: &str,
    errors: &mut Errors,
) -> Option<Vec<CheckPlan>> {
    let before = errors.0.len();
    let out: Vec<CheckPlan> = checks
        .iter()
        .enumerate()
        .filter_map(|(i, check)| build_check(check, &format!("{path}.checks[{i}]"), errors))
        .collect();
    (errors.0.len() == before).then_some(out)
}

/// The fields of a check that name its kind, and those that modify one.
const KINDS: [&str; 6] = [
    "status",
    "header",
    "body_contains",
    "body_matches",
    "json",
    "duration",
];

fn build_check(check: &spec::Check, path: &str, errors: &mut Errors) -> Option<CheckPlan> {
    if let Some(name) = &check.name
        && (!errors.printable(&format!("{path}.name"), name) || name.is_empty())
    {
        if name.is_empty() {
            errors.push(format!("{path}.name"), "must not be empty");
        }
        return None;
    }
    let given = [
        check.status.is_some(),
        check.header.is_some(),
        check.body_contains.is_some(),
        check.body_matches.is_some(),
        check.json.is_some(),
        check.duration.is_some(),
    ];
    let kinds: Vec<&str> = KINDS
        .iter()
        .zip(given)
        .filter(|(_, g)| *g)
        .map(|(k, _)| *k)
        .collect();
    let [kind] = kinds[..] else {
        let found = if kinds.is_empty() {
            "none given".to_string()
        } else {
            format!("found `{}`", kinds.join("` and `"))
        };
        errors.push(
            path,
            format!("give exactly one of `{}` ({found})", KINDS.join("`, `")),
        );
        return None;
    };
    if !modifiers_fit(check, kind, path, errors) {
        return None;
    }
    let kind = match kind {
        "status" => status_check(check.status.as_ref()?, path, errors)?,
        "header" => header_check(check, path, errors)?,
        "body_contains" => CheckKind::BodyContains(check.body_contains.clone()?.into_bytes()),
        "body_matches" => CheckKind::BodyMatches(regex(
            &format!("{path}.body_matches"),
            check.body_matches.as_deref()?,
            errors,
        )?),
        "json" => json_check(check, path, errors)?,
        _ => {
            let text = check.duration.as_deref()?;
            let limit = errors.duration(&format!("{path}.duration"), text, false)?;
            CheckKind::DurationUnder {
                us: limit.as_micros().try_into().unwrap_or(u64::MAX),
                text: text.to_string(),
            }
        }
    };
    Some(CheckPlan {
        name: check.name.clone(),
        kind,
    })
}

/// Whether the modifiers given (`equals`, `matches`, `lt`, `le`, `gt`, `ge`) fit a check of
/// `kind`; if not, records an error at each that does not.
fn modifiers_fit(check: &spec::Check, kind: &str, path: &str, errors: &mut Errors) -> bool {
    let modifiers = [
        ("equals", check.equals.is_some(), &["header", "json"][..]),
        ("matches", check.matches.is_some(), &["header", "json"]),
        ("lt", check.lt.is_some(), &["json"]),
        ("le", check.le.is_some(), &["json"]),
        ("gt", check.gt.is_some(), &["json"]),
        ("ge", check.ge.is_some(), &["json"]),
    ];
    let mut fit = true;
    for (field, given, kinds) in modifiers {
        if given && !kinds.contains(&kind) {
            let takers = kinds.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>();
            errors.push(
                format!("{path}.{field}"),
                format!(
                    "a `{kind}` check takes no `{field}` (only {} checks do)",
                    takers.join(" and ")
                ),
            );
            fit = false;
        }
    }
    let compares = [check.lt, check.le, check.gt, check.ge]
        .iter()
        .any(Option::is_some);
    let tests = [check.equals.is_some(), check.matches.is_some(), compares];
    if tests.iter().filter(|t| **t).count() > 1 {
        let field = if check.matches.is_some() {
            "matches"
        } else {
            "equals"
        };
        errors.push(
            format!("{path}.{field}"),
            "give one test: `equals`, `matches`, or comparisons (`lt`, `le`, `gt`, `ge`)",
        );
        fit = false;
    }
    fit
}

fn status_check(status: &spec::StatusMatch, path: &str, errors: &mut Errors) -> Option<CheckKind> {
    let Some(set) = status_set(status) else {
        errors.push(
            format!("{path}.status"),
            format!("{status:?} is not a status code (100-599) or class (`2xx`)"),
        );
        return None;
    };
    let text = match status {
        spec::StatusMatch::Code(code) => code.to_string(),
        spec::StatusMatch::Class(class) => class.clone(),
    };
    Some(CheckKind::Status { set, text })
}

fn header_check(check: &spec::Check, path: &str, errors: &mut Errors) -> Option<CheckKind> {
    let name = check.header.as_deref()?;
    if !errors.printable(&format!("{path}.header"), name) {
        return None;
    }
    let test = match (&check.equals, &check.matches) {
        (None, None) => TextTest::Present,
        (Some(serde_json::Value::String(value)), _) => TextTest::Equals(value.clone()),
        (Some(other), _) => {
            errors.push(
                format!("{path}.equals"),
                format!("a header's value is text: write `\"{other}\"`"),
            );
            return None;
        }
        (None, Some(re)) => TextTest::Matches(regex(&format!("{path}.matches"), re, errors)?),
    };
    Some(CheckKind::Header(name.to_ascii_lowercase(), test))
}

fn json_check(check: &spec::Check, path: &str, errors: &mut Errors) -> Option<CheckKind> {
    let pointer = check.json.as_deref()?;
    let field = format!("{path}.json");
    if !errors.printable(&field, pointer) {
        return None;
    }
    if !(pointer.is_empty() || pointer.starts_with('/')) {
        errors.push(
            field,
            format!("`{pointer}` is not a JSON pointer: it starts with `/`, e.g. `/data/0/id`"),
        );
        return None;
    }
    let bounds: Vec<(Comparison, f64)> = [
        (Comparison::Lt, check.lt),
        (Comparison::Le, check.le),
        (Comparison::Gt, check.gt),
        (Comparison::Ge, check.ge),
    ]
    .into_iter()
    .filter_map(|(c, b)| b.map(|b| (c, b)))
    .collect();
    let test = match (&check.equals, &check.matches) {
        (Some(value), _) => JsonTest::Equals(value.clone()),
        (None, Some(re)) => JsonTest::Matches(regex(&format!("{path}.matches"), re, errors)?),
        (None, None) if bounds.is_empty() => JsonTest::Exists,
        (None, None) => JsonTest::Compare(bounds),
    };
    Some(CheckKind::Json(pointer.to_string(), test))
}

/// The regular expression at `field`, compiled; `None` (and an error) if it is not one.
fn regex(field: &str, pattern: &str, errors: &mut Errors) -> Option<Regex> {
    if !errors.printable(field, pattern) {
        return None;
    }
    regex::bytes::RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| errors.push(field, format!("not a regular expression: {}", reason(&e))))
        .ok()
}

/// The `regex` crate's error in one line: a syntax error's last line (`unclosed group`)
/// without the pattern drawn above it.
fn reason(e: &regex::Error) -> String {
    let text = e.to_string();
    text.lines()
        .rev()
        .find_map(|line| line.strip_prefix("error: "))
        .unwrap_or(&text)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(yaml: &str) -> Result<Vec<CheckPlan>, Vec<(String, String)>> {
        let source = spec::SourceSpec::parse("checks.yaml".into(), yaml.to_string()).unwrap();
        let checks: Vec<spec::Check> = serde_json::from_value(source.value).unwrap();
        let mut errors = Errors::default();
        build_checks(&checks, "targets[0]", &mut errors)
            .ok_or_else(|| errors.0.into_iter().map(|e| (e.path, e.message)).collect())
    }

    #[test]
    fn every_kind_is_planned_and_described() {
        let checks = plan(
            r#"
- status: 200
- status: 2xx
- header: Content-Type
- header: Content-Type
  equals: application/json
- header: Content-Type
  matches: '^application/'
- body_contains: ok
- body_matches: 'id":\s*\d+'
- json: /id
- json: /id
  equals: 42
- json: /name
  matches: '^A'
- json: /total
  gt: 0
  le: 10
- duration: 200ms
  name: fast enough
"#,
        )
        .unwrap();
        let described: Vec<String> = checks.iter().map(CheckPlan::describe).collect();
        assert_eq!(
            described,
            [
                "status 200",
                "status 2xx",
                "header content-type present",
                "header content-type == \"application/json\"",
                "header content-type ~ /^application//",
                "body contains \"ok\"",
                "body ~ /id\":\\s*\\d+/",
                "json /id exists",
                "json /id == 42",
                "json /name ~ /^A/",
                "json /total <= 10 and > 0",
                "fast enough",
            ]
        );
        assert!(matches!(
            checks[11].kind,
            CheckKind::DurationUnder { us: 200_000, .. }
        ));
        let body: Vec<bool> = checks.iter().map(CheckPlan::reads_body).collect();
        assert_eq!(body.iter().filter(|b| **b).count(), 6);
        assert!(!checks[0].reads_head() && !checks[11].reads_head() && checks[2].reads_head());
    }

    #[test]
    fn wrong_checks_are_refused_with_their_field_paths() {
        let cases = [
            (
                "- {}",
                "targets[0].checks[0]",
                "give exactly one of `status`",
            ),
            (
                "- {header: a, json: /a}",
                "targets[0].checks[0]",
                "found `header` and `json`",
            ),
            (
                "- {status: 200}\n- {body_contains: x, equals: y}",
                "targets[0].checks[1].equals",
                "a `body_contains` check takes no `equals`",
            ),
            (
                "- {header: a, gt: 1}",
                "targets[0].checks[0].gt",
                "only `json` checks do",
            ),
            (
                "- {duration: 1s, matches: x}",
                "targets[0].checks[0].matches",
                "takes no `matches`",
            ),
            (
                "- {header: a, matches: '('}",
                "targets[0].checks[0].matches",
                "not a regular expression",
            ),
            (
                "- {body_matches: '[a'}",
                "targets[0].checks[0].body_matches",
                "not a regular expression: unclosed character class",
            ),
            (
                "- {json: /a, equals: 1, lt: 2}",
                "targets[0].checks[0].equals",
                "give one test",
            ),
            (
                "- {header: a, equals: 1}",
                "targets[0].checks[0].equals",
                "a header's value is text",
            ),
            (
                "- {json: a}",
                "targets[0].checks[0].json",
                "is not a JSON pointer",
            ),
            (
                "- {status: 700}",
                "targets[0].checks[0].status",
                "not a status code",
            ),
            (
                "- {status: 6xx}",
                "targets[0].checks[0].status",
                "not a status code",
            ),
            (
                "- {duration: 0s}",
                "targets[0].checks[0].duration",
                "longer than 0",
            ),
            ("- {duration: fast}", "targets[0].checks[0].duration", ""),
            (
                "- {name: \"\", status: 200}",
                "targets[0].checks[0].name",
                "empty",
            ),
        ];
        for (yaml, path, want) in cases {
            let errors = plan(yaml)
                .err()
                .unwrap_or_else(|| panic!("{yaml}: no error"));
            assert!(
                errors.iter().any(|(p, m)| p == path && m.contains(want)),
                "{yaml}: {errors:?}"
            );
        }
    }
}
