use std::rc::Rc;

use quinn::{ApplicationClose, ConnectionClose, ConnectionError as E, TransportErrorCode, VarInt};

use super::*;
use crate::run::slot::Slot;

fn h3(value: u64) -> Option<ErrorCode> {
    let space = CodeSpace::H3;
    Some(ErrorCode { space, value })
}

fn quic(value: u64) -> Option<ErrorCode> {
    let space = CodeSpace::Quic;
    Some(ErrorCode { space, value })
}

fn application(code: u32) -> E {
    E::ApplicationClosed(ApplicationClose {
        error_code: VarInt::from_u32(code),
        reason: Bytes::new(),
    })
}

fn transport(code: TransportErrorCode) -> E {
    E::ConnectionClosed(ConnectionClose {
        error_code: code,
        frame_type: None,
        reason: Bytes::new(),
    })
}

/// A self-signed certificate for `localhost` in a temporary folder, for `serve --h3`.
pub(crate) struct SelfSigned {
    dir: tempfile::TempDir,
}

impl SelfSigned {
    pub(crate) fn new() -> SelfSigned {
        let dir = tempfile::tempdir().unwrap();
        let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
        std::fs::write(dir.path().join("cert.pem"), certified.cert.pem()).unwrap();
        std::fs::write(
            dir.path().join("key.pem"),
            certified.signing_key.serialize_pem(),
        )
        .unwrap();
        SelfSigned { dir }
    }

    /// The built-in server's HTTP/3 on `addr` (port 0: any free one), with this certificate.
    pub(crate) fn spawn(&self, addr: SocketAddr) -> crate::serve::ServerHandle {
        let (cert, key) = (
            self.dir.path().join("cert.pem"),
            self.dir.path().join("key.pem"),
        );
        let tls = crate::serve::tls_config(&cert, &key, None).unwrap();
        crate::serve::spawn_h3(addr, 1, tls).unwrap()
    }
}

/// The plan of the spec `yaml` (relative paths from the current folder).
pub(crate) fn plan_of(yaml: String) -> crate::plan::Plan {
    let source = crate::spec::SourceSpec::parse("t.yaml".into(), yaml).unwrap();
    let spec = serde_json::from_value(source.value.clone()).unwrap();
    let ctx = crate::plan::BuildContext {
        source: source.text.as_bytes(),
        spec_dir: std::path::Path::new("."),
        var: &|_| None,
    };
    crate::plan::build(&spec, &ctx).unwrap()
}

/// A request deadline that never comes in a test (HTTP/3 streams leave it to the caller).
fn far() -> Instant {
    Instant::now() + Duration::from_secs(3600)
}

pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn connection_ends_are_counted_by_kind_with_the_peers_code() {
    // H3_INTERNAL_ERROR; H3_NO_ERROR is a graceful close (after GOAWAY).
    assert_eq!(closed(&application(0x102)), (ErrorKind::Closed, h3(0x102)));
    assert_eq!(closed(&application(0x100)), (ErrorKind::GoAway, h3(0x100)));
    assert_eq!(
        closed(&transport(TransportErrorCode::PROTOCOL_VIOLATION)),
        (ErrorKind::Closed, quic(0xa))
    );
    assert_eq!(closed(&E::TimedOut), (ErrorKind::IdleTimeout, None));
    assert_eq!(closed(&E::Reset), (ErrorKind::Reset, None));
    assert_eq!(closed(&E::LocallyClosed), (ErrorKind::Malformed, None));

    let addr: SocketAddr = "127.0.0.1:8443".parse().unwrap();
    let silent = handshake_failure(E::TimedOut, addr);
    assert_eq!(
        (silent.kind, silent.code),
        (ErrorKind::ConnectTimeout, None)
    );
    assert_eq!(silent.why, "no QUIC answer from udp/8443");
    // A TLS alert from the server: bad_certificate (42) is QUIC's 0x12a.
    let alert = handshake_failure(transport(TransportErrorCode::crypto(42)), addr);
    assert_eq!(
        (alert.kind, alert.code),
        (ErrorKind::TlsHandshake, quic(0x12a))
    );
    assert!(
        alert.why.starts_with("QUIC handshake failed: "),
        "{}",
        alert.why
    );
    let refused = handshake_failure(transport(TransportErrorCode::CONNECTION_REFUSED), addr);
    assert_eq!(
        (refused.kind, refused.code),
        (ErrorKind::ConnectRefused, quic(0x2))
    );
}

#[test]
fn a_second_connection_sends_its_first_request_as_0rtt_and_the_server_takes_it_unless_a_post() {
    let pki = SelfSigned::new();
    let server = pki.spawn("127.0.0.1:0".parse().unwrap());
    let addr = server.addr();
    let yaml = format!(
        "version: 1\nname: h3\ntargets:\n  - name: t\n    url: https://{addr}/?size=10\n    \
         protocol: h3\n    tls:\n      insecure_skip_verify: true\n  - name: post\n    url: \
         https://{addr}/?size=10\n    method: POST\n    protocol: h3\n    tls:\n      \
         insecure_skip_verify: true\nload:\n  connections: 1\n  requests: 1\n"
    );
    let plan = plan_of(yaml);
    let runtime = runtime();
    let endpoints = Endpoints::default();
    let slot: Rc<Slot<H3Link>> = Rc::default();
    let (plan, endpoints, slot) = (&plan, &endpoints, &slot);
    // Target `t`'s request on a new connection of the slot: its status and the setup.
    let once = |t: usize| async move {
        let target = &plan.targets[t];
        let mut conn = slot
            .connect(|| open(endpoints, addr, target, Setup::default()))
            .await
            .map_err(|f| f.why)
            .unwrap();
        let mut traffic = Traffic::default();
        let response = conn
            .exchange(Request::planned(target, far()), None, &mut traffic)
            .await
            .unwrap();
        assert_eq!((response.status, traffic.received), (200, 10));
        let setup = conn.setup().await.expect("the first response reports it");
        slot.close();
        setup
    };
    let timeout = Duration::from_secs(10);
    let (first, second, third) = runtime.block_on(async {
        let all = async { (once(0).await, once(0).await, once(1).await) };
        tokio::time::timeout(timeout, all).await.expect("in time")
    });
    // A full handshake: no ticket yet.
    assert_eq!(first.zero_rtt, ZeroRtt::NotTried);
    assert!(first.tls_us.is_some_and(|us| us > 0), "{first:?}");
    assert_eq!(first.connect_us, 0, "QUIC has no TCP connect");
    assert!(!first.tls_resumed);
    // The ticket of the first allows early data: the request went with the handshake.
    assert_eq!(second.zero_rtt, ZeroRtt::Accepted, "{second:?}");
    assert!(second.tls_resumed);
    assert!(second.tls_us.is_some_and(|us| us > 0), "{second:?}");
    // A POST could be replayed: its connection waits for the handshake.
    assert_eq!(third.zero_rtt, ZeroRtt::NotTried, "{third:?}");
    let buffers = endpoints.buffers().expect("an endpoint was bound");
    assert_eq!(buffers.wanted_bytes, udp::WANTED_BUFFER_BYTES);
    assert!(buffers.recv_bytes > 0);
    drop(server);
}

#[test]
fn early_data_the_server_turns_down_goes_again_on_the_same_connection() {
    let pki = SelfSigned::new();
    let server = pki.spawn("127.0.0.1:0".parse().unwrap());
    let addr = server.addr();
    let yaml = format!(
        "version: 1\nname: h3\ntargets:\n  - name: t\n    url: https://{addr}/?size=10\n    \
         protocol: h3\n    tls:\n      insecure_skip_verify: true\nload:\n  connections: 1\n  \
         requests: 1\n"
    );
    let plan = plan_of(yaml);
    let target = &plan.targets[0];
    let runtime = runtime();
    let endpoints = Endpoints::default();
    let slot: Rc<Slot<H3Link>> = Rc::default();
    let connect = || async {
        (slot
            .connect(|| open(&endpoints, addr, target, Setup::default()))
            .await)
            .map_err(|f| f.why)
            .unwrap()
    };
    let timeout = Duration::from_secs(10);
    // A first connection leaves a ticket that allows early data.
    runtime.block_on(async {
        let mut conn = tokio::time::timeout(timeout, connect()).await.unwrap();
        let mut traffic = Traffic::default();
        let exchange = conn.exchange(Request::planned(target, far()), None, &mut traffic);
        let response = tokio::time::timeout(timeout, exchange).await.unwrap();
        assert_eq!(response.unwrap().status, 200);
        slot.close();
    });
    // The server restarts on the same port with new ticket keys: it cannot resume the session.
    server.shutdown();
    let restarted = pki.spawn(addr);
    let (failure, retried, setup) = runtime.block_on(async {
        let all = async {
            let mut conn = connect().await;
            let mut traffic = Traffic::default();
            let planned = Request::planned(target, far());
            let failure = conn.exchange(planned, None, &mut traffic).await.err();
            // The same connection, its handshake done: no early data any more.
            let mut conn = connect().await;
            let retried = conn
                .exchange(Request::planned(target, far()), None, &mut traffic)
                .await
                .map(|r| r.status)
                .map_err(SlotFailure::kind);
            (failure, retried, conn.setup().await)
        };
        tokio::time::timeout(timeout, all).await.expect("in time")
    });
    assert!(
        matches!(failure, Some(SlotFailure::NotSent(_))),
        "not processed, to go again: {:?}",
        failure.map(SlotFailure::kind)
    );
    assert_eq!(retried, Ok(200));
    let setup = setup.expect("the first response reports the connection's setup");
    assert_eq!(setup.zero_rtt, ZeroRtt::Rejected, "{setup:?}");
    assert!(!setup.tls_resumed);
    drop(restarted);
}
