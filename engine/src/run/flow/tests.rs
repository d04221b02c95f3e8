//! Flows run for real, before the spec can say them: a plan of two targets turned by hand into
//! a login → me flow, run against a small HTTP/1.1 server on loopback that sets a session
//! cookie per user and logs what each request carried.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use crate::measure::IterationFailure;
use crate::plan::flow::{
    DataOrder, DataPlan, Extractor, OnError, Part, RequestTemplate, Source, StepPlan,
};
use crate::plan::{FlowPlan, Plan};

/// What the server saw of each `GET /me`: the `Cookie` and `Authorization` headers.
type Log = Arc<Mutex<Vec<(String, String)>>>;

/// `POST /login` with body `user=NAME`: 200 `{"token":"tok-NAME"}` and a `session=sid-NAME`
/// cookie. `GET /me`: 200 with a session cookie, else 401; logged.
fn server() -> (SocketAddr, Log) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let log: Log = Arc::default();
    let for_server = log.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let log = for_server.clone();
            std::thread::spawn(move || serve(stream, &log));
        }
    });
    (addr, log)
}

fn serve(stream: TcpStream, log: &Log) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let (mut length, mut cookie, mut auth) = (0, String::new(), String::new());
        loop {
            let mut header = String::new();
            reader.read_line(&mut header).unwrap();
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(": ").unwrap();
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.parse().unwrap(),
                "cookie" => cookie = value.to_string(),
                "authorization" => auth = value.to_string(),
                _ => {}
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let response = if line.starts_with("POST /login ") {
            let user = String::from_utf8(body).unwrap().replace("user=", "");
            let json = format!("{{\"token\":\"tok-{user}\"}}");
            format!(
                "HTTP/1.1 200 OK\r\nSet-Cookie: session=sid-{user}; Path=/\r\n\
                 Content-Length: {}\r\n\r\n{json}",
                json.len()
            )
        } else {
            let status = if cookie.contains("session=") {
                200
            } else {
                401
            };
            log.lock().unwrap().push((cookie, auth));
            format!("HTTP/1.1 {status} X\r\nContent-Length: 2\r\n\r\nme")
        };
        out.write_all(response.as_bytes()).unwrap();
    }
}

fn lit(s: &str) -> Part {
    Part::Literal(s.as_bytes().into())
}

/// A plan of the flow `login → me` (→ `missing` when `third`, which uses a variable nothing
/// sets) against `addr`, `load` as the spec writes it, the data rows `users` given `order`.
fn plan(addr: SocketAddr, load: &str, users: &[&str], order: DataOrder, third: bool) -> Plan {
    let yaml = format!(
        "version: 1\nname: flow\ntargets:\n  - {{name: f/login, url: 'http://{addr}/login'}}\n  \
         - {{name: f/me, url: 'http://{addr}/me'}}\n  - {{name: f/missing, url: 'http://{addr}/me'}}\n\
         load:\n{load}"
    );
    let source = crate::spec::SourceSpec::parse(PathBuf::from("t.yaml"), yaml).unwrap();
    let spec = serde_json::from_value(source.value.clone()).unwrap();
    let ctx = crate::plan::BuildContext {
        source: source.text.as_bytes(),
        spec_dir: std::path::Path::new("."),
        var: &|_| None,
    };
    let mut plan = crate::plan::build(&spec, &ctx).unwrap();
    let host = format!(" HTTP/1.1\r\nHost: {addr}\r\n");
    let step = |name: &str, target, head: Vec<Part>, body: Vec<Part>, extract| StepPlan {
        target,
        url: url::Url::parse(&format!("http://{addr}/{name}")).unwrap(),
        template: RequestTemplate {
            content_length: !body.is_empty(),
            head,
            body,
        },
        extract,
        think_time: None,
        group: None,
    };
    let token = Extractor {
        slot: 1,
        source: Source::Json("/token".into()),
        default: None,
    };
    let mut steps = vec![
        step(
            "login",
            0,
            vec![lit(&format!("POST /login{host}"))],
            vec![lit("user="), Part::Var(0)],
            vec![token],
        ),
        step(
            "me",
            1,
            vec![
                lit(&format!("GET /me{host}Authorization: Bearer ")),
                Part::Var(1),
                lit("\r\n"),
            ],
            vec![],
            vec![],
        ),
    ];
    if third {
        steps.push(step(
            "missing",
            2,
            vec![lit("GET /"), Part::Var(2), lit(&host)],
            vec![],
            vec![],
        ));
    }
    for t in &mut plan.targets {
        t.weight = 0;
    }
    plan.flows = vec![FlowPlan {
        name: "f".into(),
        weight: 1,
        steps,
        on_error: OnError::NextIteration,
        cookies: true,
        data: Some(DataPlan {
            order,
            rows: users.iter().map(|u| vec![u.to_string()].into()).collect(),
        }),
        vars: vec!["user".into(), "token".into(), "nothing".into()],
        tags: Default::default(),
    }];
    plan
}

fn run(plan: &Plan) -> super::super::RunOutput {
    super::super::execute(plan, Arc::new(AtomicBool::new(false)), &mut |_| {}).unwrap()
}

#[test]
fn each_row_once_then_the_run_ends_with_cookies_kept_per_user() {
    let (addr, log) = server();
    let load = "  connections: 2\n  duration: 20s\n";
    let plan = plan(addr, load, &["ann", "bob", "cy"], DataOrder::Once, false);
    let started = std::time::Instant::now();
    let output = run(&plan);
    assert!(
        started.elapsed().as_secs() < 10,
        "the rows ran out: the run ended"
    );
    assert!(output.elapsed.as_secs() < 10, "{:?}", output.elapsed);
    let flow = &output.flows[0];
    assert_eq!((flow.passed, flow.failed_count()), (3, 0));
    assert_eq!(output.targets[1].status[200], 3);
    let mut seen = log.lock().unwrap().clone();
    seen.sort();
    let want: Vec<_> = ["ann", "bob", "cy"]
        .iter()
        .map(|u| (format!("session=sid-{u}"), format!("Bearer tok-{u}")))
        .collect();
    assert_eq!(
        seen, want,
        "each iteration sends its own user's cookie and token"
    );
}

#[test]
fn sequential_rows_wrap_and_a_missing_variable_fails_only_its_iteration() {
    let (addr, log) = server();
    let load = "  connections: 2\n  requests: 10\n";
    let plan = plan(addr, load, &["ann", "bob"], DataOrder::Sequential, true);
    let output = run(&plan);
    let flow = &output.flows[0];
    assert_eq!(flow.iterations(), 10, "`requests` counts iterations");
    assert_eq!(flow.failed[IterationFailure::MissingVariable as usize], 10);
    assert_eq!(flow.passed, 0);
    assert_eq!(output.targets[0].status[200], 10);
    assert_eq!(output.targets[1].status[200], 10);
    let sent: u64 = output.targets[2].status.iter().sum();
    assert_eq!(sent, 0, "a missing variable sends nothing");
    let anns = log
        .lock()
        .unwrap()
        .iter()
        .filter(|(c, _)| c == "session=sid-ann")
        .count();
    assert_eq!(anns, 5, "rows handed out in turn");
}

#[test]
fn open_model_runs_iterations_at_the_rate() {
    let (addr, _log) = server();
    let load = "  model: open\n  rate: 50/s\n  max_in_flight: 4\n  duration: 1s\n";
    let plan = plan(addr, load, &["ann"], DataOrder::Random, false);
    let output = run(&plan);
    let flow = &output.flows[0];
    assert!(
        (40..=60).contains(&flow.iterations()),
        "{}",
        flow.iterations()
    );
    assert_eq!(flow.failed_count(), 0);
    assert_eq!(output.targets[0].status[200], flow.iterations());
}

#[test]
fn a_rendered_request_in_its_http2_form() {
    let addr: SocketAddr = "127.0.0.1:9".parse().unwrap();
    let plan = plan(
        addr,
        "  connections: 1\n  requests: 1\n",
        &[],
        DataOrder::Once,
        false,
    );
    let bytes = b"POST /login?a=1 HTTP/1.1\r\nHost: 127.0.0.1:9\r\nUser-Agent: lg\r\n\
        Connection: keep-alive\r\nCookie: s=1\r\nContent-Length: 8\r\n\r\nuser=ann";
    let (request, body) =
        super::super::multiplexed::rendered_request(&plan.targets[0], bytes).unwrap();
    assert_eq!(request.method(), "POST");
    assert_eq!(request.uri().to_string(), "http://127.0.0.1:9/login?a=1");
    let headers = request.headers();
    assert_eq!(headers["cookie"], "s=1");
    assert_eq!(headers["user-agent"], "lg");
    assert_eq!(headers["content-length"], "8");
    assert!(!headers.contains_key("connection") && !headers.contains_key("host"));
    assert_eq!(&body[..], b"user=ann");
    let invalid = b"GET / HTTP/1.1\r\nX: a\x01b\r\n\r\n";
    assert!(super::super::multiplexed::rendered_request(&plan.targets[0], invalid).is_none());
}
