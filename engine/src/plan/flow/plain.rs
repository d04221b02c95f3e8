//! Targets whose path, headers or body hold `{{name}}`: a column of the target's `data` file
//! (one row per request) or a generated value. Their request is compiled into a
//! [`TargetTemplate`] as a flow step's is; a target without `{{` (and without `data`) keeps
//! its pre-built bytes.

use std::sync::Arc;

use super::build::{check_head_values, data_plan};
use super::data::read_table;
use super::request::{
    RequestText, build_marked, check_names, finish_target, generated, mark_request,
};
use crate::plan::target::{self, Part, Shared, TargetRequest, TargetTemplate};
use crate::plan::transport::Transports;
use crate::plan::{BuildContext, Errors, TargetPlan};

/// Resolves one target of the spec (`request.target`, at `request.path`), rendered per
/// request when it holds `{{name}}` or has `data`; every problem goes to `errors`.
pub(in crate::plan) fn build_target(
    request: &TargetRequest<'_>,
    ctx: &BuildContext<'_>,
    transports: &mut Transports,
    errors: &mut Errors,
) -> Option<TargetPlan> {
    let spec_target = request.target;
    let path = request.path;
    let message = target::message_body(spec_target.grpc.as_ref(), spec_target.ws.as_ref());
    let text = RequestText {
        url: spec_target.url.as_deref(),
        path: spec_target.path.as_deref(),
        headers: &spec_target.headers,
        body: spec_target.body.as_deref().or(message.as_deref()),
        body_file: spec_target.body_file.as_deref(),
    };
    if !templated(&text) && spec_target.data.is_none() && text.body_file.is_none() {
        return target::build_target(request, ctx, transports, errors);
    }
    crate::plan::tags::check(&spec_target.tags, &format!("{path}.tags"), errors);
    let shared = Shared {
        spec: request.spec,
        base_url: request.base_url,
        defaults: request.defaults,
        ctx,
    };
    let marked = mark_request(&shared, &text, path, errors)?;
    if marked.markers.names.is_empty() && spec_target.data.is_none() {
        // A body file without `{{`: sent as it is.
        return target::build_target(request, ctx, transports, errors);
    }
    let table = spec_target.data.as_ref().and_then(|data| {
        let field = format!("{path}.data.file");
        if !errors.printable(&field, &data.file) {
            return None;
        }
        read_table(ctx.spec_dir, &data.file)
            .map_err(|e| errors.push(&field, e))
            .ok()
    });
    let columns = table.as_ref().map_or(&[][..], |t| &t.columns[..]);
    let data_failed = spec_target.data.is_some() && table.is_none();
    let no_data = if spec_target.data.is_none() {
        " (the target has no `data`)"
    } else {
        ""
    };
    let undefined = |name: &str| {
        (!columns.iter().any(|c| c == name)).then(|| {
            format!(
                "`{{{{{name}}}}}` is not defined: it is neither a column of the target's data \
                 file{no_data} nor a generated value (`uuid`, `random_int(A,B)`, \
                 `timestamp_ms`, `vu`, `iteration`)"
            )
        })
    };
    let defined = check_names(&marked.markers.names, undefined, data_failed, errors);
    let mut marked_target = spec_target.clone();
    marked_target.url.clone_from(&marked.url);
    marked_target.path.clone_from(&marked.path);
    marked_target.headers.clone_from(&marked.headers);
    let inline_body = spec_target.body.is_some() || message.is_some();
    let built = build_marked(
        &shared,
        (&marked_target, &marked),
        inline_body,
        path,
        transports,
        errors,
    );
    let (built, body) = built?;
    if !defined {
        return None;
    }
    let part = |i: usize| {
        let name = &marked.markers.names[i].0;
        columns
            .iter()
            .position(|c| c == name)
            .map_or_else(|| generated(name), Part::Var)
    };
    let (mut plan, template, _) =
        finish_target(&marked.markers, built, &body, &part, path, errors)?;
    let data = match (&spec_target.data, table) {
        (Some(data), Some(table)) => {
            let head_slots: Vec<usize> = template
                .head
                .iter()
                .filter_map(|p| match p {
                    Part::Var(slot) => Some(*slot),
                    Part::Literal(_) | Part::Gen(_) => None,
                })
                .collect();
            check_head_values(&table, &head_slots, &format!("{path}.data.file"), errors);
            Some(data_plan(data, table))
        }
        _ => None,
    };
    plan.template = Some(Arc::new(TargetTemplate {
        request: template,
        data,
    }));
    Some(plan)
}

/// Whether the URL, path, a header value or the inline body of `text` holds `{{`.
fn templated(text: &RequestText<'_>) -> bool {
    [text.url, text.path, text.body]
        .into_iter()
        .flatten()
        .chain(text.headers.values().map(String::as_str))
        .any(|t| t.contains("{{"))
}

#[cfg(test)]
mod tests {
    use crate::plan::flow::{DataOrder, Part};
    use crate::plan::target::Gen;
    use crate::plan::{BuildContext, Plan};
    use crate::spec::SourceSpec;

    /// Plans `targets` (YAML, indented by 2) with `files` beside the spec: the plan, or its
    /// errors as `path: message` lines.
    fn plan(targets: &str, files: &[(&str, &str)]) -> Result<Plan, Vec<String>> {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let yaml = format!(
            "version: 1\nname: t\ndefaults:\n  base_url: http://127.0.0.1:9\n\
             load: {{connections: 1, requests: 1}}\ntargets:\n{targets}"
        );
        let source = SourceSpec::parse(dir.path().join("t.yaml"), yaml).unwrap();
        let spec = serde_json::from_value(source.value.clone()).unwrap();
        let ctx = BuildContext {
            source: source.text.as_bytes(),
            spec_dir: dir.path(),
            var: &|_| None,
        };
        crate::plan::build(&spec, &ctx).map_err(|errors| {
            errors
                .iter()
                .map(|e| format!("{}: {}", e.path, e.message))
                .collect()
        })
    }

    #[test]
    fn a_target_without_braces_keeps_its_pre_built_request() {
        let plan = plan("  - {name: a, path: /a, body: '{ \"x\": 1 }'}\n", &[]).unwrap();
        assert!(plan.targets[0].template.is_none());
        assert!(plan.targets[0].request.ends_with(b"{ \"x\": 1 }"));
    }

    #[test]
    fn columns_and_generated_values_become_slots_and_generators() {
        let targets = "  - name: a\n    method: POST\n    path: '/u/{{user}}?n={{ random_int(1, 9) }}'\n    \
                       headers: {X-Id: '{{uuid}}'}\n    body: '{{vu}}-{{iteration}}-{{timestamp_ms}}-{{id}}'\n    \
                       data: {file: users.csv, order: random}\n    weight: 3\n";
        let plan = plan(targets, &[("users.csv", "id,user\n1,ann\n2,bob\n")]).unwrap();
        let t = &plan.targets[0];
        assert_eq!(t.weight, 3, "a plain target keeps its weight");
        assert_eq!(
            t.display_url,
            "http://127.0.0.1:9/u/{{user}}?n={{random_int(1,9)}}"
        );
        let template = t.template.as_deref().unwrap();
        let data = template.data.as_ref().unwrap();
        assert_eq!(data.order, DataOrder::Random);
        assert_eq!(data.rows.len(), 2);
        let parts: Vec<&Part> = template
            .request
            .head
            .iter()
            .chain(&template.request.body)
            .filter(|p| !matches!(p, Part::Literal(_)))
            .collect();
        assert_eq!(
            parts,
            [
                &Part::Var(1),
                &Part::Gen(Gen::RandomInt(1, 9)),
                &Part::Gen(Gen::Uuid),
                &Part::Gen(Gen::Vu),
                &Part::Gen(Gen::Iteration),
                &Part::Gen(Gen::TimestampMs),
                &Part::Var(0),
            ]
        );
        let mut out = Vec::new();
        let row = ["7", "cy"];
        let mut rng = fastrand::Rng::with_seed(3);
        let mut gens = crate::plan::flow::Generators {
            rng: &mut rng,
            vu: 2,
            iteration: 5,
        };
        template
            .request
            .render(|c| Some(row[c].as_bytes()), None, Some(&mut gens), &mut out)
            .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("POST /u/cy?n="), "{text}");
        let body = text.split_once("\r\n\r\n").unwrap().1;
        assert!(body.starts_with("2-5-") && body.ends_with("-7"), "{text}");
        assert!(
            text.contains(&format!("Content-Length: {}\r\n", body.len())),
            "{text}"
        );
    }

    #[test]
    fn wrong_templates_are_refused_with_their_field_paths() {
        let cases = [
            (
                "  - {name: a, path: '/{{nope}}'}\n",
                "targets[0].path: `{{nope}}` is not defined: it is neither a column of the \
                 target's data file (the target has no `data`)",
            ),
            (
                "  - {name: a, path: /a, headers: {X-N: '{{random_int(9,1)}}'}}\n",
                "targets[0].headers.X-N: `{{random_int(9,1)}}`: the first bound is above the second",
            ),
            (
                "  - {name: a, path: /a, body: '{{ x y }}'}\n",
                "targets[0].body: `{{ x y }}` does not start a variable",
            ),
            (
                "  - {name: a, url: 'http://{{host}}/a'}\n",
                "targets[0].url: the scheme, host and port may not hold `{{var}}`",
            ),
            (
                "  - {name: a, path: '/{{user}}', data: {file: bad.csv}}\n",
                "targets[0].data.file: row 1 of column `user` holds a line break",
            ),
            (
                "  - {name: a, path: '/a', data: {file: missing.csv}}\n",
                "targets[0].data.file: cannot read the data file",
            ),
        ];
        for (targets, want) in cases {
            let errors = plan(targets, &[("bad.csv", "user\n\"a\nb\"\n")]).unwrap_err();
            assert!(
                errors.iter().any(|e| e.starts_with(want)),
                "{targets}: {errors:?}"
            );
        }
    }
}
