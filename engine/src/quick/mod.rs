//! One-line runs: `loadgate quick [FLAGS] URL...` (the flags of hey, oha, vastar, rewrk,
//! loadgen-rs and fun-bomb) and `loadgate curl [FLAGS] -- curl ...` (a browser's "Copy as
//! cURL", plt).
//!
//! Each builds a spec, YAML text (`spec_text`), from its flags and runs it through exactly
//! the pipeline of `loadgate run SPEC`: `SourceSpec::parse` → `validate::check` →
//! `pipeline::run_plan` (run → result → verdict). `--emit-spec` prints that text, so an ad-hoc
//! run becomes a CI gate unchanged. Several URLs run one after another (`--delay` between
//! them), each `--rounds` times (`rounds`: the summary across rounds). The printed spec is that
//! text under the schema modeline, with the blocks that make it a gate (`gate`).

mod curl;
mod gate;
mod rounds;
mod spec_text;

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::compare::gate::Outcome;
use crate::options::{CurlOptions, LoadOptions, PlanRunOptions, QuickOptions, RequestOptions};
use crate::pipeline::{env_var, run_plan};
use crate::report::lines::LineSink;
use crate::signal::Interrupt;
use crate::{run, spec, validate};
use spec_text::{Built, Protocol, Request};

/// The name of a one-line run's spec in diagnostics; its relative files (`-D`, `--cacert`)
/// are relative to the current folder.
const SPEC_PATH: &str = "(spec of the flags)";

/// Flags or a curl command that cannot make a run (exit 2).
#[derive(Debug, thiserror::Error)]
pub(crate) enum QuickError {
    /// Flags that do not go together, or a value that cannot be used.
    #[error("{0}")]
    Flags(String),
    /// A curl command that cannot be read or has an option loadgate does not take.
    #[error("curl command: {0}")]
    Curl(String),
}

/// `loadgate quick`.
pub(crate) fn quick(args: &QuickOptions) -> anyhow::Result<Outcome> {
    let requests = args
        .urls
        .iter()
        .map(|url| request_of(&args.request, url))
        .collect::<Result<Vec<_>, _>>()?;
    run_requests(&requests, &args.load)
}

/// `loadgate curl`.
pub(crate) fn curl(args: &CurlOptions) -> anyhow::Result<Outcome> {
    let request = curl::parse(&args.command)?;
    run_requests(&[request], &args.load)
}

/// The request of `quick`'s flags for `url`.
fn request_of(flags: &RequestOptions, url: &str) -> Result<Request, QuickError> {
    let mut headers = Vec::new();
    for header in &flags.headers {
        let (name, value) = header.split_once(':').ok_or_else(|| {
            QuickError::Flags(format!(
                "-H {}: expected `Name: value`",
                shown_header(header)
            ))
        })?;
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }
    // A header given with -H wins over -T and -A (as in hey), never joined with them.
    let given = |name: &str| headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    let mut implied = Vec::new();
    if let Some(t) = &flags.content_type
        && !given("Content-Type")
    {
        implied.push(("Content-Type".to_string(), t.clone()));
    }
    if let Some(a) = &flags.accept
        && !given("Accept")
    {
        implied.push(("Accept".to_string(), a.clone()));
    }
    headers.extend(implied);
    if let Some(credentials) = &flags.basic_auth {
        headers.push(("Authorization".to_string(), basic(credentials)));
    }
    let path = |p: &PathBuf| p.to_string_lossy().into_owned();
    Ok(Request {
        method: flags.method.as_ref().map(|m| m.to_ascii_uppercase()),
        url: url.to_string(),
        headers,
        body: flags.body.clone(),
        body_file: flags.body_file.as_ref().map(path),
        protocol: protocol_of(flags),
        insecure: flags.insecure,
        ca_file: flags.cacert.as_ref().map(path),
        tls_ciphers: flags.tls_ciphers.clone(),
        compression: flags.disable_compression.then_some(false),
        redirects: flags.redirects.or(flags.disable_redirects.then_some(0)),
    })
}

/// The protocol of `--http1.1`, `--http2`, `--http3` (clap lets one through at most).
fn protocol_of(flags: &RequestOptions) -> Option<Protocol> {
    [
        (flags.http1_1, Protocol::H1),
        (flags.http2, Protocol::H2),
        (flags.http3, Protocol::H3),
    ]
    .into_iter()
    .find_map(|(given, protocol)| given.then_some(protocol))
}

/// `Basic` and the base64 of `user:pass` (RFC 7617).
pub(crate) fn basic(credentials: &str) -> String {
    use base64::Engine as _;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(credentials)
    )
}

/// A header as given (`Name: value`, or a word without `:`) for a message: `` `text` ``, or
/// its first word alone when that names a secret header (`Private-Token` and no value).
pub(crate) fn shown_header(header: &str) -> String {
    let name = header
        .split(|c: char| c == ':' || c.is_whitespace())
        .next()
        .unwrap_or_default();
    if crate::spec::secrets::is_secret(name) {
        format!("`{name}` (its value not shown)")
    } else {
        format!("`{header}`")
    }
}

/// Builds each request's spec; prints them (`--emit-spec`) or runs them in turn.
fn run_requests(requests: &[Request], load: &LoadOptions) -> anyhow::Result<Outcome> {
    let built = requests
        .iter()
        .map(|r| spec_text::build(r, load))
        .collect::<Result<Vec<Built>, _>>()?;
    if load.emit_spec {
        let docs: Vec<String> = built.iter().map(emitted).collect();
        print!("{}", docs.join("---\n"));
        return Ok(Outcome::Passed);
    }
    let options = PlanRunOptions {
        quiet: load.quiet,
        no_color: load.no_color,
        ..PlanRunOptions::default()
    };
    let mut lines = LineSink::new(load.lines.format, load.lines.output.clone())?;
    let mut interrupt: Option<Interrupt> = None;
    let mut worst = Outcome::Passed;
    for (i, built) in built.iter().enumerate() {
        if i > 0
            && let Some(delay) = load.delay
            && wait_unless_stopped(delay, interrupt.as_ref())
        {
            return Ok(Outcome::Interrupted);
        }
        let plan = plan_of(built)?;
        if requests.len() > 1 {
            eprintln!(
                "loadgate: URL {} of {}: {}",
                i + 1,
                requests.len(),
                spec::printable(&built.url)
            );
        }
        if load.verbose {
            let sample = run::sample::sample(&plan.targets[0]);
            human(
                &lines,
                &sample.unwrap_or_else(|e| format!("sample request: {e}\n")),
            );
        }
        let mut results = Vec::with_capacity(load.rounds as usize);
        for round in 1..=load.rounds {
            if load.rounds > 1 {
                eprintln!("loadgate: round {round} of {}", load.rounds);
            }
            let (result, outcome) = run_plan(&plan, &options, &mut lines, &mut interrupt)?;
            worst = worse(worst, outcome);
            results.push(result);
            if outcome == Outcome::Interrupted {
                return Ok(outcome);
            }
        }
        if results.len() > 1 {
            human(&lines, &rounds::summary(&results));
        }
    }
    Ok(worst)
}

/// The spec `--emit-spec` prints for `built`: the modeline, the one-line run's spec, then the
/// gate's `slo:` and `regression:` blocks.
fn emitted(built: &Built) -> String {
    format!("{}{}{}", gate::modeline(), built.text, gate::blocks())
}

/// The plan of a built spec, read and validated as `loadgate run` reads a spec file; its
/// secret headers' variables come from `built`, then the environment.
fn plan_of(built: &Built) -> anyhow::Result<crate::plan::Plan> {
    let source = spec::SourceSpec::parse(PathBuf::from(SPEC_PATH), built.text.clone())?;
    let var = |name: &str| built.secrets.get(name).cloned().or_else(|| env_var(name));
    Ok(validate::check(&source, &var)?)
}

/// Prints `text` for a person: on stdout when it shows the text summaries, else on stderr.
fn human(lines: &LineSink, text: &str) {
    if lines.stdout_is_text() {
        print!("{text}");
    } else {
        eprint!("{text}");
    }
}

/// Waits `delay`, or less when Ctrl-C is pressed: then returns true.
fn wait_unless_stopped(delay: Duration, interrupt: Option<&Interrupt>) -> bool {
    let end = Instant::now() + delay;
    loop {
        if interrupt.is_some_and(|i| i.stop.load(Ordering::Relaxed)) {
            return true;
        }
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}

/// The outcome of several runs: the most serious of `a` and `b` (interrupted, then an
/// invalid measurement, a failed SLO, a regression, passed).
fn worse(a: Outcome, b: Outcome) -> Outcome {
    let rank = |o: Outcome| match o {
        Outcome::Passed => 0,
        Outcome::Regressed => 1,
        Outcome::SloFailed => 2,
        Outcome::InvalidMeasurement => 3,
        Outcome::Interrupted => 4,
    };
    if rank(b) > rank(a) { b } else { a }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_auth_is_base64_of_user_and_password() {
        // RFC 7617 §2's example.
        assert_eq!(
            basic("Aladdin:open sesame"),
            "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="
        );
    }

    /// The cases of `the_printed_spec_plans_the_same_load`, each with the protocol its plan
    /// asks for (`spec::Protocol`'s name).
    fn printed_spec_cases() -> Vec<(QuickOptions, &'static str)> {
        let text = |t: &str| Some(t.to_string());
        let cases = vec![
            QuickOptions {
                request: RequestOptions {
                    method: text("post"),
                    body: text("{}"),
                    basic_auth: text("u:p"),
                    http1_1: true,
                    ..RequestOptions::default()
                },
                load: LoadOptions {
                    requests: Some(300),
                    connections: Some(7),
                    timeout: text("3s"),
                    ..LoadOptions::default()
                },
                ..QuickOptions::default()
            },
            QuickOptions {
                request: RequestOptions {
                    http2: true,
                    ..RequestOptions::default()
                },
                load: LoadOptions {
                    duration: text("2s"),
                    rate: Some(150.0),
                    connections: Some(20),
                    warmup: text("1s"),
                    streams: Some(4),
                    ..LoadOptions::default()
                },
                ..QuickOptions::default()
            },
            QuickOptions {
                load: LoadOptions {
                    duration: text("3s"),
                    ramp_up: text("1s"),
                    connections: Some(5),
                    rps: Some(20.0),
                    status_code: Some(204),
                    ..LoadOptions::default()
                },
                ..QuickOptions::default()
            },
            QuickOptions {
                urls: vec!["https://127.0.0.1:9/h3".to_string()],
                request: RequestOptions {
                    http3: true,
                    ..RequestOptions::default()
                },
                load: LoadOptions {
                    streams: Some(8),
                    ..LoadOptions::default()
                },
            },
        ];
        // The plan's protocol (`spec::Protocol`) of each case, by name.
        cases.into_iter().zip(["H1", "H2", "Auto", "H3"]).collect()
    }

    /// The plan of a one-line run and the plan of its printed spec, saved to a file and read
    /// as `loadgate run` reads it (the secret given in the environment), are the same load:
    /// same load plan, same request bytes, timeout and protocol; the printed spec adds the
    /// gate, whose regression rules are loadgate's defaults. The options are those of
    /// `-n 300 -c 7 -m post -d {} -a u:p -t 3 --http1.1`, `-z 2s -q 150 -c 20 -w 1s --http2
    /// -p 4`, `-z 3s --ramp-up 1s -c 5 --rps 20 --status-code 204` and `--http3 -p 8` on an
    /// `https://` URL (`cli.rs` tests the parse).
    #[test]
    fn the_printed_spec_plans_the_same_load() {
        let cases = printed_spec_cases();
        let dir = tempfile::tempdir().unwrap();
        for (options, protocol) in &cases {
            let url = options
                .urls
                .first()
                .map_or("http://127.0.0.1:9/p?x=1", String::as_str);
            let request = request_of(&options.request, url).unwrap();
            let built = spec_text::build(&request, &options.load).unwrap();
            let quick = plan_of(&built).unwrap();

            let path = dir.path().join("printed.yaml");
            std::fs::write(&path, emitted(&built)).unwrap();
            let source = spec::SourceSpec::read(&path).unwrap();
            let env = |name: &str| built.secrets.get(name).cloned();
            let printed = validate::check(&source, &env).unwrap();

            assert_eq!(quick.load, printed.load, "{options:?}");
            assert_eq!(quick.name, printed.name);
            let (q, p) = (&quick.targets[0], &printed.targets[0]);
            assert_eq!(q.request, p.request, "{options:?}");
            assert_eq!(q.timeout, p.timeout);
            assert_eq!(q.transport.protocol, p.transport.protocol);
            assert_eq!(format!("{:?}", p.transport.protocol), *protocol);
            assert_eq!(q.expect_status, p.expect_status);
            // The gate: its SLOs, and the default rules written out.
            assert_eq!(printed.regression, quick.regression);
            assert_eq!(printed.regression_alpha, quick.regression_alpha);
            let slo: Vec<String> = printed.slo.iter().map(|t| t.expression.clone()).collect();
            assert_eq!(slo, [gate::GATE_LATENCY, gate::GATE_ERRORS], "{options:?}");
            assert!(
                quick.slo.iter().all(|t| t.default),
                "the one-line run does not gate"
            );
        }
        // The secret reached the request, not the text.
        let text = String::from_utf8_lossy(&{
            let request = RequestOptions {
                basic_auth: Some("u:p".to_string()),
                ..RequestOptions::default()
            };
            let built = spec_text::build(
                &request_of(&request, "http://127.0.0.1:9/").unwrap(),
                &LoadOptions::default(),
            )
            .unwrap();
            assert!(!built.text.contains("dTpw"));
            plan_of(&built).unwrap().targets[0].request.to_vec()
        })
        .into_owned();
        assert!(text.contains("Authorization: Basic dTpw\r\n"), "{text}");
    }

    #[test]
    fn the_most_serious_outcome_wins() {
        assert_eq!(
            worse(Outcome::Passed, Outcome::SloFailed),
            Outcome::SloFailed
        );
        assert_eq!(
            worse(Outcome::InvalidMeasurement, Outcome::SloFailed),
            Outcome::InvalidMeasurement
        );
    }
}
