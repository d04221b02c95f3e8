//! Targets whose path, headers or body hold `{{name}}`: a column of the target's `data` file
//! (one row per request) or a generated value. Their request is compiled into a
//! [`TargetTemplate`] as a flow step's is; a target without `{{` (and without `data`) keeps
//! its pre-built bytes.

use std::sync::Arc;

use super::build::{check_head_values, data_plan};
use super::data::read_table;
use super::request::{RequestText, build_marked, finish_target, mark_request};
use crate::plan::target::{self, Gen, Part, Shared, TargetRequest, TargetTemplate};
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
    let text = RequestText {
        url: spec_target.url.as_deref(),
        path: spec_target.path.as_deref(),
        headers: &spec_target.headers,
        body: spec_target.body.as_deref(),
        body_file: spec_target.body_file.as_deref(),
    };
    let written = [text.url, text.path, text.body]
        .into_iter()
        .flatten()
        .chain(text.headers.values().map(String::as_str))
        .any(|t| t.contains("{{"));
    if !written && spec_target.data.is_none() && text.body_file.is_none() {
        return target::build_target(request, ctx, transports, errors);
    }
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
    let mut defined = true;
    for (name, field) in &marked.markers.names {
        if columns.contains(name) {
            continue;
        }
        match Gen::parse(name) {
            Some(Ok(_)) => continue,
            Some(Err(e)) => errors.push(field, e),
            // Without the data file's columns, that error is the one to report.
            None if spec_target.data.is_some() && table.is_none() => {}
            None => errors.push(
                field,
                format!(
                    "`{{{{{name}}}}}` is not defined: it is neither a column of the target's data \
                     file{} nor a generated value (`uuid`, `random_int(A,B)`, `timestamp_ms`, \
                     `vu`, `iteration`)",
                    if spec_target.data.is_none() {
                        " (the target has no `data`)"
                    } else {
                        ""
                    }
                ),
            ),
        }
        defined = false;
    }
    let mut marked_target = spec_target.clone();
    marked_target.url.clone_from(&marked.url);
    marked_target.path.clone_from(&marked.path);
    marked_target.headers.clone_from(&marked.headers);
    let inline_body = spec_target.body.is_some();
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
        match columns.iter().position(|c| c == name) {
            Some(c) => Part::Var(c),
            None => Part::Gen(
                Gen::parse(name)
                    .and_then(Result::ok)
                    .expect("checked above"),
            ),
        }
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
