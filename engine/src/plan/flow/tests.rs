//! Flows planned from real spec files (`tests/specs/valid/flows.yaml` and its data files)
//! and from specs written here: the targets, variables, templates and data rows.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{DataOrder, FlowPlan, OnError, Part, RequestTemplate, Source};
use crate::plan::regression::RuleScope;
use crate::plan::threshold::{Metric, Scope};
use crate::plan::{BuildContext, Plan};
use crate::spec::SourceSpec;

const UA: &str = concat!("User-Agent: loadgate/", env!("CARGO_PKG_VERSION"), "\r\n");

/// Plans the spec at `path` (schema checks aside), or returns its errors as `path: message`
/// lines.
fn try_plan(path: &Path) -> Result<Plan, String> {
    let source = SourceSpec::read(path).unwrap();
    let spec: crate::spec::Spec = serde_json::from_value(source.value.clone()).unwrap();
    let ctx = BuildContext {
        source: source.text.as_bytes(),
        spec_dir: path.parent().unwrap(),
        var: &|_| None,
    };
    crate::plan::build(&spec, &ctx).map_err(|errors| {
        errors
            .iter()
            .map(|e| format!("{}: {}\n", e.path, e.message))
            .collect()
    })
}

fn plan_of(path: &Path) -> Plan {
    try_plan(path).unwrap_or_else(|e| panic!("{e}"))
}

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/specs/valid")
        .join(name)
}

/// The request of step `step` of `flow` with `values` (by variable name) and `cookie`.
fn render(flow: &FlowPlan, step: usize, values: &[(&str, &str)], cookie: Option<&[u8]>) -> String {
    let value = |slot: usize| {
        values
            .iter()
            .find(|(name, _)| *name == flow.vars[slot])
            .map(|(_, v)| v.as_bytes())
    };
    let mut out = Vec::new();
    flow.steps[step]
        .template
        .render(value, cookie, None, &mut out)
        .unwrap_or_else(|slot| panic!("no value for `{}`", flow.vars[slot]));
    String::from_utf8(out).unwrap()
}

#[test]
fn the_corpus_flows_are_planned() {
    let plan = plan_of(&corpus("flows.yaml"));
    let names: Vec<&str> = plan.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["shop/login", "shop/list", "shop/open", "cart/add"]);
    assert!(plan.targets.iter().all(|t| t.weight == 0));
    assert_eq!(plan.targets[0].timeout, Duration::from_secs(2));
    assert_eq!(plan.targets[1].timeout, Duration::from_secs(10));
    assert_eq!(
        plan.targets[2].display_url,
        "http://127.0.0.1:8080/api/items/{{first}}"
    );

    let (shop, cart) = (&plan.flows[0], &plan.flows[1]);
    assert_eq!(
        (shop.weight, shop.on_error, shop.cookies),
        (3, OnError::NextIteration, true)
    );
    assert_eq!(
        (cart.weight, cart.on_error, cart.cookies),
        (1, OnError::Continue, false)
    );
    // Data columns first, then the extractors' variables in step order.
    assert_eq!(
        shop.vars,
        [
            "username", "password", "token", "sid", "first", "code", "etag"
        ]
    );
    assert_eq!(cart.vars, ["item", "note", "gift"]);
    let targets: Vec<usize> = plan
        .flows
        .iter()
        .flat_map(|f| &f.steps)
        .map(|s| s.target)
        .collect();
    assert_eq!(targets, [0, 1, 2, 3]);

    let data = shop.data.as_ref().unwrap();
    assert_eq!(data.order, DataOrder::Sequential);
    assert_eq!(&*data.rows[1], ["bob, jr", "secret-bob"]);
    let data = cart.data.as_ref().unwrap();
    assert_eq!(data.order, DataOrder::Once);
    assert_eq!(&*data.rows[0], ["3", "first", "true"]);
    assert_eq!(&*data.rows[1], ["7", "second", "false"]);
}

#[test]
fn the_corpus_steps_have_their_extractors_templates_and_rules() {
    let plan = plan_of(&corpus("flows.yaml"));
    let (shop, cart) = (&plan.flows[0], &plan.flows[1]);
    let login = &shop.steps[0];
    assert_eq!(login.group.as_deref(), Some("auth"));
    assert!(matches!(&login.extract[0].source, Source::Json(p) if p == "/token"));
    assert_eq!(login.extract[1].slot, 3);
    assert!(matches!(&shop.steps[1].extract[0].source, Source::Regex(_)));
    assert!(shop.steps[1].think_time.is_some());
    assert_eq!(shop.steps[2].extract[0].default.as_deref(), Some(""));
    assert_eq!(
        shop.steps[2].url.as_str(),
        "http://127.0.0.1:8080/api/items/"
    );
    assert_eq!(cart.steps[0].url.as_str(), "http://127.0.0.1:8080/api/cart");

    let body = r#"{"user": "ada", "password": "secret-ada"}"#;
    assert_eq!(
        render(
            shop,
            0,
            &[("username", "ada"), ("password", "secret-ada")],
            None
        ),
        format!(
            "POST /api/login HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n{UA}Accept: application/json\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
    );
    // The body file holds variables too; its line break stays.
    let added = render(cart, 0, &[("item", "7"), ("note", "second")], None);
    assert!(
        added.ends_with("Content-Length: 30\r\n\r\n{\"item\": 7, \"note\": \"second\"}\n"),
        "{added}"
    );
    // The target's own request: every variable empty.
    let request = String::from_utf8_lossy(&plan.targets[3].request).into_owned();
    assert!(
        request.ends_with("Content-Length: 23\r\n\r\n{\"item\": , \"note\": \"\"}\n"),
        "{request}"
    );

    let flow_slo: Vec<Metric> = plan
        .slo
        .iter()
        .filter(|t| t.scope == Scope::Flow(0))
        .map(|t| t.metric)
        .collect();
    assert_eq!(
        flow_slo,
        [Metric::Latency, Metric::Responses, Metric::Errors]
    );
    assert_eq!(
        plan.slo
            .iter()
            .filter(|t| t.scope == Scope::Target(0))
            .count(),
        1
    );
    let scopes: Vec<&RuleScope> = plan.regression.iter().map(|r| &r.scope).collect();
    assert_eq!(
        scopes.iter().filter(|s| ***s == RuleScope::Total).count(),
        5
    );
    assert_eq!(
        scopes[5..],
        [
            &RuleScope::Target("shop/login".into()),
            &RuleScope::Flow("shop".into())
        ]
    );
}

/// Plans the spec `text`, written with `files` into a folder of its own.
fn plan_text(text: &str, files: &[(&str, &str)]) -> Result<Plan, String> {
    let dir = tempfile::tempdir().unwrap();
    for (name, content) in files {
        std::fs::write(dir.path().join(name), content).unwrap();
    }
    let path = dir.path().join("spec.yaml");
    std::fs::write(&path, text).unwrap();
    try_plan(&path)
}

#[test]
fn path_header_and_body_slots_render_with_the_cookie_and_length() {
    let plan = plan_text(
        r#"
version: 1
name: slots
load: { connections: 1, requests: 1 }
flows:
  - name: f
    steps:
      - name: a
        url: "http://127.0.0.1:9/login"
        extract: [{ var: id, json: /id }, { var: tok, header: X-Token }]
      - name: b
        method: PUT
        url: "http://127.0.0.1:9/items/{{id}}?v={{ tok }}"
        headers: { Authorization: "Bearer {{tok}}", X-Fixed: "1" }
        body: '[{{id}},"{{tok}}"]'
"#,
        &[],
    )
    .unwrap();
    let flow = &plan.flows[0];
    let rendered = render(flow, 1, &[("id", "42"), ("tok", "t-1")], Some(b"session=9"));
    assert_eq!(
        rendered,
        format!(
            "PUT /items/42?v=t-1 HTTP/1.1\r\nHost: 127.0.0.1:9\r\n{UA}Authorization: Bearer t-1\r\n\
             X-Fixed: 1\r\nCookie: session=9\r\nContent-Length: 10\r\n\r\n[42,\"t-1\"]"
        )
    );
    // Without slots in the body, its length is part of the head.
    let first = render(flow, 0, &[], None);
    assert_eq!(
        first,
        format!("GET /login HTTP/1.1\r\nHost: 127.0.0.1:9\r\n{UA}\r\n")
    );
    assert!(!flow.steps[0].template.content_length);
    assert!(flow.steps[1].template.content_length);
}

#[test]
fn a_user_content_length_is_kept() {
    let spec = r#"
version: 1
name: length
load: { connections: 1, requests: 1 }
flows:
  - name: f
    data: { file: users.json }
    steps:
      - name: a
        method: POST
        url: "http://127.0.0.1:9/"
        headers: { Content-Length: "2" }
        body: "{{u}}"
"#;
    let plan = plan_text(spec, &[("users.json", r#"[{"u": "ab"}]"#)]).unwrap();
    let flow = &plan.flows[0];
    assert!(!flow.steps[0].template.content_length);
    assert_eq!(
        render(flow, 0, &[("u", "ab")], None),
        format!("POST / HTTP/1.1\r\nHost: 127.0.0.1:9\r\n{UA}Content-Length: 2\r\n\r\nab")
    );
    // Without the data file: one error, at its field (not one more per variable).
    let err = plan_text(spec, &[]).unwrap_err();
    assert!(
        err.starts_with("flows[0].data.file: cannot read the data file `"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn a_data_value_used_in_a_header_may_not_break_the_line() {
    let spec = r#"
version: 1
name: lines
load: { connections: 1, requests: 1 }
flows:
  - name: f
    data: { file: users.csv }
    steps:
      - name: a
        url: "http://127.0.0.1:9/"
        headers: { X-User: "{{user}}" }
        body: "{{note}}"
"#;
    let csv = "user,note\nada,\"two\nlines\"\n\"bo\nb\",x\n";
    let err = plan_text(spec, &[("users.csv", csv)]).unwrap_err();
    assert_eq!(
        err,
        "flows[0].data.file: row 2 of column `user` holds a line break or NUL, but `{{user}}` \
         is used in a path or header\n"
    );
    // In a body, line breaks are fine.
    let csv = "user,note\nada,\"two\nlines\"\n";
    let plan = plan_text(spec, &[("users.csv", csv)]).unwrap();
    let rendered = render(
        &plan.flows[0],
        0,
        &[("user", "ada"), ("note", "a\nb")],
        None,
    );
    assert!(
        rendered.ends_with("Content-Length: 3\r\n\r\na\nb"),
        "{rendered}"
    );
}

fn lit(s: &str) -> Part {
    Part::Literal(s.as_bytes().into())
}

#[test]
fn renders_slots_cookie_and_length() {
    let template = RequestTemplate {
        head: vec![
            lit("POST /items/"),
            Part::Var(1),
            lit(" HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer "),
            Part::Var(0),
            lit("\r\n"),
        ],
        body: vec![lit("{\"id\":"), Part::Var(1), lit("}")],
        content_length: true,
    };
    let values = [b"tok".as_slice(), b"42".as_slice()];
    let mut out = Vec::new();
    template
        .render(|s| values.get(s).copied(), Some(b"sid=9"), None, &mut out)
        .unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "POST /items/42 HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer tok\r\n\
         Cookie: sid=9\r\nContent-Length: 9\r\n\r\n{\"id\":42}"
    );
}

#[test]
fn a_missing_variable_names_its_slot() {
    let template = RequestTemplate {
        head: vec![lit("GET /"), Part::Var(3), lit(" HTTP/1.1\r\n")],
        body: vec![],
        content_length: false,
    };
    let mut out = Vec::new();
    assert_eq!(template.render(|_| None, None, None, &mut out), Err(3));
}

#[test]
fn a_steps_tags_are_its_flows_then_its_own_then_its_group() {
    let plan = plan_text(
        r#"
version: 1
name: tags
load: { connections: 1, requests: 1 }
flows:
  - name: shop
    tags: { kind: read, team: web }
    steps:
      - name: a
        url: "http://127.0.0.1:9/a"
      - name: b
        url: "http://127.0.0.1:9/b"
        tags: { kind: write, step: b }
        group: checkout
  - name: cart
    tags: { group: flow-level }
    steps:
      - name: c
        url: "http://127.0.0.1:9/c"
        group: step-level
"#,
        &[],
    )
    .unwrap();
    let tags = |i: usize| -> Vec<(&str, &str)> {
        plan.targets[i]
            .tags
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect()
    };
    assert_eq!(tags(0), [("kind", "read"), ("team", "web")]);
    assert_eq!(
        tags(1),
        [
            ("group", "checkout"),
            ("kind", "write"),
            ("step", "b"),
            ("team", "web")
        ]
    );
    // The step's `group` is more specific than its flow's tag.
    assert_eq!(tags(2), [("group", "step-level")]);
    let flow_tags: Vec<_> = plan.flows[0].tags.keys().collect();
    assert_eq!(flow_tags, ["kind", "team"]);
}

#[test]
fn wrong_tags_of_flows_steps_and_targets_name_their_field() {
    let flows = r#"
version: 1
name: tags
load: { connections: 1, requests: 1 }
flows:
  - name: shop
    tags: { "a:b": x }
    steps:
      - name: a
        url: "http://127.0.0.1:9/a"
        tags: { group: x, kind: "w,r" }
        group: checkout
      - name: b
        url: "http://127.0.0.1:9/b"
        group: "{b}"
"#;
    let err = plan_text(flows, &[]).unwrap_err();
    let paths: Vec<&str> = err.lines().map(|l| l.split(": ").next().unwrap()).collect();
    assert_eq!(
        paths,
        [
            "flows[0].tags.a:b",
            "flows[0].steps[0].tags.kind",
            "flows[0].steps[0].tags.group",
            "flows[0].steps[1].group"
        ],
        "{err}"
    );
    assert!(
        err.contains("gives both `group` and the tag `group`"),
        "{err}"
    );
    let targets = r#"
version: 1
name: tags
load: { connections: 1, requests: 1 }
targets:
  - name: home
    url: "http://127.0.0.1:9/"
    tags: { kind: "a:b" }
"#;
    let err = plan_text(targets, &[]).unwrap_err();
    assert!(
        err.starts_with("targets[0].tags.kind: the tag value `a:b` holds `:`"),
        "{err}"
    );
}

#[test]
fn a_plain_targets_rules_are_planned_as_a_steps_are() {
    let rules = r#"
    tags: { kind: write }
    regression:
      latency: [{ rule: "p(95) +5%", severity: warn }]
      requests: ["rate -20%"]"#;
    let targets = format!(
        r#"
version: 1
name: rules
load: {{ connections: 1, requests: 1 }}
regression: {{ latency: [], errors: [], requests: [] }}
targets:
  - name: home
    url: "http://127.0.0.1:9/"{rules}
  - name: other
    url: "http://127.0.0.1:9/"
"#
    );
    let flows = format!(
        r#"
version: 1
name: rules
load: {{ connections: 1, requests: 1 }}
regression: {{ latency: [], errors: [], requests: [] }}
flows:
  - name: shop
    steps:
      - name: home
        url: "http://127.0.0.1:9/"{}
"#,
        rules.replace("\n    ", "\n        ")
    );
    let of = |text: &str| {
        let plan = plan_text(text, &[]).unwrap_or_else(|e| panic!("{e}"));
        plan.regression
            .iter()
            .map(|r| {
                let scope = r.scope.clone();
                (
                    scope,
                    r.metric,
                    r.expression.clone(),
                    r.severity,
                    r.tags.is_empty(),
                )
            })
            .collect::<Vec<_>>()
    };
    let (target, step) = (of(&targets), of(&flows));
    let plan = plan_text(&targets, &[]).unwrap();
    let kinds: Vec<Option<&String>> = plan.targets.iter().map(|t| t.tags.get("kind")).collect();
    assert_eq!(kinds, [Some(&"write".to_string()), None]);
    use crate::plan::threshold::Severity::{Fail, Warn};
    let home = |name: &str| RuleScope::Target(name.into());
    assert_eq!(
        target,
        [
            (
                home("home"),
                Metric::Latency,
                "p(95) +5%".into(),
                Warn,
                true
            ),
            (
                home("home"),
                Metric::Responses,
                "rate -20%".into(),
                Fail,
                true
            ),
        ]
    );
    let renamed: Vec<_> = step
        .into_iter()
        .map(|(scope, m, e, s, t)| {
            assert_eq!(scope, home("shop/home"));
            (home("home"), m, e, s, t)
        })
        .collect();
    assert_eq!(renamed, target);
    // A tagged list in a target's block is refused: its requests all carry the same tags.
    let tagged = targets.replace(
        "requests: [\"rate -20%\"]",
        "requests{kind:write}: [\"rate -20%\"]",
    );
    let err = plan_text(&tagged, &[]).unwrap_err();
    assert!(
        err.starts_with("targets[0].regression.requests{kind:write}: a target's requests all"),
        "{err}"
    );
}
