//! One sample request before the load (`loadgate quick -v`, as plt does), sent through the
//! run's own transports (`transport::connect` and `Conn::exchange`), so that what it shows is
//! what the load will get: the address the host resolved to, the protocol spoken, the
//! response's status line and headers and the first bytes of its body. The request's headers
//! are not shown (they may hold secrets).

use std::fmt::Write as _;
use std::net::{SocketAddr, ToSocketAddrs};
use std::rc::Rc;
use std::time::Instant;

use super::h1::{Capture, Failure, Traffic};
use super::multiplexed::Request;
use super::transport::{self, Conn, Group, Route};
use crate::plan::TargetPlan;
use crate::spec::printable;

/// Most body bytes shown.
pub(crate) const SAMPLE_BODY_BYTES: usize = 512;

/// Sends `target`'s request once and describes the exchange, as text lines: `* ` the address
/// and protocol, `> ` the request line, `< ` the response head, then the body's first
/// [`SAMPLE_BODY_BYTES`]. Errors: why the host could not be resolved or the request failed,
/// in words. Blocks the calling thread (at most the target's timeout, plus resolving).
pub(crate) fn sample(target: &TargetPlan) -> Result<String, String> {
    let endpoint = &target.endpoint;
    let addr: SocketAddr = (endpoint.host.as_str(), endpoint.port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {}: {e}", target.display_endpoint()))?
        .next()
        .ok_or_else(|| format!("{} resolves to no address", target.display_endpoint()))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let mut capture = Capture {
        keep_body: true,
        ..Capture::default()
    };
    let group = Group::new(1, Rc::default());
    let (protocol, status) = runtime.block_on(async {
        tokio::time::timeout(target.timeout, exchange(addr, target, &group, &mut capture))
            .await
            .map_err(|_| format!("no response within {:?}", target.timeout))?
    })?;
    group.close();
    let shown_addr = if target.endpoint_from_env {
        "${...}".to_string()
    } else {
        addr.to_string()
    };
    let mut out = String::new();
    let tls = if target.transport.tls.is_some() {
        " over TLS"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "* {} resolved to {shown_addr}, {protocol}{tls}",
        target.display_endpoint()
    );
    let _ = writeln!(out, "> {} {}", target.method, target.display_url);
    let head = String::from_utf8_lossy(&capture.head);
    for line in head.lines().filter(|l| !l.is_empty()) {
        let _ = writeln!(out, "< {}", printable(line));
    }
    if !head.starts_with("HTTP") {
        let _ = writeln!(out, "< status {status}");
    }
    let shown = &capture.body[..capture.body.len().min(SAMPLE_BODY_BYTES)];
    let body = String::from_utf8_lossy(shown);
    for line in body.lines() {
        let _ = writeln!(out, "  {}", printable(line));
    }
    if capture.body.len() > SAMPLE_BODY_BYTES {
        let _ = writeln!(out, "  … ({} bytes in all)", capture.body.len());
    }
    Ok(out)
}

/// Connects and sends the request once: the protocol spoken and the status.
async fn exchange(
    addr: SocketAddr,
    target: &TargetPlan,
    group: &Group,
    capture: &mut Capture,
) -> Result<(&'static str, u16), String> {
    let route = Route {
        addr,
        slot: 0,
        group,
    };
    let mut conn = transport::connect(route, target, &mut None)
        .await
        .map_err(|kind| format!("cannot connect to {addr}: {}", kind.name()))?;
    let protocol = match conn {
        Conn::H2(_) => "HTTP/2",
        Conn::H3(_) => "HTTP/3",
        Conn::H1(..) | Conn::H1Tls(..) => "HTTP/1.1",
        Conn::Ws(_) => "WebSocket",
    };
    let now = Instant::now();
    let mut traffic = Traffic::default();
    let request = Request::planned(target, now + target.timeout);
    let response = conn
        .exchange(route, request, now, Some(capture), &mut traffic)
        .await
        .map_err(|failure| match failure {
            Failure::Stale => "the server closed the connection".to_string(),
            Failure::Error(kind) => format!("the request failed: {}", kind.name()),
        })?;
    Ok((protocol, response.status))
}
