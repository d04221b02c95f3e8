//! The resolved plan: every default applied, every string parsed, request bytes built.
//!
//! [`build`] turns a [`Spec`] into a [`Plan`], or into every [`PlanError`] it finds (not only
//! the first), each naming the field path (`targets[1].expect.status`). The plan does not
//! depend on YAML: an ad-hoc run from command-line flags builds the same types.

pub mod load;
pub mod regression;
pub mod threshold;
pub mod tls;

pub use load::{LoadPlan, Model, Stage, Stop, ThinkTime};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use sha2::{Digest, Sha256};

use crate::spec::{self, Protocol, Spec, StatusMatch, TlsRoots, TlsVersion};
use crate::units::parse_duration;
use regression::RegressionRule;
use threshold::{Metric, Scope, Threshold};

/// Default request timeout when neither the spec nor the target gives one.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default time to wait for a service's `ready_url`.
pub const DEFAULT_READY_TIMEOUT: Duration = Duration::from_secs(30);

/// A validated, fully resolved load test.
#[derive(Debug, Clone)]
pub struct Plan {
    pub name: String,
    /// Hex SHA-256 of the spec file's bytes (before interpolation, so secrets never enter it).
    pub spec_hash: String,
    pub service: Option<ServicePlan>,
    pub targets: Vec<TargetPlan>,
    pub load: LoadPlan,
    /// Thresholds over the whole run and per target.
    pub slo: Vec<Threshold>,
    /// Regression rules over the whole run, defaults applied (see [`regression`]).
    pub regression: Vec<RegressionRule>,
}

/// How to start the system under test and tell that it is ready.
#[derive(Debug, Clone)]
pub struct ServicePlan {
    /// Program and arguments, interpolated.
    pub command: Vec<String>,
    /// The command as written in the spec (no secrets): for logs.
    pub display_command: String,
    pub env: Vec<(String, String)>,
    pub working_dir: PathBuf,
    pub ready: Endpoint,
    /// Request bytes of the readiness probe (`GET ready_url`).
    pub ready_request: Arc<[u8]>,
    /// For an `https://` ready URL: TLS without certificate verification (the probe asks
    /// only whether the service answers) and the name to send as SNI.
    pub ready_tls: Option<(
        Arc<rustls::ClientConfig>,
        rustls_pki_types::ServerName<'static>,
    )>,
    pub ready_timeout: Duration,
}

/// Where a target's connections go.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// One request, ready to send.
#[derive(Debug, Clone)]
pub struct TargetPlan {
    pub name: String,
    pub method: String,
    /// The URL as written in the spec, before `${VAR}` interpolation: safe to print.
    pub display_url: String,
    pub endpoint: Endpoint,
    /// The complete HTTP/1.1 request: request line, headers, body.
    pub request: Arc<[u8]>,
    /// The same request for HTTP/2: pseudo-headers from the URL, the spec's headers but the
    /// connection-specific ones (`Connection`, `Keep-Alive`, `Transfer-Encoding`, `Upgrade`,
    /// `Proxy-Connection`), `Host` as `:authority`. Its body is [`TargetPlan::body`].
    pub h2_request: http::Request<()>,
    /// The request body (shared, not copied, per HTTP/2 request).
    pub body: Bytes,
    /// How connections to the endpoint are made: protocol and TLS. Targets with the same
    /// endpoint and the same transport (`Arc::ptr_eq`) share connections.
    pub transport: Arc<TransportPlan>,
    /// A `HEAD` request: responses carry no body whatever their headers say.
    pub is_head: bool,
    pub expect_status: StatusSet,
    /// Relative share of requests, ≥ 1.
    pub weight: u32,
    /// From connect to the last byte of the response.
    pub timeout: Duration,
    /// Checks on each response.
    pub checks: Vec<CheckPlan>,
}

impl TargetPlan {
    /// Whether responses must be kept for the checks (their head at least).
    pub fn captures(&self) -> bool {
        !self.checks.is_empty()
    }

    /// Whether the checks need the body too (up to 1 MiB of it).
    pub fn captures_body(&self) -> bool {
        self.checks
            .iter()
            .any(|c| matches!(c, CheckPlan::BodyContains(_) | CheckPlan::JsonEquals(..)))
    }
}

/// One resolved response check.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckPlan {
    /// A header (name lower-case) is present.
    HeaderPresent(String),
    /// A header (name lower-case) equals this value exactly.
    HeaderEquals(String, String),
    /// The body contains these bytes.
    BodyContains(Vec<u8>),
    /// The value at this JSON pointer in the JSON body equals this value.
    JsonEquals(String, serde_json::Value),
}

impl CheckPlan {
    /// A short description for reports, e.g. `header content-type == "application/json"`.
    pub fn describe(&self) -> String {
        match self {
            CheckPlan::HeaderPresent(name) => format!("header {name} present"),
            CheckPlan::HeaderEquals(name, value) => format!("header {name} == {value:?}"),
            CheckPlan::BodyContains(text) => {
                format!("body contains {:?}", String::from_utf8_lossy(text))
            }
            CheckPlan::JsonEquals(pointer, value) => format!("json {pointer} == {value}"),
        }
    }
}

impl TargetPlan {
    /// Whether requests of `self` and `other` may go over the same connections: same
    /// endpoint, same protocol and TLS configuration.
    pub fn shares_connections_with(&self, other: &TargetPlan) -> bool {
        self.endpoint == other.endpoint && Arc::ptr_eq(&self.transport, &other.transport)
    }
}

/// How a target's connections speak: HTTP version and TLS.
#[derive(Debug)]
pub struct TransportPlan {
    /// The protocol the spec asks for (target, else `defaults`, else `auto`).
    pub protocol: Protocol,
    /// TLS for an `https://` URL; `None` for cleartext.
    pub tls: Option<TlsPlan>,
}

impl TransportPlan {
    /// Whether a cleartext connection speaks HTTP/2 (h2c with prior knowledge): only when
    /// `protocol: h2`. Over TLS, ALPN decides (see [`tls::alpn`]).
    pub fn cleartext_h2(&self) -> bool {
        self.tls.is_none() && self.protocol == Protocol::H2
    }
}

/// A target's TLS: the shared client configuration and the name to ask for.
#[derive(Debug)]
pub struct TlsPlan {
    /// Built once; shared by every connection with these settings (and their session cache).
    pub config: Arc<rustls::ClientConfig>,
    /// SNI and the name verified in the server's certificate.
    pub server_name: rustls_pki_types::ServerName<'static>,
    /// `server_name` as text, for reports.
    pub server_name_text: String,
    /// Certificates are not verified (`insecure_skip_verify`): reports say so.
    pub insecure_skip_verify: bool,
}

/// The set of accepted status codes (100–599), as a bitset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusSet([u64; 10]);

impl StatusSet {
    /// Every 2xx status: the default expectation.
    pub fn success() -> StatusSet {
        let mut set = StatusSet([0; 10]);
        for code in 200..300 {
            set.insert(code);
        }
        set
    }

    fn insert(&mut self, code: u16) {
        if code < 640 {
            self.0[usize::from(code / 64)] |= 1 << (code % 64);
        }
    }

    /// Whether `code` is accepted.
    #[inline]
    pub fn contains(&self, code: u16) -> bool {
        code < 640 && self.0[usize::from(code / 64)] & (1 << (code % 64)) != 0
    }
}

/// A semantic error in a spec: the field path (`targets[1].url`) and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanError {
    pub path: String,
    pub message: String,
}

/// What `build` needs besides the spec.
pub struct BuildContext<'a> {
    /// The spec file's bytes, for the hash.
    pub source: &'a [u8],
    /// The spec's folder: `body_file` and `service.working_dir` are relative to it.
    pub spec_dir: &'a Path,
    /// Looks up `${VAR}` (the environment, plus `LOADGATE`, the running binary).
    pub var: &'a dyn Fn(&str) -> Option<String>,
}

/// Resolves `spec` into a plan, or returns every error found.
pub fn build(spec: &Spec, ctx: &BuildContext<'_>) -> Result<Plan, Vec<PlanError>> {
    let mut errors = Errors::default();
    let timeout = spec
        .defaults
        .timeout
        .as_deref()
        .and_then(|t| errors.duration("defaults.timeout", t, false))
        .unwrap_or(DEFAULT_TIMEOUT);

    // Interpolated once; a target's `path` is joined to it.
    let base_url = spec
        .defaults
        .base_url
        .as_deref()
        .and_then(|b| errors.interpolate("defaults.base_url", b, ctx));

    let service = spec
        .service
        .as_ref()
        .and_then(|s| build_service(s, ctx, &mut errors));

    let mut targets = Vec::with_capacity(spec.targets.len());
    let mut transports = Transports::default();
    let mut slo = build_slo(&spec.slo, "slo", Scope::Total, &mut errors);
    for (i, target) in spec.targets.iter().enumerate() {
        let path = format!("targets[{i}]");
        if spec.targets[..i].iter().any(|t| t.name == target.name) {
            errors.push(
                format!("{path}.name"),
                format!("target name `{}` is used twice", target.name),
            );
        }
        if let Some(t) = build_target(
            spec,
            target,
            &path,
            base_url.as_deref(),
            timeout,
            ctx,
            &mut transports,
            &mut errors,
        ) {
            targets.push(t);
        }
        slo.extend(build_slo(
            &target.slo,
            &format!("{path}.slo"),
            Scope::Target(i),
            &mut errors,
        ));
    }

    let load = load::build(&spec.load, &mut errors);
    let (regression, regression_errors) = regression::build(&spec.regression);
    for (path, message) in regression_errors {
        errors.push(path, message);
    }
    if let Some(streams) = spec.load.streams.filter(|s| *s > 1) {
        let not_h2: Vec<&str> = spec
            .targets
            .iter()
            .filter(|t| t.protocol.or(spec.defaults.protocol) != Some(Protocol::H2))
            .map(|t| t.name.as_str())
            .collect();
        if !not_h2.is_empty() {
            errors.push(
                "load.streams",
                format!(
                    "{streams} streams per connection need `protocol: h2` for every target \
                     (HTTP/1.1 carries one request at a time); not h2: {}",
                    not_h2.join(", ")
                ),
            );
        }
    }

    if !errors.0.is_empty() {
        return Err(errors.0);
    }
    Ok(Plan {
        name: spec.name.clone(),
        spec_hash: hex(&Sha256::digest(ctx.source)),
        service,
        targets,
        load: load.expect("no errors, so the load plan was built"),
        slo,
        regression,
    })
}

#[derive(Default)]
struct Errors(Vec<PlanError>);

impl Errors {
    fn push(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.0.push(PlanError {
            path: path.into(),
            message: message.into(),
        });
    }

    fn duration(&mut self, path: &str, text: &str, zero_ok: bool) -> Option<Duration> {
        match parse_duration(text) {
            Ok(d) if d.is_zero() && !zero_ok => {
                self.push(path, "must be longer than 0");
                None
            }
            Ok(d) => Some(d),
            Err(e) => {
                self.push(path, e);
                None
            }
        }
    }

    fn interpolate(&mut self, path: &str, text: &str, ctx: &BuildContext<'_>) -> Option<String> {
        match interpolate(text, ctx.var) {
            Ok(s) => Some(s),
            Err(e) => {
                self.push(path, e);
                None
            }
        }
    }
}

fn build_service(
    service: &spec::Service,
    ctx: &BuildContext<'_>,
    errors: &mut Errors,
) -> Option<ServicePlan> {
    let command: Vec<String> = service
        .command
        .iter()
        .enumerate()
        .filter_map(|(i, arg)| errors.interpolate(&format!("service.command[{i}]"), arg, ctx))
        .collect();
    let env: Vec<(String, String)> = service
        .env
        .iter()
        .filter_map(|(k, v)| {
            errors
                .interpolate(&format!("service.env.{k}"), v, ctx)
                .map(|v| (k.clone(), v))
        })
        .collect();
    let ready_url = errors.interpolate("service.ready_url", &service.ready_url, ctx);
    let ready =
        ready_url.and_then(|u| parse_http_url("service.ready_url", &u, &service.ready_url, errors));
    let ready_timeout = match &service.ready_timeout {
        Some(t) => errors.duration("service.ready_timeout", t, false),
        None => Some(DEFAULT_READY_TIMEOUT),
    };
    let working_dir = match &service.working_dir {
        Some(dir) => ctx.spec_dir.join(dir),
        None => ctx.spec_dir.to_path_buf(),
    };
    if command.len() != service.command.len() || env.len() != service.env.len() {
        return None;
    }
    let (ready, target, https) = ready?;
    let ready_tls = if https {
        let settings = tls::TlsSettings {
            roots: TlsRoots::None,
            ca_file: None,
            client_auth: None,
            insecure_skip_verify: true,
            min_version: TlsVersion::V1_2,
            resumption: false,
            protocol: Protocol::H1,
        };
        let config = tls::client_config(&settings).map(Arc::new);
        let name = tls::server_name(&ready.host);
        match (config, name) {
            (Ok(config), Ok(name)) => Some((config, name)),
            (Err(e), _) | (_, Err(e)) => {
                errors.push("service.ready_url", e.message);
                return None;
            }
        }
    } else {
        None
    };
    Some(ServicePlan {
        command,
        display_command: service.command.join(" "),
        env,
        working_dir,
        ready_request: request_bytes("GET", &target, &ready, https, &[], &[]).into(),
        ready_tls,
        ready,
        ready_timeout: ready_timeout?,
    })
}

/// Splits an absolute `http://` or `https://` URL into its endpoint, request target
/// (`/path?query`) and whether it is `https`. `text` is the URL after `${VAR}` interpolation;
/// messages show `shown`, the URL as written, so that no interpolated secret reaches an error.
fn parse_http_url(
    path: &str,
    text: &str,
    shown: &str,
    errors: &mut Errors,
) -> Option<(Endpoint, String, bool)> {
    let url = match url::Url::parse(text) {
        Ok(url) => url,
        Err(e) => {
            errors.push(path, format!("`{shown}` is not a valid URL: {e}"));
            return None;
        }
    };
    let tls = match url.scheme() {
        "http" => false,
        "https" => true,
        other => {
            errors.push(
                path,
                format!("`{shown}`: scheme `{other}` is not supported; use http:// or https://"),
            );
            return None;
        }
    };
    if !url.username().is_empty() || url.password().is_some() {
        errors.push(
            path,
            format!("`{shown}`: credentials in a URL are not sent; use an `Authorization` header"),
        );
        return None;
    }
    let Some(host) = url.host_str() else {
        errors.push(path, format!("`{shown}` has no host"));
        return None;
    };
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let port = url
        .port_or_known_default()
        .unwrap_or(if tls { 443 } else { 80 });
    let mut target = url.path().to_string();
    if let Some(query) = url.query() {
        target.push('?');
        target.push_str(query);
    }
    Some((Endpoint { host, port }, target, tls))
}

#[allow(clippy::too_many_arguments)]
fn build_target(
    spec: &Spec,
    target: &spec::Target,
    path: &str,
    base_url: Option<&str>,
    timeout: Duration,
    ctx: &BuildContext<'_>,
    transports: &mut Transports,
    errors: &mut Errors,
) -> Option<TargetPlan> {
    let (raw_url, url_path, url) = match (&target.url, &target.path, &spec.defaults.base_url) {
        (Some(url), None, _) => {
            let field = format!("{path}.url");
            let interpolated = errors.interpolate(&field, url, ctx);
            (url.clone(), field, interpolated)
        }
        (None, Some(p), Some(raw_base)) => {
            let field = format!("{path}.path");
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
    let endpoint = url.and_then(|u| parse_http_url(&url_path, &u, &raw_url, errors));

    let method = target.method.clone().unwrap_or_else(|| "GET".to_string());
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

    let body = match (&target.body, &target.body_file) {
        (Some(_), Some(_)) => {
            errors.push(path, "give either `body` or `body_file`, not both");
            None
        }
        (Some(body), None) => errors
            .interpolate(&format!("{path}.body"), body, ctx)
            .map(String::into_bytes),
        (None, Some(file)) => {
            let full = ctx.spec_dir.join(file);
            match std::fs::read(&full) {
                Ok(bytes) => Some(bytes),
                Err(e) => {
                    errors.push(
                        format!("{path}.body_file"),
                        format!("cannot read `{}`: {e}", full.display()),
                    );
                    None
                }
            }
        }
        (None, None) => Some(Vec::new()),
    };

    let mut expect_status = StatusSet([0; 10]);
    if target.expect.status.is_empty() {
        expect_status = StatusSet::success();
    }
    for (j, status) in target.expect.status.iter().enumerate() {
        match status {
            StatusMatch::Code(code) if (100..600).contains(code) => expect_status.insert(*code),
            StatusMatch::Class(class)
                if class.len() == 3
                    && class.ends_with("xx")
                    && (b'1'..=b'5').contains(&class.as_bytes()[0]) =>
            {
                let base = u16::from(class.as_bytes()[0] - b'0') * 100;
                for code in base..base + 100 {
                    expect_status.insert(code);
                }
            }
            other => errors.push(
                format!("{path}.expect.status[{j}]"),
                format!("{other:?} is not a status code (100-599) or class (`2xx`)"),
            ),
        }
    }
    let weight = target.weight.unwrap_or(1);
    if weight == 0 {
        errors.push(format!("{path}.weight"), "must be at least 1");
    }

    let checks = build_checks(&target.checks, path, errors);
    let (endpoint, request_target, https) = endpoint?;
    let transport = transports.get(spec, target, path, https, &endpoint, ctx, errors)?;
    let body = body?;
    let headers: Vec<(String, String)> = headers.into_values().collect();
    let request = request_bytes(&method, &request_target, &endpoint, https, &headers, &body);
    let h2_request = match h2_request(&method, &request_target, &endpoint, https, &headers, &body) {
        Ok(request) => request,
        Err(e) => {
            errors.push(path, format!("cannot build the HTTP/2 request: {e}"));
            return None;
        }
    };
    Some(TargetPlan {
        name: target.name.clone(),
        is_head: method == "HEAD",
        method,
        display_url: raw_url,
        endpoint,
        request: request.into(),
        h2_request,
        body: Bytes::from(body),
        transport,
        expect_status,
        weight,
        timeout,
        checks: checks?,
    })
}

fn build_checks(checks: &[spec::Check], path: &str, errors: &mut Errors) -> Option<Vec<CheckPlan>> {
    let before = errors.0.len();
    let mut out = Vec::with_capacity(checks.len());
    for (i, check) in checks.iter().enumerate() {
        let path = format!("{path}.checks[{i}]");
        let plan = match (
            &check.header,
            &check.body_contains,
            &check.json,
            &check.equals,
        ) {
            (Some(name), None, None, None) => CheckPlan::HeaderPresent(name.to_ascii_lowercase()),
            (Some(name), None, None, Some(serde_json::Value::String(value))) => {
                CheckPlan::HeaderEquals(name.to_ascii_lowercase(), value.clone())
            }
            (Some(_), None, None, Some(other)) => {
                errors.push(
                    format!("{path}.equals"),
                    format!("a header's value is text: write `\"{other}\"`"),
                );
                continue;
            }
            (None, Some(text), None, None) => CheckPlan::BodyContains(text.as_bytes().to_vec()),
            (None, None, Some(pointer), Some(value)) => {
                if !(pointer.is_empty() || pointer.starts_with('/')) {
                    errors.push(
                        format!("{path}.json"),
                        format!("`{pointer}` is not a JSON pointer: it starts with `/`, e.g. `/data/0/id`"),
                    );
                    continue;
                }
                CheckPlan::JsonEquals(pointer.clone(), value.clone())
            }
            (None, None, Some(_), None) => {
                errors.push(&path, "a `json` check needs `equals`");
                continue;
            }
            (None, Some(_), None, Some(_)) => {
                errors.push(
                    format!("{path}.equals"),
                    "`body_contains` takes no `equals`",
                );
                continue;
            }
            _ => {
                errors.push(
                    &path,
                    "give exactly one of `header`, `body_contains` or `json`",
                );
                continue;
            }
        };
        out.push(plan);
    }
    (errors.0.len() == before).then_some(out)
}

/// The targets' transports, each built once: targets with equal settings share one (and so
/// their connections and TLS sessions).
#[derive(Default)]
struct Transports {
    /// (protocol, TLS settings and server name, or `None` for cleartext) -> transport;
    /// `None` when building it failed (the error is reported once).
    built: Vec<(TransportKey, Option<Arc<TransportPlan>>)>,
}

type TransportKey = (Protocol, Option<(tls::TlsSettings, String)>);

impl Transports {
    /// The transport of `target` (at `path`); `https` for an `https://` URL.
    #[allow(clippy::too_many_arguments)]
    fn get(
        &mut self,
        spec: &Spec,
        target: &spec::Target,
        path: &str,
        https: bool,
        endpoint: &Endpoint,
        ctx: &BuildContext<'_>,
        errors: &mut Errors,
    ) -> Option<Arc<TransportPlan>> {
        let protocol = target
            .protocol
            .or(spec.defaults.protocol)
            .unwrap_or(Protocol::Auto);
        if !https {
            if target.tls.is_some() {
                errors.push(
                    format!("{path}.tls"),
                    "`tls` is for https:// URLs; this target's URL is http://",
                );
                return None;
            }
            let key = (protocol, None);
            if let Some(built) = self.find(&key) {
                return built;
            }
            let built = Some(Arc::new(TransportPlan {
                protocol,
                tls: None,
            }));
            self.built.push((key, built.clone()));
            return built;
        }
        // Each setting: the target's, else the defaults', with the field path it came from.
        let own = target.tls.as_ref();
        let shared = spec.defaults.tls.as_ref();
        fn pick<'a, T>(
            own: Option<&'a spec::Tls>,
            shared: Option<&'a spec::Tls>,
            path: &str,
            field: &str,
            get: impl Fn(&'a spec::Tls) -> Option<&'a T>,
        ) -> Option<(&'a T, String)> {
            own.and_then(&get)
                .map(|v| (v, format!("{path}.tls.{field}")))
                .or_else(|| {
                    shared
                        .and_then(&get)
                        .map(|v| (v, format!("defaults.tls.{field}")))
                })
        }
        let mut file = |field: &str, get: fn(&spec::Tls) -> Option<&String>| {
            pick(own, shared, path, field, get).and_then(|(name, at)| {
                errors
                    .interpolate(&at, name, ctx)
                    .map(|name| (ctx.spec_dir.join(name), at))
            })
        };
        let ca_file = file("ca_file", |t| t.ca_file.as_ref());
        let client_cert = file("client_cert", |t| t.client_cert.as_ref());
        let client_key = file("client_key", |t| t.client_key.as_ref());
        let client_auth = match (client_cert, client_key) {
            (Some((cert, _)), Some((key, _))) => Some((cert, key)),
            (None, None) => None,
            (Some((_, at)), None) => {
                errors.push(at, "`client_cert` needs `client_key`");
                return None;
            }
            (None, Some((_, at))) => {
                errors.push(at, "`client_key` needs `client_cert`");
                return None;
            }
        };
        let roots = pick(own, shared, path, "roots", |t| t.roots.as_ref())
            .map(|(r, _)| *r)
            .unwrap_or(if ca_file.is_some() {
                TlsRoots::None
            } else {
                TlsRoots::Webpki
            });
        let settings = tls::TlsSettings {
            roots,
            ca_file: ca_file.as_ref().map(|(file, _)| file.clone()),
            client_auth,
            insecure_skip_verify: pick(own, shared, path, "insecure_skip_verify", |t| {
                t.insecure_skip_verify.as_ref()
            })
            .is_some_and(|(v, _)| *v),
            min_version: pick(own, shared, path, "min_version", |t| t.min_version.as_ref())
                .map_or(TlsVersion::V1_2, |(v, _)| *v),
            resumption: pick(own, shared, path, "resumption", |t| t.resumption.as_ref())
                .is_none_or(|(v, _)| *v),
            protocol,
        };
        let (name, name_at) =
            match pick(own, shared, path, "server_name", |t| t.server_name.as_ref()) {
                Some((name, at)) => (errors.interpolate(&at, name, ctx)?, at),
                None => (endpoint.host.clone(), format!("{path}.url")),
            };
        let server_name = match tls::server_name(&name) {
            Ok(n) => n,
            Err(e) => {
                errors.push(name_at, e.message);
                return None;
            }
        };
        // Where to report a problem with the configuration: the field it is about, as given.
        let field_path = |field: &str| {
            pick(own, shared, path, field, |t| match field {
                "ca_file" => t.ca_file.as_ref().map(|_| &()),
                "client_cert" => t.client_cert.as_ref().map(|_| &()),
                "client_key" => t.client_key.as_ref().map(|_| &()),
                "roots" => t.roots.as_ref().map(|_| &()),
                "min_version" => t.min_version.as_ref().map(|_| &()),
                _ => None,
            })
            .map_or_else(|| format!("{path}.tls"), |(_, at)| at)
        };
        let key = (protocol, Some((settings.clone(), name.clone())));
        // Equal settings with another server name share the configuration (and sessions).
        let config = self.built.iter().find_map(|((_, k), t)| match (k, t) {
            (Some((s, _)), Some(t)) if *s == settings => {
                t.tls.as_ref().map(|tls| tls.config.clone())
            }
            _ => None,
        });
        if let Some(built) = self.find(&key) {
            return built;
        }
        let built = match config.map_or_else(|| tls::client_config(&settings).map(Arc::new), Ok) {
            Ok(config) => Some(Arc::new(TransportPlan {
                protocol,
                tls: Some(TlsPlan {
                    config,
                    server_name,
                    server_name_text: name,
                    insecure_skip_verify: settings.insecure_skip_verify,
                }),
            })),
            Err(e) => {
                errors.push(field_path(e.field), e.message);
                None
            }
        };
        self.built.push((key, built.clone()));
        built
    }

    /// The transport built (or failed) for `key` before, if any.
    fn find(&self, key: &TransportKey) -> Option<Option<Arc<TransportPlan>>> {
        self.built
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, built)| built.clone())
    }
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

/// The `Host` header (and HTTP/2 `:authority`) of `endpoint`: the port is left out when it
/// is the scheme's default.
fn authority(endpoint: &Endpoint, https: bool) -> String {
    if endpoint.port == if https { 443 } else { 80 } {
        bracket(&endpoint.host)
    } else {
        format!("{}:{}", bracket(&endpoint.host), endpoint.port)
    }
}

/// Builds the bytes of an HTTP/1.1 request. Adds `Host`, `User-Agent` and `Content-Length`
/// unless given.
fn request_bytes(
    method: &str,
    target: &str,
    endpoint: &Endpoint,
    https: bool,
    headers: &[(String, String)],
    body: &[u8],
) -> Vec<u8> {
    let has = |name: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
    let mut out = format!("{method} {target} HTTP/1.1\r\n");
    if !has("host") {
        out.push_str(&format!("Host: {}\r\n", authority(endpoint, https)));
    }
    if !has("user-agent") {
        out.push_str(concat!(
            "User-Agent: loadgate/",
            env!("CARGO_PKG_VERSION"),
            "\r\n"
        ));
    }
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    let needs_length = !body.is_empty() || matches!(method, "POST" | "PUT" | "PATCH");
    if needs_length && !has("content-length") {
        out.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// Headers that HTTP/2 forbids (RFC 9113 §8.2.2): left out of HTTP/2 requests.
const CONNECTION_SPECIFIC: [&str; 5] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
];

/// Builds the HTTP/2 form of a request: `:scheme`, `:authority` (the `Host` header if given)
/// and `:path` from the URL; `User-Agent` and `Content-Length` as for HTTP/1.1.
fn h2_request(
    method: &str,
    target: &str,
    endpoint: &Endpoint,
    https: bool,
    headers: &[(String, String)],
    body: &[u8],
) -> Result<http::Request<()>, http::Error> {
    let host = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("host"))
        .map_or_else(|| authority(endpoint, https), |(_, v)| v.clone());
    let uri = http::Uri::builder()
        .scheme(if https { "https" } else { "http" })
        .authority(host)
        .path_and_query(target)
        .build()?;
    let mut builder = http::Request::builder()
        .method(method)
        .uri(uri)
        .version(http::Version::HTTP_2);
    let has = |name: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
    if !has("user-agent") {
        builder = builder.header(
            "user-agent",
            concat!("loadgate/", env!("CARGO_PKG_VERSION")),
        );
    }
    for (name, value) in headers {
        let lower = name.to_ascii_lowercase();
        if lower == "host" || CONNECTION_SPECIFIC.contains(&lower.as_str()) {
            continue;
        }
        if lower == "te" && !value.eq_ignore_ascii_case("trailers") {
            continue;
        }
        builder = builder.header(lower, value);
    }
    let needs_length = !body.is_empty() || matches!(method, "POST" | "PUT" | "PATCH");
    if needs_length && !has("content-length") {
        builder = builder.header("content-length", body.len());
    }
    builder.body(())
}

fn bracket(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    }
}

fn build_slo(slo: &spec::Slo, path: &str, scope: Scope, errors: &mut Errors) -> Vec<Threshold> {
    let mut out = Vec::new();
    for (metric, list) in [
        (Metric::Latency, &slo.latency),
        (Metric::Errors, &slo.errors),
        (Metric::Requests, &slo.requests),
        (Metric::Checks, &slo.checks),
    ] {
        for (i, entry) in list.iter().enumerate() {
            let path = format!("{path}.{}[{i}]", metric.name());
            let (text, options) = match entry {
                spec::ThresholdSpec::Expression(text) => (text, None),
                spec::ThresholdSpec::Detailed(d) => (&d.threshold, Some(d)),
            };
            let mut threshold = match Threshold::parse(scope, metric, text) {
                Ok(t) => t,
                Err(e) => {
                    errors.push(path, e);
                    continue;
                }
            };
            if let Some(options) = options {
                threshold.abort_on_fail = options.abort_on_fail;
                if let Some(after) = &options.abort_after {
                    if !options.abort_on_fail {
                        errors.push(format!("{path}.abort_after"), "needs `abort_on_fail: true`");
                    }
                    threshold.abort_after = errors
                        .duration(&format!("{path}.abort_after"), after, true)
                        .unwrap_or_default();
                }
                if let Some(window) = &options.window {
                    let field = format!("{path}.window");
                    if scope != Scope::Total {
                        errors.push(
                            &field,
                            "windows apply to the whole run's `slo`, not per target",
                        );
                    } else if metric == Metric::Checks {
                        errors.push(&field, "`checks` thresholds have no windows");
                    } else if let Some(d) = errors.duration(&field, window, false) {
                        if d.subsec_nanos() != 0 {
                            errors.push(&field, "a window is a whole number of seconds");
                        } else {
                            threshold.window_s = Some(d.as_secs().min(u64::from(u32::MAX)) as u32);
                        }
                    }
                }
                if options.abort_on_fail && scope != Scope::Total {
                    errors.push(
                        format!("{path}.abort_on_fail"),
                        "aborting applies to the whole run's `slo`, not per target",
                    );
                }
            }
            out.push(threshold);
        }
    }
    out
}

/// Replaces `${NAME}` with `var(NAME)`; `$${` stays a literal `${`.
///
/// Errors name the missing variable. Names are `[A-Za-z_][A-Za-z0-9_]*`.
pub fn interpolate(text: &str, var: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('$') {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        if let Some(tail) = after.strip_prefix("$${") {
            out.push_str("${");
            rest = tail;
        } else if let Some(tail) = after.strip_prefix("${") {
            let end = tail
                .find('}')
                .ok_or_else(|| format!("`${{` is not closed in `{text}`"))?;
            let name = &tail[..end];
            let valid = name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return Err(format!("`${{{name}}}` is not a valid variable name"));
            }
            let value =
                var(name).ok_or_else(|| format!("environment variable `{name}` is not set"))?;
            out.push_str(&value);
            rest = &tail[end + 1..];
        } else {
            out.push('$');
            rest = &after[1..];
        }
    }
    out.push_str(rest);
    Ok(out)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolation() {
        let var = |name: &str| match name {
            "HOST" => Some("127.0.0.1".to_string()),
            "TOKEN" => Some("s3cret".to_string()),
            _ => None,
        };
        assert_eq!(
            interpolate("http://${HOST}:80/a?t=${TOKEN}", &var).unwrap(),
            "http://127.0.0.1:80/a?t=s3cret"
        );
        assert_eq!(
            interpolate("cost: $5 $${HOST}", &var).unwrap(),
            "cost: $5 ${HOST}"
        );
        assert!(
            interpolate("${NOPE}", &var)
                .unwrap_err()
                .contains("`NOPE` is not set")
        );
        assert!(
            interpolate("${HOST", &var)
                .unwrap_err()
                .contains("not closed")
        );
        assert!(
            interpolate("${1X}", &var)
                .unwrap_err()
                .contains("not a valid")
        );
    }

    #[test]
    fn status_set() {
        let s = StatusSet::success();
        assert!(s.contains(200) && s.contains(299));
        assert!(!s.contains(199) && !s.contains(300) && !s.contains(9999));
    }

    #[test]
    fn request_bytes_add_host_and_length() {
        let endpoint = Endpoint {
            host: "::1".to_string(),
            port: 8080,
        };
        let headers = [("X-Id".to_string(), "7".to_string())];
        let bytes = request_bytes("POST", "/items?a=1", &endpoint, false, &headers, b"{}");
        let text = String::from_utf8(bytes).unwrap();
        assert!(
            text.starts_with("POST /items?a=1 HTTP/1.1\r\nHost: [::1]:8080\r\n"),
            "{text}"
        );
        assert!(text.contains("X-Id: 7\r\n"));
        assert!(text.ends_with("Content-Length: 2\r\n\r\n{}"), "{text}");
    }

    #[test]
    fn https_default_port_is_left_out_of_host_and_authority() {
        let endpoint = |port| Endpoint {
            host: "api.example.com".to_string(),
            port,
        };
        let text =
            String::from_utf8(request_bytes("GET", "/", &endpoint(443), true, &[], &[])).unwrap();
        assert!(text.contains("Host: api.example.com\r\n"), "{text}");
        let text =
            String::from_utf8(request_bytes("GET", "/", &endpoint(443), false, &[], &[])).unwrap();
        assert!(text.contains("Host: api.example.com:443\r\n"), "{text}");
        let request = h2_request("GET", "/a?b=1", &endpoint(8443), true, &[], &[]).unwrap();
        assert_eq!(
            request.uri().to_string(),
            "https://api.example.com:8443/a?b=1"
        );
    }

    #[test]
    fn h2_requests_drop_connection_specific_headers_and_take_host_as_authority() {
        let endpoint = Endpoint {
            host: "127.0.0.1".to_string(),
            port: 8080,
        };
        let headers: Vec<(String, String)> = [
            ("Host", "api.internal"),
            ("Connection", "keep-alive"),
            ("Transfer-Encoding", "chunked"),
            ("TE", "gzip"),
            ("X-Id", "7"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let request = h2_request("POST", "/items", &endpoint, false, &headers, b"{}").unwrap();
        assert_eq!(request.uri().to_string(), "http://api.internal/items");
        assert_eq!(request.method(), "POST");
        let names: Vec<&str> = request.headers().keys().map(|k| k.as_str()).collect();
        assert_eq!(names, ["user-agent", "x-id", "content-length"]);
        assert_eq!(request.headers()["content-length"], "2");
    }
}
