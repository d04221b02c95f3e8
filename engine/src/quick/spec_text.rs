//! The spec (YAML text) that a one-line run stands for: `loadgate quick` and `loadgate curl`
//! build it from their flags, `--emit-spec` prints it, and the run reads it back through the
//! same `SourceSpec::parse` → `validate::check` as `loadgate run SPEC`.
//!
//! Strings are written as YAML double-quoted scalars (`yaml_str`), with `${` written `$${` so
//! that the spec's `${VAR}` interpolation leaves them as given. Secrets (`spec/secrets.rs`: the
//! values of secret headers and query parameters, a URL's `user:pass@`, which becomes an
//! `Authorization: Basic` header) are not in the text: it names a variable,
//! `${LOADGATE_AUTHORIZATION}`, `${LOADGATE_QUERY_ACCESS_TOKEN}`, whose value the one-line run
//! supplies and a user of the printed spec sets in the environment.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::QuickError;
use crate::options::LoadOptions;
use crate::spec::secrets::{self, SplitUrl};

/// The one-line run's default for `defaults.compression` (hey offers gzip).
pub(crate) const QUICK_COMPRESSION: bool = true;
/// The one-line run's default for `defaults.redirects` (hey and oha follow 10).
pub(crate) const QUICK_REDIRECTS: u32 = 10;
/// Connections when `-c` is not given (hey, oha: 50).
pub(crate) const QUICK_CONNECTIONS: u32 = 50;
/// Requests when neither `-n` nor `-z` is given (hey, oha: 200).
pub(crate) const QUICK_REQUESTS: u64 = 200;

/// One request of a one-line run, from `quick`'s flags or a curl command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Request {
    /// Upper-case method; `None`: GET.
    pub(crate) method: Option<String>,
    /// The URL as given.
    pub(crate) url: String,
    /// Headers in the order given, names as given; a repeated name (any case) is joined to
    /// the first with `, ` (`; ` for `Cookie`).
    pub(crate) headers: Vec<(String, String)>,
    /// Inline body.
    pub(crate) body: Option<String>,
    /// Body file, relative to the current folder.
    pub(crate) body_file: Option<String>,
    /// `defaults.protocol`; `None`: `h2` with `-p`, else the spec's default (`auto`).
    pub(crate) protocol: Option<Protocol>,
    /// `tls.insecure_skip_verify: true`.
    pub(crate) insecure: bool,
    /// `tls.ca_file`.
    pub(crate) ca_file: Option<String>,
    /// `tls.ciphers`.
    pub(crate) tls_ciphers: Vec<String>,
    /// `defaults.compression`; `None`: the one-line default, [`QUICK_COMPRESSION`].
    pub(crate) compression: Option<bool>,
    /// `defaults.redirects`; `None`: the one-line default, [`QUICK_REDIRECTS`].
    pub(crate) redirects: Option<u32>,
}

/// The protocol a one-line run asks for (`--http1.1`, `--http2`, `--http3`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocol {
    /// `protocol: h1`: HTTP/1.1, over TLS with ALPN `http/1.1` alone.
    H1,
    /// `protocol: h2`: HTTP/2 (TLS by ALPN, cleartext with prior knowledge).
    H2,
    /// `protocol: h3`: HTTP/3 over QUIC.
    H3,
}

impl Protocol {
    /// Its name in the spec.
    fn name(self) -> &'static str {
        match self {
            Protocol::H1 => "h1",
            Protocol::H2 => "h2",
            Protocol::H3 => "h3",
        }
    }
}

/// A built spec: its text, and the values of the variables it names for secrets.
#[derive(Debug, Clone)]
pub(crate) struct Built {
    /// The spec, YAML.
    pub(crate) text: String,
    /// The URL as the spec writes it (secrets as variables): what messages may show.
    pub(crate) url: String,
    /// `LOADGATE_AUTHORIZATION` → `Basic dXNlcjpwYXNz`, …: looked up before the environment.
    pub(crate) secrets: BTreeMap<String, String>,
}

/// Builds the spec of `request` under `load`. Errors: flags that do not go together (`--ramp-up` without
/// `-z`, …); every value is otherwise left to the spec's validation.
pub(crate) fn build(request: &Request, load: &LoadOptions) -> Result<Built, QuickError> {
    let mut out = String::new();
    let mut secrets = BTreeMap::new();
    let SplitUrl {
        written: url,
        credentials,
    } = secrets::split_url(&request.url, &mut secrets);
    let method = request.method.clone().unwrap_or_else(|| "GET".to_string());
    let _ = writeln!(out, "version: 1");
    // The URL's variables stay `${…}` as text in the names (`$${`), as variables in `url:`.
    let _ = writeln!(out, "name: {}", quoted(&format!("{method} {url}")));
    defaults(&mut out, request, load);
    let _ = writeln!(out, "targets:");
    let _ = writeln!(out, "  - name: {}", quoted(&target_name(&method, &url)));
    if request.method.is_some() {
        let _ = writeln!(out, "    method: {}", quoted(&method));
    }
    let _ = writeln!(out, "    url: {}", yaml_str(&url_text(&url, &secrets)));
    let mut given = request.headers.clone();
    // URL credentials, as curl sends them, unless an `Authorization` header is given.
    if let Some(credentials) = credentials
        && !given
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("authorization"))
    {
        given.push(("Authorization".to_string(), super::basic(&credentials)));
    }
    let headers = joined_headers(&given);
    if !headers.is_empty() {
        let _ = writeln!(out, "    headers:");
        for (name, value) in headers {
            let value = if secrets::is_secret(&name) {
                let var = secrets::variable("", &name, &value, &secrets);
                secrets.insert(var.clone(), value);
                format!("${{{var}}}")
            } else {
                escape(&value)
            };
            let _ = writeln!(
                out,
                "      {}: {}",
                quoted(&escape(&name)),
                yaml_str(&value)
            );
        }
    }
    if let Some(body) = &request.body {
        let _ = writeln!(out, "    body: {}", quoted(body));
    }
    if let Some(file) = &request.body_file {
        let _ = writeln!(out, "    body_file: {}", yaml_str(file));
    }
    if let Some(code) = load.status_code {
        let _ = writeln!(out, "    expect:\n      status: [{code}]");
    }
    load_block(&mut out, load)?;
    let mut text = String::new();
    if !secrets.is_empty() {
        let names: Vec<String> = secrets.keys().map(|k| format!("${{{k}}}")).collect();
        let _ = writeln!(
            text,
            "# Secret values are not printed: set {} in the environment.",
            names.join(", ")
        );
    }
    text.push_str(&out);
    Ok(Built { text, url, secrets })
}

/// The `defaults:` block: timeout, protocol, compression, redirects, keep-alive, TLS.
fn defaults(out: &mut String, request: &Request, load: &LoadOptions) {
    let mut lines = Vec::new();
    if let Some(t) = &load.timeout {
        lines.push(format!("timeout: {}", yaml_str(t)));
    }
    if let Some(t) = &load.connect_timeout {
        lines.push(format!("connect_timeout: {}", yaml_str(t)));
    }
    let streams = load.streams.is_some().then_some(Protocol::H2);
    if let Some(protocol) = request.protocol.or(streams) {
        lines.push(format!("protocol: {}", protocol.name()));
    }
    let compression = request.compression.unwrap_or(QUICK_COMPRESSION);
    if compression {
        lines.push("compression: true".to_string());
    }
    let redirects = request.redirects.unwrap_or(QUICK_REDIRECTS);
    if redirects > 0 {
        lines.push(format!("redirects: {redirects}"));
    }
    if load.disable_keepalive {
        lines.push("keep_alive: false".to_string());
    }
    if let Some(slow) = &load.slow {
        lines.push(format!("slow: {}", yaml_str(slow)));
    }
    let mut tls = Vec::new();
    if request.insecure {
        tls.push("insecure_skip_verify: true".to_string());
    }
    if let Some(ca) = &request.ca_file {
        tls.push(format!("ca_file: {}", yaml_str(ca)));
    }
    if !request.tls_ciphers.is_empty() {
        let names: Vec<String> = request.tls_ciphers.iter().map(|c| yaml_str(c)).collect();
        tls.push(format!("ciphers: [{}]", names.join(", ")));
    }
    if !tls.is_empty() {
        lines.push("tls:".to_string());
        lines.extend(tls.into_iter().map(|l| format!("  {l}")));
    }
    if !lines.is_empty() {
        let _ = writeln!(out, "defaults:");
        for line in lines {
            let _ = writeln!(out, "  {line}");
        }
    }
}

/// The `load:` block.
fn load_block(out: &mut String, load: &LoadOptions) -> Result<(), QuickError> {
    let _ = writeln!(out, "load:");
    let level = match load.rate {
        Some(rate) => {
            let _ = writeln!(out, "  model: open");
            if let Some(c) = load.connections {
                let _ = writeln!(out, "  max_in_flight: {c}");
            }
            format!("\"{rate}/s\"")
        }
        None => load.connections.unwrap_or(QUICK_CONNECTIONS).to_string(),
    };
    if let Some(streams) = load.streams {
        let _ = writeln!(out, "  streams: {streams}");
    }
    if let Some(rps) = load.rps {
        let _ = writeln!(out, "  pacing: \"{rps}/s\"");
    }
    if let Some(threads) = load.threads {
        let _ = writeln!(out, "  threads: {threads}");
    }
    let warmup = load.warmup.as_deref().map(warmup_value).transpose()?;
    match &load.ramp_up {
        None => {
            let key = if load.rate.is_some() {
                "rate"
            } else {
                "connections"
            };
            let _ = writeln!(out, "  {key}: {level}");
            if let Some(w) = warmup {
                let _ = writeln!(out, "  warmup: {w}");
            }
            match &load.duration {
                Some(d) => writeln!(out, "  duration: {}", yaml_str(d)),
                None => writeln!(
                    out,
                    "  requests: {}",
                    load.requests.unwrap_or(QUICK_REQUESTS)
                ),
            }
            .expect("writing to a String");
        }
        Some(ramp) => {
            let Some(duration) = &load.duration else {
                return Err(QuickError::Flags(
                    "--ramp-up needs -z (a run of a given duration)".to_string(),
                ));
            };
            let _ = writeln!(out, "  stages:");
            let mut stage = |d: &str, warmup: bool| {
                let _ = writeln!(
                    out,
                    "    - {{duration: {}, level: {level}{}}}",
                    yaml_str(d),
                    if warmup { ", warmup: true" } else { "" }
                );
            };
            stage(ramp, true);
            if let Some(w) = &warmup {
                if !w.starts_with('"') {
                    return Err(QuickError::Flags(
                        "with --ramp-up, give -w as a duration (`2s`), not a number of requests"
                            .to_string(),
                    ));
                }
                stage(&load.warmup.clone().unwrap_or_default(), true);
            }
            stage(duration, false);
        }
    }
    Ok(())
}

/// `-w`'s value in the spec: a number of requests (`100`) as a number, a duration (`2s`, or
/// `2.5` seconds) as a string.
fn warmup_value(text: &str) -> Result<String, QuickError> {
    let text = text.trim();
    if let Ok(count) = text.parse::<u64>() {
        return Ok(count.to_string());
    }
    crate::units::parse_duration(text)
        .map(|_| yaml_str(text))
        .map_err(|e| QuickError::Flags(format!("-w `{text}`: {e}; or a number of requests")))
}

/// A target's name: the method and the URL's path and query (`GET /users?page=2`); `url`
/// as written (secrets as variables).
fn target_name(method: &str, url: &str) -> String {
    let path = url::Url::parse(url).map_or_else(
        |_| url.to_string(),
        |u| match u.query() {
            Some(q) => format!("{}?{q}", u.path()),
            None => u.path().to_string(),
        },
    );
    format!("{method} {path}")
}

/// `url` (as written, its secrets as `${VAR}`s named in `secrets`) as the spec's `url:`
/// text: `${` escaped as `$${` everywhere but in those variables.
fn url_text(url: &str, secrets: &BTreeMap<String, String>) -> String {
    let mut text = escape(url);
    for var in secrets.keys() {
        text = text.replace(&format!("$${{{var}}}"), &format!("${{{var}}}"));
    }
    text
}

/// Headers with repeated names (any case) joined into the first: `, ` between values, `; `
/// for `Cookie` (RFC 9110 §5.3, RFC 6265 §5.4).
fn joined_headers(headers: &[(String, String)]) -> Vec<(String, String)> {
    let mut joined: Vec<(String, String)> = Vec::new();
    for (name, value) in headers {
        match joined
            .iter_mut()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
        {
            Some((n, v)) => {
                let sep = if n.eq_ignore_ascii_case("cookie") {
                    "; "
                } else {
                    ", "
                };
                v.push_str(sep);
                v.push_str(value);
            }
            None => joined.push((name.clone(), value.clone())),
        }
    }
    joined
}

/// `text` with `${` written `$${` (taken literally by the spec's interpolation), quoted.
fn quoted(text: &str) -> String {
    yaml_str(&escape(text))
}

/// `${` → `$${`.
fn escape(text: &str) -> String {
    text.replace("${", "$${")
}

/// `text` as a YAML double-quoted scalar: `"` and `\\` escaped, and every character that YAML
/// 1.2 does not count as printable (`c-printable`: controls, DEL, the C1 controls, U+FFFE,
/// U+FFFF), NEL, line breaks, tabs and the hidden characters (`spec::is_hidden`: bidirectional
/// controls, zero-width characters, the byte-order mark) written as `\\uXXXX`; the rest as is.
fn yaml_str(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        let printable = matches!(c, ' '..='~' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
            && !crate::spec::is_hidden(c);
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if printable => out.push(c),
            c => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(url: &str) -> Request {
        Request {
            url: url.to_string(),
            ..Request::default()
        }
    }

    #[test]
    fn the_one_line_defaults_offer_compression_and_follow_redirects() {
        let built = build(&request("http://127.0.0.1:1/"), &LoadOptions::default()).unwrap();
        assert!(
            built.text.contains("  compression: true\n"),
            "{}",
            built.text
        );
        assert!(built.text.contains("  redirects: 10\n"), "{}", built.text);
    }

    #[test]
    fn secret_headers_become_variables() {
        let mut r = request("http://127.0.0.1:1/");
        r.headers = vec![
            ("Cookie".into(), "a=1".into()),
            ("cookie".into(), "b=2".into()),
            ("X-Plain".into(), "cost ${HOME}".into()),
        ];
        let built = build(&r, &LoadOptions::default()).unwrap();
        assert!(
            built.text.contains("\"Cookie\": \"${LOADGATE_COOKIE}\""),
            "{}",
            built.text
        );
        assert!(!built.text.contains("a=1"), "{}", built.text);
        assert!(
            built.text.contains("\"X-Plain\": \"cost $${HOME}\""),
            "{}",
            built.text
        );
        assert_eq!(built.secrets["LOADGATE_COOKIE"], "a=1; b=2");
    }

    #[test]
    fn warmup_is_a_count_or_a_duration() {
        assert_eq!(warmup_value("100").unwrap(), "100");
        assert_eq!(
            yaml_str("a\"b\\c\td\u{7f}\u{85}é"),
            "\"a\\\"b\\\\c\\u0009d\\u007f\\u0085é\""
        );
        assert_eq!(yaml_str("a\u{202e}b"), "\"a\\u202eb\"");
        assert_eq!(warmup_value("2s").unwrap(), "\"2s\"");
        assert!(warmup_value("soon").is_err());
    }
}
