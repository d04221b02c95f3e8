//! A request with `{{name}}`s (a flow's step, a target), built: the names replaced by markers
//! (`template.rs`), the target built from the marked text as any target is, then split into
//! its [`RequestTemplate`](super::RequestTemplate) at the markers.

use std::collections::BTreeMap;

use super::Part;
use super::template::{Markers, compile};
use crate::plan::request::{authority, h2_request, request_bytes};
use crate::plan::target::Gen;
use crate::plan::target::{BuiltTarget, Shared, TargetRequest, build_with_body};
use crate::plan::transport::Transports;
use crate::plan::{Errors, TargetPlan};
use crate::spec;

/// The target of `marked` (`target`: its spec, with the marked URL, path and headers; at
/// `path`), its inline body (`inline_body`) interpolated; `None` when it is wrong (the errors
/// quote `{{name}}`, not its markers). Returns it with its body.
pub(super) fn build_marked(
    shared: &Shared<'_>,
    (target, marked): (&spec::Target, &Marked),
    inline_body: bool,
    path: &str,
    transports: &mut Transports,
    errors: &mut Errors,
) -> Option<(BuiltTarget, Vec<u8>)> {
    let body = if inline_body {
        errors
            .interpolate(
                &format!("{path}.body"),
                std::str::from_utf8(&marked.body).expect("an inline body is text"),
                shared.ctx,
            )
            .map(String::into_bytes)
    } else {
        Some(marked.body.clone())
    };
    let request = TargetRequest {
        spec: shared.spec,
        target,
        path,
        base_url: shared.base_url,
        defaults: shared.defaults,
    };
    let first_error = errors.0.len();
    let built = build_with_body(&request, body.clone(), shared.ctx, transports, errors);
    // Messages quote the request as written, `{{name}}`, not its markers.
    for e in &mut errors.0[first_error..] {
        e.message = marked.markers.unmark(&e.message);
    }
    Some((built?, body?))
}

/// The parts of a request as a step or target writes them.
pub(super) struct RequestText<'a> {
    pub(super) url: Option<&'a str>,
    pub(super) path: Option<&'a str>,
    pub(super) headers: &'a BTreeMap<String, String>,
    pub(super) body: Option<&'a str>,
    pub(super) body_file: Option<&'a str>,
}

/// A request, marked: `{{name}}`s replaced by markers.
pub(super) struct Marked {
    pub(super) markers: Markers,
    pub(super) url: Option<String>,
    pub(super) path: Option<String>,
    pub(super) headers: BTreeMap<String, String>,
    pub(super) body: Vec<u8>,
}

/// The request's (`step`'s, at `path`) URL, path, header values and body with `{{name}}`s
/// replaced by markers; `None` (and errors) when one is wrong.
pub(super) fn mark_request(
    shared: &Shared<'_>,
    step: &RequestText<'_>,
    path: &str,
    errors: &mut Errors,
) -> Option<Marked> {
    let spec = shared.spec;
    let body = match (step.body, step.body_file) {
        (Some(_), Some(_)) => {
            errors.push(path, "give either `body` or `body_file`, not both");
            return None;
        }
        (Some(body), None) => body.as_bytes().to_vec(),
        (None, Some(file)) => {
            let full = shared.ctx.spec_dir.join(file);
            match crate::files::bounded_read(&full, crate::files::MAX_BODY_BYTES, "the body file") {
                Ok(bytes) => bytes,
                Err(e) => {
                    errors.push(format!("{path}.body_file"), e.to_string());
                    return None;
                }
            }
        }
        (None, None) => Vec::new(),
    };
    if let Some(url) = step.url
        && authority_of(url).contains("{{")
    {
        errors.push(
            format!("{path}.url"),
            "the scheme, host and port may not hold `{{var}}`: put variables in the path, \
             query, headers or body",
        );
        return None;
    }
    let texts = [step.url, step.path]
        .into_iter()
        .chain([spec.defaults.base_url.as_deref()])
        .flatten()
        .map(str::as_bytes)
        .chain(step.headers.values().map(|v| v.as_bytes()))
        .chain(spec.defaults.headers.values().map(|v| v.as_bytes()))
        .chain([body.as_slice()]);
    let mut markers = Markers::new(texts);
    let before = errors.0.len();
    let mut mark = |field: String, text: &str, errors: &mut Errors| {
        markers
            .mark_str(&field, text)
            .map_err(|e| errors.push(&field, e))
            .ok()
    };
    let url = step
        .url
        .and_then(|u| mark(format!("{path}.url"), u, errors));
    let url_path = step
        .path
        .and_then(|p| mark(format!("{path}.path"), p, errors));
    let mut headers = BTreeMap::new();
    for (name, value) in step.headers {
        if let Some(value) = mark(format!("{path}.headers.{name}"), value, errors) {
            headers.insert(name.clone(), value);
        }
    }
    let body_field = if step.body.is_some() {
        "body"
    } else {
        "body_file"
    };
    let field = format!("{path}.{body_field}");
    let body = markers
        .mark(&field, &body)
        .map_err(|e| errors.push(&field, e))
        .ok();
    if errors.0.len() != before {
        return None;
    }
    Some(Marked {
        markers,
        url,
        path: url_path,
        headers,
        body: body?,
    })
}

/// The request's target with every variable empty (its request, body, headers, HTTP/2
/// request), named as written (`{{name}}`); the template (`part`: the part of each marker);
/// the URL for the cookie jar.
pub(super) fn finish_target(
    markers: &Markers,
    built: BuiltTarget,
    body: &[u8],
    part: &dyn Fn(usize) -> Part,
    path: &str,
    errors: &mut Errors,
) -> Option<(TargetPlan, super::RequestTemplate, url::Url)> {
    let BuiltTarget {
        mut plan,
        path_and_query,
        https,
    } = built;
    let own_length = plan
        .headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("content-length"));
    let bytes = request_bytes(
        &plan.method,
        &path_and_query,
        &plan.endpoint,
        https,
        &plan.headers,
        body,
    );
    let template = compile(markers, &bytes, body.len(), own_length, part);
    let mut request = Vec::new();
    template
        .render(|_| Some(b""), None, None, &mut request)
        .expect("every variable has a value");
    let empty_body: Vec<u8> = template
        .body
        .iter()
        .flat_map(|p| match p {
            Part::Literal(bytes) => bytes.iter().copied(),
            Part::Var(_) | Part::Gen(_) => [].iter().copied(),
        })
        .collect();
    for (_, value) in &mut plan.headers {
        *value = markers.empty(value);
    }
    let empty_path = markers.empty(&path_and_query);
    plan.h2_request = match h2_request(
        &plan.method,
        &empty_path,
        &plan.endpoint,
        https,
        &plan.headers,
        &empty_body,
    ) {
        Ok(request) => request,
        Err(e) => {
            errors.push(path, format!("cannot build the HTTP/2 request: {e}"));
            return None;
        }
    };
    plan.request = request.into();
    plan.body = empty_body.into();
    plan.display_url = markers.unmark(&plan.display_url);
    let prefix = &path_and_query[..markers
        .first(path_and_query.as_bytes())
        .unwrap_or(path_and_query.len())];
    let scheme = if https { "https" } else { "http" };
    let text = format!("{scheme}://{}{prefix}", authority(&plan.endpoint, https));
    match url::Url::parse(&text) {
        Ok(url) => Some((plan, template, url)),
        Err(e) => {
            errors.push(path, format!("cannot make the step's URL `{text}`: {e}"));
            None
        }
    }
}

/// The scheme and authority of a URL as written: up to the first `/`, `?` or `#` after `//`.
fn authority_of(url: &str) -> &str {
    let start = url.find("//").map_or(0, |i| i + 2);
    let end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    &url[..end]
}

/// Whether every `{{name}}` of a request (`names`: each with its field) is defined (for
/// `undefined`, which otherwise says why not) or a generated value (`uuid`, ...); records each
/// problem, but a missing name's when `data_failed` (the data file's error is the one to
/// report).
pub(super) fn check_names(
    names: &[(String, String)],
    undefined: impl Fn(&str) -> Option<String>,
    data_failed: bool,
    errors: &mut Errors,
) -> bool {
    let mut defined = true;
    for (name, field) in names {
        let Some(message) = undefined(name) else {
            continue;
        };
        match Gen::parse(name) {
            Some(Ok(_)) => continue,
            Some(Err(e)) => errors.push(field, e),
            None if data_failed => {}
            None => errors.push(field, message),
        }
        defined = false;
    }
    defined
}

/// The part of a generated value `name`, which [`check_names`] accepted.
pub(super) fn generated(name: &str) -> Part {
    Part::Gen(
        Gen::parse(name)
            .and_then(Result::ok)
            .expect("checked by check_names"),
    )
}
