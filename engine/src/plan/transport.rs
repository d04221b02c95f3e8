//! How a target's connections speak: the protocol asked for and TLS, each combination built
//! once and shared by the targets that use it.

use std::path::PathBuf;
use std::sync::Arc;

use super::endpoint::HttpUrl;
use super::{BuildContext, Errors, tls};
use crate::spec::{self, Protocol, Spec, TlsRoots, TlsVersion};

/// How a target's connections speak: HTTP version and TLS.
#[derive(Debug)]
pub struct TransportPlan {
    /// The protocol the spec asks for (target, else `defaults`, else `auto`).
    pub(crate) protocol: Protocol,
    /// TLS for an `https://` URL; `None` for cleartext.
    pub(crate) tls: Option<TlsPlan>,
    /// `protocol: h3`: the QUIC client configuration over `tls`'s (TLS 1.3, ALPN `h3`), built
    /// once; `None` for every other protocol.
    pub(crate) quic: Option<quinn::ClientConfig>,
}

impl TransportPlan {
    /// Whether a cleartext connection speaks HTTP/2 (h2c with prior knowledge): only when
    /// `protocol: h2` or `grpc`. Over TLS, ALPN decides (see [`tls::alpn`]).
    pub(crate) fn cleartext_h2(&self) -> bool {
        self.tls.is_none() && matches!(self.protocol, Protocol::H2 | Protocol::Grpc)
    }
}

/// A target's TLS: the shared client configuration and the name to ask for.
#[derive(Debug)]
pub(crate) struct TlsPlan {
    /// Built once; shared by every connection with these settings (and their session cache).
    pub(crate) config: Arc<rustls::ClientConfig>,
    /// SNI and the name verified in the server's certificate.
    pub(crate) server_name: rustls_pki_types::ServerName<'static>,
    /// The server name as the spec writes it (`server_name`, or the URL's host), before
    /// `${VAR}` interpolation, for reports: `(from the environment)` when the URL's host comes
    /// from a variable.
    pub(crate) server_name_text: String,
    /// Certificates are not verified (`insecure_skip_verify`): reports say so.
    pub(crate) insecure_skip_verify: bool,
}

/// The protocol of `target` (at `path`, its URL `url`): its own `protocol`; else `grpc` for a
/// target with `grpc:`, `ws` for one with `ws:` or a `ws://`/`wss://` URL; else
/// `defaults.protocol` (`default`); else `auto`. `None` (the error recorded) when the
/// protocol and the target disagree: `grpc:` without `protocol: grpc`, say.
fn protocol_of(
    target: &spec::Target,
    url: &HttpUrl,
    default: Option<Protocol>,
    path: &str,
    errors: &mut Errors,
) -> Option<Protocol> {
    let implied = if target.grpc.is_some() {
        Some(Protocol::Grpc)
    } else if target.ws.is_some() || url.websocket {
        Some(Protocol::Ws)
    } else {
        None
    };
    let protocol = target
        .protocol
        .or(implied)
        .or(default)
        .unwrap_or(Protocol::Auto);
    let problem = match (protocol, implied) {
        (Protocol::Grpc, None) => {
            Some("`protocol: grpc` needs `grpc:` (the method and its `.proto` files)")
        }
        (Protocol::Ws, None) => {
            Some("`protocol: ws` needs `ws:` (what each request sends or receives)")
        }
        (Protocol::Ws, Some(Protocol::Ws)) if target.ws.is_none() => {
            Some("a `ws://` or `wss://` target needs `ws:` (what each request sends or receives)")
        }
        (p, Some(wanted)) if p != wanted => Some(if wanted == Protocol::Grpc {
            "a target with `grpc:` speaks `protocol: grpc`"
        } else {
            "a WebSocket target (`ws:`, `ws://`, `wss://`) speaks `protocol: ws`"
        }),
        _ => None,
    };
    if let Some(problem) = problem {
        errors.push(format!("{path}.protocol"), problem);
        return None;
    }
    Some(protocol)
}

/// What a target's transport is chosen from.
#[derive(Clone, Copy)]
pub(super) struct TransportOf<'a> {
    /// The whole spec, for `defaults.protocol` and `defaults.tls`.
    pub(super) spec: &'a Spec,
    /// The target, for its `protocol` and `tls`.
    pub(super) target: &'a spec::Target,
    /// Its field path, e.g. `targets[1]`.
    pub(super) path: &'a str,
    /// Its URL, resolved.
    pub(super) url: &'a HttpUrl,
}

/// The targets' transports, each built once: targets with equal settings share one (and so
/// their connections and TLS sessions).
#[derive(Default)]
pub(super) struct Transports {
    /// (protocol, TLS settings and server name, or `None` for cleartext) -> transport;
    /// `None` when building it failed (the error is reported once).
    built: Vec<(TransportKey, Option<Arc<TransportPlan>>)>,
}

type TransportKey = (Protocol, Option<(tls::TlsSettings, String)>);

impl Transports {
    /// The transport of `of.target`; problems go to `errors`, at `of.path`.
    pub(super) fn get(
        &mut self,
        of: &TransportOf<'_>,
        ctx: &BuildContext<'_>,
        errors: &mut Errors,
    ) -> Option<Arc<TransportPlan>> {
        let TransportOf {
            spec,
            target,
            path,
            url,
        } = *of;
        let protocol = protocol_of(target, url, spec.defaults.protocol, path, errors)?;
        if !url.https {
            if protocol == Protocol::H3 {
                errors.push(
                    format!("{path}.protocol"),
                    "HTTP/3 runs over QUIC, which is always encrypted: use an https:// URL",
                );
                return None;
            }
            if target.tls.is_some() {
                errors.push(
                    format!("{path}.tls"),
                    "`tls` is for https:// URLs; this target's URL is http://",
                );
                return None;
            }
            return self.cleartext(protocol);
        }
        let sources = TlsSources {
            own: target.tls.as_ref(),
            shared: spec.defaults.tls.as_ref(),
            path,
        };
        let (settings, name, server_name) = tls_settings(&sources, protocol, url, ctx, errors)?;
        self.tls(&sources, settings, name, server_name, errors)
    }

    /// The cleartext transport speaking `protocol`.
    fn cleartext(&mut self, protocol: Protocol) -> Option<Arc<TransportPlan>> {
        let key = (protocol, None);
        if let Some(built) = self.find(&key) {
            return built;
        }
        let built = Some(Arc::new(TransportPlan {
            protocol,
            tls: None,
            quic: None,
        }));
        self.built.push((key, built.clone()));
        built
    }

    /// The TLS transport with `settings`, asking for `name` (interpolated, and as written);
    /// its client configuration is built once for equal settings, whatever the name.
    fn tls(
        &mut self,
        sources: &TlsSources<'_>,
        settings: tls::TlsSettings,
        name: ServerNameText,
        server_name: rustls_pki_types::ServerName<'static>,
        errors: &mut Errors,
    ) -> Option<Arc<TransportPlan>> {
        let protocol = settings.protocol;
        let key = (protocol, Some((settings.clone(), name.name.clone())));
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
        let built = config
            .map_or_else(|| tls::client_config(&settings).map(Arc::new), Ok)
            .and_then(|config| {
                let quic = match protocol {
                    Protocol::H3 => Some(tls::quic_client_config(&config)?),
                    _ => None,
                };
                Ok((config, quic))
            });
        let built = match built {
            Ok((config, quic)) => Some(Arc::new(TransportPlan {
                protocol,
                quic,
                tls: Some(TlsPlan {
                    config,
                    server_name,
                    server_name_text: name.shown,
                    insecure_skip_verify: settings.insecure_skip_verify,
                }),
            })),
            Err(e) => {
                // The file as the spec writes it (before `${VAR}` interpolation).
                let message = match sources.file_as_written(e.field) {
                    Some(file) => format!("`{file}` {}", e.message),
                    None => e.message,
                };
                errors.push(sources.field_path(e.field), message);
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

/// Where a target's TLS settings come from: its own `tls` block, else `defaults.tls`.
struct TlsSources<'a> {
    own: Option<&'a spec::Tls>,
    shared: Option<&'a spec::Tls>,
    /// The target's field path, e.g. `targets[1]`.
    path: &'a str,
}

impl<'a> TlsSources<'a> {
    /// The setting that `get` reads: the target's, else the defaults', with the field path
    /// it came from.
    fn pick<T>(
        &self,
        field: &str,
        get: impl Fn(&'a spec::Tls) -> Option<&'a T>,
    ) -> Option<(&'a T, String)> {
        self.own
            .and_then(&get)
            .map(|v| (v, format!("{}.tls.{field}", self.path)))
            .or_else(|| {
                self.shared
                    .and_then(&get)
                    .map(|v| (v, format!("defaults.tls.{field}")))
            })
    }

    /// A file setting, interpolated and resolved against the spec's folder, with the field
    /// path it came from.
    fn file(
        &self,
        field: &str,
        get: fn(&spec::Tls) -> Option<&String>,
        ctx: &BuildContext<'_>,
        errors: &mut Errors,
    ) -> Option<(PathBuf, String)> {
        self.pick(field, get).and_then(|(name, at)| {
            errors
                .interpolate(&at, name, ctx)
                .map(|name| (ctx.spec_dir.join(name), at))
        })
    }

    /// The file setting `field` (`ca_file`, `client_cert`, `client_key`) as the spec writes it;
    /// `None` for other fields.
    fn file_as_written(&self, field: &str) -> Option<&'a String> {
        let get = match field {
            "ca_file" => |t: &'a spec::Tls| t.ca_file.as_ref(),
            "client_cert" => |t: &'a spec::Tls| t.client_cert.as_ref(),
            "client_key" => |t: &'a spec::Tls| t.client_key.as_ref(),
            _ => return None,
        };
        self.pick(field, get).map(|(file, _)| file)
    }

    /// Where to report a problem with the configuration: the field it is about, as given,
    /// else the target's `tls` block.
    fn field_path(&self, field: &str) -> String {
        self.pick(field, |t| match field {
            "ca_file" => t.ca_file.as_ref().map(|_| &()),
            "client_cert" => t.client_cert.as_ref().map(|_| &()),
            "client_key" => t.client_key.as_ref().map(|_| &()),
            "roots" => t.roots.as_ref().map(|_| &()),
            "min_version" => t.min_version.as_ref().map(|_| &()),
            "ciphers" => t.ciphers.as_ref().map(|_| &()),
            _ => None,
        })
        .map_or_else(|| format!("{}.tls", self.path), |(_, at)| at)
    }
}

/// A target's TLS settings, every default applied, with the server name to ask for (as text
/// and parsed).
/// A TLS server name: as sent (interpolated) and as the spec writes it (safe to print).
struct ServerNameText {
    name: String,
    shown: String,
}

fn tls_settings(
    sources: &TlsSources<'_>,
    protocol: Protocol,
    url: &HttpUrl,
    ctx: &BuildContext<'_>,
    errors: &mut Errors,
) -> Option<(
    tls::TlsSettings,
    ServerNameText,
    rustls_pki_types::ServerName<'static>,
)> {
    let ca_file = sources.file("ca_file", |t| t.ca_file.as_ref(), ctx, errors);
    let client_cert = sources.file("client_cert", |t| t.client_cert.as_ref(), ctx, errors);
    let client_key = sources.file("client_key", |t| t.client_key.as_ref(), ctx, errors);
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
    let roots = sources
        .pick("roots", |t| t.roots.as_ref())
        .map(|(r, _)| *r)
        .unwrap_or(if ca_file.is_some() {
            TlsRoots::None
        } else {
            TlsRoots::Webpki
        });
    let ciphers = match sources.pick("ciphers", |t| t.ciphers.as_ref()) {
        Some((names, at)) => match tls::cipher_suites(names) {
            Ok(suites) => Some(suites),
            Err((i, message)) => {
                errors.push(format!("{at}[{i}]"), message);
                return None;
            }
        },
        None => None,
    };
    let settings = tls::TlsSettings {
        roots,
        ca_file: ca_file.as_ref().map(|(file, _)| file.clone()),
        client_auth,
        insecure_skip_verify: sources
            .pick("insecure_skip_verify", |t| t.insecure_skip_verify.as_ref())
            .is_some_and(|(v, _)| *v),
        min_version: sources
            .pick("min_version", |t| t.min_version.as_ref())
            .map_or(TlsVersion::V1_2, |(v, _)| *v),
        ciphers,
        resumption: sources
            .pick("resumption", |t| t.resumption.as_ref())
            .is_none_or(|(v, _)| *v),
        protocol,
    };
    // As written: the spec's `server_name`, or the URL's host when the spec writes it.
    let (name, shown, name_at) = match sources.pick("server_name", |t| t.server_name.as_ref()) {
        Some((name, at)) => (errors.interpolate(&at, name, ctx)?, Some(name.as_str()), at),
        None => (
            url.endpoint.host.clone(),
            (!url.endpoint_from_env).then_some(url.endpoint.host.as_str()),
            format!("{}.url", sources.path),
        ),
    };
    match tls::server_name(&name) {
        Ok(server_name) => {
            let shown = shown.map_or_else(|| "(from the environment)".to_string(), str::to_string);
            Some((settings, ServerNameText { name, shown }, server_name))
        }
        Err(e) => {
            let shown = tls::name_in_message(shown);
            errors.push(name_at, format!("{shown}: {}", e.message));
            None
        }
    }
}
