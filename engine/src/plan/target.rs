//! Targets: the HTTP endpoints under test, each resolved into one request ready to send, the
//! statuses it expects and the checks on its responses.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use super::endpoint::{Endpoint, HttpUrl, parse_http_url};
use super::request::{h2_request, request_bytes};
use super::transport::{TransportOf, TransportPlan, Transports};
use super::{BuildContext, Errors};
use crate::spec::{self, Spec, StatusMatch};

mod check;
mod template;

use check::build_checks;
pub(crate) use check::{CheckKind, CheckPlan, JsonTest, TextTest};
pub(crate) use template::{
    DataOrder, DataPlan, Gen, Generators, Part, RequestTemplate, TargetTemplate,
};

/// One request, ready to send.
#[derive(Debug, Clone)]
pub struct TargetPlan {
    /// The target's name, unique in the spec.
    pub name: String,
    /// The request method, e.g. `GET`.
    pub(crate) method: String,
    /// The URL as written in the spec, before `${VAR}` interpolation: safe to print.
    pub(crate) display_url: String,
    /// Where its connections go.
    pub(crate) endpoint: Endpoint,
    /// The endpoint's host or port comes from a `${VAR}` (the URL as written does not name
    /// them): it may be secret, so no message may show it, nor an address it resolves to.
    pub(crate) endpoint_from_env: bool,
    /// The complete HTTP/1.1 request: request line, headers, body.
    pub request: Arc<[u8]>,
    /// The same request for HTTP/2: pseudo-headers from the URL, the spec's headers but the
    /// connection-specific ones (`Connection`, `Keep-Alive`, `Transfer-Encoding`, `Upgrade`,
    /// `Proxy-Connection`), `Host` as `:authority`. Its body is [`TargetPlan::body`].
    pub(crate) h2_request: http::Request<()>,
    /// The request body (shared, not copied, per HTTP/2 request).
    pub(crate) body: Bytes,
    /// How connections to the endpoint are made: protocol and TLS. Targets with the same
    /// endpoint and the same transport (`Arc::ptr_eq`) share connections.
    pub(crate) transport: Arc<TransportPlan>,
    /// A `HEAD` request: responses carry no body whatever their headers say.
    pub(crate) is_head: bool,
    /// The statuses that count as a success (default: every 2xx).
    pub(crate) expect_status: StatusSet,
    /// Relative share of requests, ≥ 1.
    pub weight: u32,
    /// From connect to the last byte of the response.
    pub(crate) timeout: Duration,
    /// Longest time to open a connection, within `timeout` (`defaults.connect_timeout`);
    /// `None`: `timeout` alone bounds it.
    pub(crate) connect_timeout: Option<Duration>,
    /// Connections carry more than one request (`defaults.keep_alive`, default true); false:
    /// closed after each response (HTTP/1.1 asks for it with `Connection: close`).
    pub(crate) keep_alive: bool,
    /// Redirects followed per request, at most (`defaults.redirects`); 0: none.
    pub(crate) redirects: u32,
    /// The request headers as the spec gives them, with those loadgate adds for the options
    /// (not `Host`, `User-Agent`, `Content-Length`): what a redirected request is built from.
    pub(crate) headers: Vec<(String, String)>,
    /// Checks on each response.
    pub(crate) checks: Vec<CheckPlan>,
    /// Responses whose latency is at least this many microseconds are counted as slow
    /// (`defaults.slow`); `None`: not counted.
    pub(crate) slow_us: Option<u64>,
    /// Its tags, merged once: its scenario's, its flow's, its step's (`group` included),
    /// its own, the more specific winning (`plan/tags.rs`).
    pub tags: super::tags::Tags,
    /// A target whose path, headers or body hold `{{var}}` (a column of its data file, or a
    /// generated value): its request rendered per request in place of `request`, whose
    /// variables are empty. `None` (and a flow step's): `request` as it is.
    pub(crate) template: Option<Arc<TargetTemplate>>,
    /// `protocol: grpc`: the call. Its request (`request`, `h2_request`) is the call's
    /// `POST /package.Service/Method`; `request`'s body is the message's JSON text (what a
    /// template renders), [`TargetPlan::body`] the encoded message (prefix and protobuf),
    /// empty when the message holds `{{var}}` (encoded per request then).
    pub(crate) grpc: Option<Arc<super::GrpcPlan>>,
    /// `ws://`, `wss://`, `protocol: ws`: the exchange. Its request's head is the upgrade
    /// request (`GET`, path, headers); its body the message each request sends.
    pub(crate) ws: Option<Arc<super::WsPlan>>,
}

impl TargetPlan {
    /// Where its connections go, safe to print: `127.0.0.1:8080` when the spec writes the host
    /// and port, else the URL as written (`${TARGET_URL}/users`).
    pub fn display_endpoint(&self) -> String {
        if self.endpoint_from_env {
            self.display_url.clone()
        } else {
            self.endpoint.to_string()
        }
    }

    /// Whether responses must be kept for the checks or for following redirects (their
    /// head at least).
    pub(crate) fn captures(&self) -> bool {
        !self.checks.is_empty() || self.redirects > 0
    }

    /// Whether the checks need the body too (up to 1 MiB of it).
    pub(crate) fn captures_body(&self) -> bool {
        self.checks.iter().any(CheckPlan::reads_body)
    }
}

impl TargetPlan {
    /// Whether requests of `self` and `other` may go over the same connections: same
    /// endpoint, same protocol and TLS configuration.
    pub(crate) fn shares_connections_with(&self, other: &TargetPlan) -> bool {
        self.endpoint == other.endpoint && Arc::ptr_eq(&self.transport, &other.transport)
    }
}

/// The set of accepted status codes (100–599), as a bitset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StatusSet([u64; 10]);

impl StatusSet {
    /// Every 2xx status: the default expectation.
    pub(crate) fn success() -> StatusSet {
        let mut set = StatusSet([0; 10]);
        for code in 200..300 {
            set.insert(code);
        }
        set
    }

    /// Adds every status of `other`.
    fn add(&mut self, other: &StatusSet) {
        for (word, more) in self.0.iter_mut().zip(other.0) {
            *word |= more;
        }
    }

    fn insert(&mut self, code: u16) {
        if code < 640 {
            self.0[usize::from(code / 64)] |= 1 << (code % 64);
        }
    }

    /// Whether `code` is accepted.
    #[inline]
    pub(crate) fn contains(&self, code: u16) -> bool {
        code < 640 && self.0[usize::from(code / 64)] & (1 << (code % 64)) != 0
    }
}

/// What `defaults` gives every target besides its headers and TLS, resolved once.
pub(super) struct TargetDefaults {
    /// `defaults.timeout`, else 10 s.
    pub(super) timeout: Duration,
    /// `defaults.connect_timeout`, if given.
    pub(super) connect_timeout: Option<Duration>,
    /// `defaults.keep_alive`, else true.
    pub(super) keep_alive: bool,
    /// `defaults.compression`, else false.
    pub(super) compression: bool,
    /// `defaults.redirects`, else 0.
    pub(super) redirects: u32,
    /// `defaults.slow` in µs, if given.
    pub(super) slow_us: Option<u64>,
}

/// What building a target (of `targets`, or a flow's step) needs besides the target.
pub(in crate::plan) struct Shared<'a> {
    /// The whole spec.
    pub(in crate::plan) spec: &'a Spec,
    /// `defaults.base_url` interpolated, if given and right.
    pub(in crate::plan) base_url: Option<&'a str>,
    /// The rest of `defaults`.
    pub(in crate::plan) defaults: &'a TargetDefaults,
    /// Files and `${VAR}`s.
    pub(in crate::plan) ctx: &'a BuildContext<'a>,
}

/// Resolves one target of the spec, `request.target` (at `request.path`, e.g. `targets[1]`);
/// every problem goes to `errors`. `request.base_url` is `defaults.base_url` interpolated
/// (`None` when it is absent or wrong: that is reported once, at `defaults.base_url`).
pub(super) fn build_target(
    request: &TargetRequest<'_>,
    ctx: &BuildContext<'_>,
    transports: &mut Transports,
    errors: &mut Errors,
) -> Option<TargetPlan> {
    super::tags::check(
        &request.target.tags,
        &format!("{}.tags", request.path),
        errors,
    );
    let body = build_body(request.target, request.path, ctx, errors);
    build_with_body(request, body, ctx, transports, errors).map(|built| built.plan)
}

/// What a target is built from besides its body.
pub(super) struct TargetRequest<'a> {
    /// The whole spec, for `defaults`.
    pub(super) spec: &'a Spec,
    /// The target (a flow step is turned into one).
    pub(super) target: &'a spec::Target,
    /// Its field path, e.g. `targets[1]`.
    pub(super) path: &'a str,
    /// `defaults.base_url` interpolated, if given and right.
    pub(super) base_url: Option<&'a str>,
    /// The rest of `defaults`.
    pub(super) defaults: &'a TargetDefaults,
}

/// A built target with the parts of its request line that a flow step's template needs.
pub(super) struct BuiltTarget {
    /// The target.
    pub(super) plan: TargetPlan,
    /// `/path?query`, as in the request line.
    pub(super) path_and_query: String,
    /// An `https://` URL.
    pub(super) https: bool,
}

/// Builds the target of `request` with `body` (`None`: it was wrong, the error is recorded).
pub(super) fn build_with_body(
    request: &TargetRequest<'_>,
    body: Option<Vec<u8>>,
    ctx: &BuildContext<'_>,
    transports: &mut Transports,
    errors: &mut Errors,
) -> Option<BuiltTarget> {
    let TargetRequest {
        spec,
        target,
        path,
        base_url,
        defaults,
    } = *request;
    errors.printable(&format!("{path}.name"), &target.name);
    let (raw_url, url) = resolve_url(spec, target, path, base_url, ctx, errors)?;
    let method = target.method.clone().unwrap_or_else(|| "GET".to_string());
    let headers = build_headers(spec, target, path, ctx, errors);
    let expect_status = build_expect_status(target, path, errors);
    let weight = target.weight.unwrap_or(1);
    if weight == 0 {
        errors.push(format!("{path}.weight"), "must be at least 1");
    }

    let checks = build_checks(&target.checks, path, errors);
    let grpc = match &target.grpc {
        Some(g) => Some(super::grpc::build(g, path, ctx, errors)?),
        None => None,
    };
    let ws = match &target.ws {
        Some(w) => Some(super::ws::build(w, path, ctx, errors)?),
        None => None,
    };
    let url = url?;
    let of = TransportOf {
        spec,
        target,
        path,
        url: &url,
    };
    let transport = transports.get(&of, ctx, errors)?;
    let HttpUrl {
        endpoint,
        endpoint_from_env,
        path_and_query,
        https,
        websocket: _,
    } = url;
    let body = body?;
    let mut headers = headers;
    let (method, path_and_query) = match &grpc {
        Some(g) => {
            grpc_headers(g, &mut headers);
            ("POST".to_string(), g.path.clone())
        }
        None => (method, path_and_query),
    };
    for (wanted, name, value) in [
        (!defaults.keep_alive, "Connection", "close"),
        (defaults.compression, "Accept-Encoding", "gzip"),
    ] {
        if wanted && !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name)) {
            headers.push((name.to_string(), value.to_string()));
        }
    }
    let request = request_bytes(&method, &path_and_query, &endpoint, https, &headers, &body);
    let h2_request = match h2_request(&method, &path_and_query, &endpoint, https, &headers, &body) {
        // A gRPC call's body is its encoded message, not `body` (its JSON text): no
        // `content-length`, as gRPC clients send it.
        Ok(mut request) if grpc.is_some() => {
            request.headers_mut().remove(http::header::CONTENT_LENGTH);
            request
        }
        Ok(request) => request,
        Err(e) => {
            errors.push(path, format!("cannot build the HTTP/2 request: {e}"));
            return None;
        }
    };
    let encoded = match &grpc {
        Some(g) => grpc_body(g, target, &body, path, errors)?,
        None => Bytes::from(body),
    };
    let plan = TargetPlan {
        name: target.name.clone(),
        is_head: method == "HEAD",
        method,
        display_url: raw_url,
        endpoint,
        endpoint_from_env,
        request: request.into(),
        h2_request,
        body: encoded,
        transport,
        expect_status,
        weight,
        timeout: defaults.timeout,
        connect_timeout: defaults.connect_timeout,
        keep_alive: defaults.keep_alive,
        redirects: defaults.redirects,
        headers,
        checks: checks?,
        slow_us: defaults.slow_us,
        tags: target.tags.clone(),
        template: None,
        grpc,
        ws,
    };
    Some(BuiltTarget {
        plan,
        path_and_query,
        https,
    })
}

/// The target's URL (`url`, or `path` joined to `defaults.base_url`): as written, for reports,
/// and split by [`parse_http_url`] after interpolation (`None` if it is wrong). `None` when
/// neither or both of `url` and `path` are given.
fn resolve_url(
    spec: &Spec,
    target: &spec::Target,
    path: &str,
    base_url: Option<&str>,
    ctx: &BuildContext<'_>,
    errors: &mut Errors,
) -> Option<(String, Option<HttpUrl>)> {
    let (raw_url, url_path, url) = match (&target.url, &target.path, &spec.defaults.base_url) {
        (Some(url), None, _) => {
            let field = format!("{path}.url");
            if !errors.printable(&field, url) {
                return None;
            }
            let interpolated = errors.interpolate(&field, url, ctx);
            (url.clone(), field, interpolated)
        }
        (None, Some(p), Some(raw_base)) => {
            let field = format!("{path}.path");
            if !errors.printable(&field, p) {
                return None;
            }
            let joined =
                |base: &str, p: &str| format!("{}{}", base.trim_end_matches('/'), ensure_slash(p));
            let interpolated = errors.interpolate(&field, p, ctx);
            let url = match (base_url, interpolated) {
                (Some(base), Some(p)) => Some(joined(base, &p)),
                _ => None,
            };
            (joined(raw_base, p), field, url)
        }
        (None, Some(_), None) => {
            errors.push(
                format!("{path}.path"),
                "`path` needs `defaults.base_url`; or give an absolute `url`",
            );
            return None;
        }
        (Some(_), Some(_), _) => {
            errors.push(path, "give either `url` or `path`, not both");
            return None;
        }
        (None, None, _) => {
            errors.push(path, "missing `url` (or `path` with `defaults.base_url`)");
            return None;
        }
    };
    let url = url.and_then(|u| parse_http_url(&url_path, &u, &raw_url, errors));
    Some((raw_url, url))
}

/// The request headers, `defaults.headers` then the target's (which replace a default of the
/// same name, whatever its case), interpolated, in order of their lower-case names.
fn build_headers(
    spec: &Spec,
    target: &spec::Target,
    path: &str,
    ctx: &BuildContext<'_>,
    errors: &mut Errors,
) -> Vec<(String, String)> {
    let mut headers: BTreeMap<String, (String, String)> = BTreeMap::new();
    for (source, map) in [
        ("defaults.headers", &spec.defaults.headers),
        (&*format!("{path}.headers"), &target.headers),
    ] {
        for (name, value) in map {
            let field = format!("{source}.{name}");
            if name.is_empty() || !name.bytes().all(is_token_byte) {
                errors.push(&field, format!("`{name}` is not a valid header name"));
                continue;
            }
            let Some(value) = errors.interpolate(&field, value, ctx) else {
                continue;
            };
            if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
                errors.push(&field, "header values may not contain CR, LF or NUL");
                continue;
            }
            headers.insert(name.to_ascii_lowercase(), (name.clone(), value));
        }
    }
    headers.into_values().collect()
}

/// The request body: `body` interpolated, or the bytes of `body_file` (relative to the spec's
/// folder) as they are, or none.
fn build_body(
    target: &spec::Target,
    path: &str,
    ctx: &BuildContext<'_>,
    errors: &mut Errors,
) -> Option<Vec<u8>> {
    if let Some(message) = message_body(target.grpc.as_ref(), target.ws.as_ref()) {
        if target.body.is_some() || target.body_file.is_some() {
            let field = if target.grpc.is_some() {
                "grpc.message"
            } else {
                "ws.send"
            };
            errors.push(
                path,
                format!("the message is `{field}`: give no `body` or `body_file`"),
            );
            return None;
        }
        return errors
            .interpolate(&format!("{path}.body"), &message, ctx)
            .map(String::into_bytes);
    }
    match (&target.body, &target.body_file) {
        (Some(_), Some(_)) => {
            errors.push(path, "give either `body` or `body_file`, not both");
            None
        }
        (Some(body), None) => errors
            .interpolate(&format!("{path}.body"), body, ctx)
            .map(String::into_bytes),
        (None, Some(file)) => {
            let full = ctx.spec_dir.join(file);
            match crate::files::bounded_read(&full, crate::files::MAX_BODY_BYTES, "the body file") {
                Ok(bytes) => Some(bytes),
                Err(e) => {
                    errors.push(format!("{path}.body_file"), e.to_string());
                    None
                }
            }
        }
        (None, None) => Some(Vec::new()),
    }
}

/// The request body that a gRPC call or a WebSocket exchange renders: the JSON text of
/// `grpc.message`, or `ws.send`; `None` for a plain HTTP request (its `body`).
pub(super) fn message_body(grpc: Option<&spec::Grpc>, ws: Option<&spec::Ws>) -> Option<String> {
    match (grpc, ws) {
        (Some(grpc), _) => Some(super::grpc::message_text(grpc)),
        (None, Some(ws)) => ws.send.clone(),
        (None, None) => None,
    }
}

/// The headers of a gRPC call (gRPC over HTTP/2): `content-type: application/grpc`,
/// `te: trailers`, and `grpc-timeout` for a deadline (in milliseconds, at most 8 digits).
fn grpc_headers(grpc: &super::GrpcPlan, headers: &mut Vec<(String, String)>) {
    headers
        .retain(|(k, _)| !k.eq_ignore_ascii_case("content-type") && !k.eq_ignore_ascii_case("te"));
    headers.push(("content-type".to_string(), "application/grpc".to_string()));
    headers.push(("te".to_string(), "trailers".to_string()));
    if let Some(deadline) = grpc.deadline {
        let ms = deadline.as_millis().clamp(1, 99_999_999);
        headers.push(("grpc-timeout".to_string(), format!("{ms}m")));
    }
}

/// The encoded request message of a gRPC call: `body` (the message's JSON text) encoded; empty
/// when the message holds `{{var}}` (encoded per request). A message that cannot be encoded
/// is an error at `{path}.grpc.message`.
fn grpc_body(
    grpc: &super::GrpcPlan,
    target: &spec::Target,
    body: &[u8],
    path: &str,
    errors: &mut Errors,
) -> Option<Bytes> {
    let templated = target
        .grpc
        .as_ref()
        .is_some_and(|g| super::grpc::message_text(g).contains("{{"));
    if templated {
        return Some(Bytes::new());
    }
    match grpc.encode(body) {
        Ok(encoded) => Some(encoded),
        Err(e) => {
            errors.push(format!("{path}.grpc.message"), e);
            None
        }
    }
}

/// The statuses of `expect.status` (codes and classes such as `2xx`); if none, every 2xx, or
/// `101` for a WebSocket target (its upgrade's answer is its status).
fn build_expect_status(target: &spec::Target, path: &str, errors: &mut Errors) -> StatusSet {
    let mut expect_status = StatusSet([0; 10]);
    if target.expect.status.is_empty() {
        if target.ws.is_some() {
            expect_status.insert(101);
        } else {
            expect_status = StatusSet::success();
        }
    }
    for (j, status) in target.expect.status.iter().enumerate() {
        match status_set(status) {
            Some(set) => expect_status.add(&set),
            None => errors.push(
                format!("{path}.expect.status[{j}]"),
                format!("{status:?} is not a status code (100-599) or class (`2xx`)"),
            ),
        }
    }
    expect_status
}

/// The statuses of one code or class (`2xx`); `None` when it is neither.
fn status_set(status: &StatusMatch) -> Option<StatusSet> {
    let mut set = StatusSet([0; 10]);
    match status {
        StatusMatch::Code(code) if (100..600).contains(code) => set.insert(*code),
        StatusMatch::Class(class)
            if class.len() == 3
                && class.ends_with("xx")
                && (b'1'..=b'5').contains(&class.as_bytes()[0]) =>
        {
            let base = u16::from(class.as_bytes()[0] - b'0') * 100;
            for code in base..base + 100 {
                set.insert(code);
            }
        }
        _ => return None,
    }
    Some(set)
}

fn ensure_slash(path: &str) -> String {
    if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/{path}")
    }
}

/// RFC 9110 `tchar`.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_set() {
        let s = StatusSet::success();
        assert!(s.contains(200) && s.contains(299));
        assert!(!s.contains(199) && !s.contains(300) && !s.contains(9999));
    }
}
