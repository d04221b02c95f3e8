//! The system under test: how to start it and how to tell that it is ready.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::endpoint::{Endpoint, HttpUrl, parse_http_url};
use super::request::request_bytes;
use super::{BuildContext, Errors, tls};
use crate::spec::{self, Protocol, TlsRoots, TlsVersion};

/// Default time to wait for a service's `ready_url`.
const DEFAULT_READY_TIMEOUT: Duration = Duration::from_secs(30);

/// How to start the system under test and tell that it is ready.
#[derive(Debug, Clone)]
pub struct ServicePlan {
    /// Program and arguments, interpolated.
    pub command: Vec<String>,
    /// The command as written in the spec (no secrets): for logs.
    pub(crate) display_command: String,
    /// Environment variables added to the command's (name, interpolated value); it inherits
    /// loadgate's environment besides.
    pub env: Vec<(String, String)>,
    /// The command's working folder: `working_dir` resolved against the spec's folder.
    pub(crate) working_dir: PathBuf,
    /// Where the readiness probe goes (`ready_url`'s host and port).
    pub(crate) ready: Endpoint,
    /// `ready_url` as written in the spec, before `${VAR}` interpolation: safe to print (the
    /// host and port may come from the environment, and may be secret).
    pub ready_url: String,
    /// Request bytes of the readiness probe (`GET ready_url`).
    pub(crate) ready_request: Arc<[u8]>,
    /// For an `https://` ready URL: TLS without certificate verification (the probe asks
    /// only whether the service answers) and the name to send as SNI.
    pub(crate) ready_tls: Option<(
        Arc<rustls::ClientConfig>,
        rustls_pki_types::ServerName<'static>,
    )>,
    /// How long to wait for the service to answer the probe (default 30 s).
    pub(crate) ready_timeout: Duration,
}

/// Resolves the spec's `service` block; every problem goes to `errors`.
pub(super) fn build_service(
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
    let HttpUrl {
        endpoint: ready,
        endpoint_from_env,
        path_and_query,
        https,
        websocket,
    } = ready?;
    if websocket {
        errors.push(
            "service.ready_url",
            "the readiness check is an HTTP GET: use an http:// or https:// URL",
        );
        return None;
    }
    let ready_tls = if https {
        let settings = tls::TlsSettings {
            roots: TlsRoots::None,
            ca_file: None,
            client_auth: None,
            insecure_skip_verify: true,
            min_version: TlsVersion::V1_2,
            ciphers: None,
            resumption: false,
            protocol: Protocol::H1,
        };
        let config = tls::client_config(&settings).map(Arc::new);
        let name = tls::server_name(&ready.host);
        match (config, name) {
            (Ok(config), Ok(name)) => Some((config, name)),
            (Err(e), _) => {
                errors.push("service.ready_url", e.message);
                return None;
            }
            (_, Err(e)) => {
                let shown = tls::name_in_message((!endpoint_from_env).then_some(&*ready.host));
                errors.push("service.ready_url", format!("{shown}: {}", e.message));
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
        ready_request: request_bytes("GET", &path_and_query, &ready, https, &[], &[]).into(),
        ready_tls,
        ready,
        ready_url: service.ready_url.clone(),
        ready_timeout: ready_timeout?,
    })
}
