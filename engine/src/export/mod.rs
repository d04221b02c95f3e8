//! Metrics out: a run's result sent to Prometheus (remote write 1.0) or to an OpenTelemetry
//! Collector (OTLP/HTTP, JSON), for teams that keep their dashboards in Grafana: `loadgate run
//! --export KIND=URL` after the run, `loadgate export RESULT --to KIND=URL` for a stored result.
//!
//! - `series.rs`: the result as gauge series, named and labelled in Prometheus' conventions
//!   (the one list of what is exported, whatever the protocol);
//! - `prometheus.rs`: the remote write body (protobuf `WriteRequest`, snappy);
//! - `otlp.rs`: the OTLP/HTTP JSON body;
//! - `http.rs`: the POST, bounded in time and retried a bounded number of times.
//!
//! An export runs after the result is written and never changes a run's exit code: a failure
//! is one line on stderr, and [`send`] counts it. URLs are printed without their user,
//! password and query (where tokens hide).

mod http;
mod otlp;
mod prometheus;
mod series;

use std::fmt;
use std::str::FromStr;

use crate::result::RunResult;

/// The environment variable of extra request headers for every export, e.g. an
/// `Authorization` or a tenant header: `Name=value` pairs separated by commas (the form of
/// OpenTelemetry's `OTEL_EXPORTER_OTLP_HEADERS`), values taken as written. Never printed.
pub(crate) const HEADERS_VAR: &str = "LOADGATE_EXPORT_HEADERS";

/// Where metrics go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Prometheus remote write 1.0: a `/api/v1/write` URL (Prometheus with
    /// `--web.enable-remote-write-receiver`, Mimir, Thanos receive, VictoriaMetrics ...).
    Prometheus,
    /// OTLP/HTTP metrics, JSON: a collector's `/v1/metrics` URL (a URL without a path gets
    /// `/v1/metrics`).
    Otlp,
}

impl Kind {
    /// `prometheus` or `otlp`, as `--export` names it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Prometheus => "prometheus",
            Kind::Otlp => "otlp",
        }
    }
}

/// One `--export KIND=URL` (`--to` of `loadgate export`), parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Destination {
    /// The protocol.
    pub(crate) kind: Kind,
    /// Where it is sent: an `http` or `https` URL with a host.
    pub(crate) url: url::Url,
}

/// A `KIND=URL` that cannot be used (exit 2). The messages never quote the URL: it may hold a
/// password or a token.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DestinationError {
    /// No `=`.
    #[error("an export is KIND=URL (KIND: prometheus or otlp)")]
    Form,
    /// A kind other than `prometheus` and `otlp`.
    #[error("unknown export kind `{0}`: prometheus or otlp")]
    Kind(String),
    /// A URL that does not parse, or is not http(s) with a host.
    #[error("the URL of export `{kind}` is not an http or https URL with a host ({reason})")]
    Url {
        /// `prometheus` or `otlp`.
        kind: &'static str,
        /// What is wrong with it.
        reason: String,
    },
}

impl FromStr for Destination {
    type Err = DestinationError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (kind, url) = text.split_once('=').ok_or(DestinationError::Form)?;
        let kind = match kind.trim() {
            "prometheus" => Kind::Prometheus,
            "otlp" => Kind::Otlp,
            other => return Err(DestinationError::Kind(crate::spec::printable(other))),
        };
        let bad = |reason: String| DestinationError::Url {
            kind: kind.name(),
            reason,
        };
        let mut url = url::Url::parse(url.trim()).map_err(|e| bad(e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(bad(format!("scheme `{}`", url.scheme())));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(bad("no host".into()));
        }
        if kind == Kind::Otlp && url.path() == "/" {
            url.set_path("/v1/metrics");
        }
        Ok(Destination { kind, url })
    }
}

impl fmt::Display for Destination {
    /// `KIND URL`, the URL without its user, password, query and fragment: `***` stands for
    /// each part left out.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let url = &self.url;
        let user = if url.username().is_empty() && url.password().is_none() {
            ""
        } else {
            "***@"
        };
        let place = &url[url::Position::BeforeHost..url::Position::AfterPath];
        let query = if url.query().is_some() { "?***" } else { "" };
        write!(
            f,
            "{} {}://{user}{place}{query}",
            self.kind.name(),
            url.scheme()
        )
    }
}

/// Parses each `KIND=URL`.
pub(crate) fn destinations(texts: &[String]) -> Result<Vec<Destination>, DestinationError> {
    texts.iter().map(|t| t.parse()).collect()
}

/// Sends `result` to each of `destinations`, one after another, and says on stderr how each
/// went. `env` looks up [`HEADERS_VAR`]. Returns how many exports failed; it never fails
/// itself, and each export ends within its bounds (`http.rs`).
pub(crate) fn send(
    result: &RunResult,
    destinations: &[Destination],
    env: &dyn Fn(&str) -> Option<String>,
) -> usize {
    if destinations.is_empty() {
        return 0;
    }
    let prepared = series::series(result)
        .map_err(|e| format!("the result's started_at: {e}"))
        .and_then(|s| Ok((s, extra_headers(env(HEADERS_VAR).as_deref())?)));
    let (all, extra) = match prepared {
        Ok(p) => p,
        Err(reason) => {
            for d in destinations {
                eprintln!("loadgate: export to {d} failed: {reason}");
            }
            return destinations.len();
        }
    };
    let agent = http::agent();
    let samples: usize = all.iter().map(|s| s.points.len()).sum();
    let mut failed = 0;
    for destination in destinations {
        match send_one(&agent, destination, &all, &extra) {
            Ok(()) => eprintln!(
                "loadgate: exported {} series ({samples} samples) to {destination}",
                all.len()
            ),
            Err(reason) => {
                failed += 1;
                eprintln!("loadgate: export to {destination} failed: {reason}");
            }
        }
    }
    failed
}

/// The requests of one destination, in turn; the first that fails ends it.
fn send_one(
    agent: &ureq::Agent,
    destination: &Destination,
    all: &[series::Series],
    extra: &[(String, String)],
) -> Result<(), String> {
    for batch in series::batches(all) {
        let (body, headers): (Vec<u8>, &[(&str, &str)]) = match destination.kind {
            Kind::Prometheus => (prometheus::body(batch), &prometheus::HEADERS),
            Kind::Otlp => (otlp::body(batch), &otlp::HEADERS),
        };
        let post = http::Post {
            url: destination.url.as_str(),
            headers,
            extra,
            body: &body,
        };
        let answer = http::send(agent, &post).map_err(|e| e.to_string())?;
        if destination.kind == Kind::Otlp {
            otlp::check_answer(&answer)?;
        }
    }
    Ok(())
}

/// The headers of [`HEADERS_VAR`]: `Name=value` pairs separated by commas, blanks around
/// each trimmed. Errors name the pair by its place, never its value.
fn extra_headers(text: Option<&str>) -> Result<Vec<(String, String)>, String> {
    let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
        return Ok(Vec::new());
    };
    text.split(',')
        .enumerate()
        .map(|(i, pair)| {
            pair.split_once('=')
                .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
                .filter(|(n, _)| !n.is_empty())
                .ok_or_else(|| format!("{HEADERS_VAR}: pair {} is not Name=value", i + 1))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destinations_parse_and_print_without_secrets() {
        let d: Destination =
            "prometheus=https://me:s3cret@prom.example:9090/api/v1/write?token=abc"
                .parse()
                .unwrap();
        assert_eq!(d.kind, Kind::Prometheus);
        let shown = d.to_string();
        assert_eq!(
            shown,
            "prometheus https://***@prom.example:9090/api/v1/write?***"
        );
        assert!(!shown.contains("s3cret") && !shown.contains("abc"));
        let otlp: Destination = "otlp=http://127.0.0.1:4318".parse().unwrap();
        assert_eq!(otlp.url.as_str(), "http://127.0.0.1:4318/v1/metrics");
        let kept: Destination = "otlp=http://c:4318/custom/metrics".parse().unwrap();
        assert_eq!(kept.url.path(), "/custom/metrics");
    }

    #[test]
    fn bad_destinations_are_refused_without_quoting_the_url() {
        for (text, expected) in [
            ("prometheus", "an export is KIND=URL"),
            ("graphite=http://x/", "unknown export kind `graphite`"),
            ("otlp=ftp://user:pw@x/", "scheme `ftp`"),
            ("otlp=not a url pw", "not an http or https URL"),
        ] {
            let error = text.parse::<Destination>().unwrap_err().to_string();
            assert!(error.contains(expected), "{text}: {error}");
            assert!(!error.contains("pw"), "{text}: {error}");
        }
    }

    #[test]
    fn extra_headers_are_name_value_pairs() {
        assert_eq!(extra_headers(None).unwrap(), vec![]);
        assert_eq!(
            extra_headers(Some("Authorization=Bearer a=b, X-Scope-OrgID = team")).unwrap(),
            vec![
                ("Authorization".to_string(), "Bearer a=b".to_string()),
                ("X-Scope-OrgID".to_string(), "team".to_string()),
            ]
        );
        let error = extra_headers(Some("A=1,secret")).unwrap_err();
        assert_eq!(error, "LOADGATE_EXPORT_HEADERS: pair 2 is not Name=value");
    }
}
