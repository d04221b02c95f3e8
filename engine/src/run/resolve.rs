//! Before the run: each distinct endpoint resolved once and checked to accept a connection.

use std::net::{SocketAddr, ToSocketAddrs};

use super::limits::{FileLimit, out_of_files, start_error};
use super::transport::{self, CheckError};
use super::{Negotiated, RunError};
use crate::plan::TargetPlan;

/// The connection slots of `targets` (each distinct endpoint with one transport): for each
/// target the index of its slot, and each slot's first target.
pub(super) fn slots(targets: &[TargetPlan]) -> (Vec<usize>, Vec<&TargetPlan>) {
    let mut firsts: Vec<&TargetPlan> = Vec::new();
    let endpoint_of = targets
        .iter()
        .map(|target| {
            firsts
                .iter()
                .position(|e| e.shares_connections_with(target))
                .unwrap_or_else(|| {
                    firsts.push(target);
                    firsts.len() - 1
                })
        })
        .collect();
    (endpoint_of, firsts)
}

/// Resolves each connection slot (see [`slots`]) once and checks that it accepts a
/// connection (with TLS and HTTP/2 as the run will speak them). `budget`: what the run
/// needs of file descriptors, for the error when loadgate is out of them.
#[allow(clippy::type_complexity)]
pub(super) fn resolve(
    targets: &[TargetPlan],
    budget: FileLimit,
) -> Result<(Vec<usize>, Vec<SocketAddr>, Vec<Negotiated>), RunError> {
    let (endpoint_of, firsts) = slots(targets);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| start_error(e, budget))?;
    let mut addrs = Vec::with_capacity(firsts.len());
    let mut negotiated = Vec::with_capacity(firsts.len());
    for target in firsts {
        let endpoint = &target.endpoint;
        // What the messages may show: a host, port or address from `${VAR}` never appears.
        let shown = target.display_endpoint();
        let secret = target.endpoint_from_env.then_some(endpoint.host.as_str());
        let connect_timeout = target.connect_timeout.unwrap_or(target.timeout);
        let candidates: Vec<SocketAddr> = (endpoint.host.as_str(), endpoint.port)
            .to_socket_addrs()
            .map_err(|e| RunError::Resolve {
                endpoint: shown.clone(),
                reason: redact(&e.to_string(), secret),
            })?
            .collect();
        // The first address that accepts a connection (`localhost` may give ::1 first to a
        // server listening on 127.0.0.1 only); a single address is left to the check below,
        // so that the check at start opens one connection per endpoint. HTTP/3 has no TCP
        // connection to try: each address goes to the check in turn.
        let mut reason = "no address".to_string();
        let mut out_of_fds = false;
        let quic = target.transport.protocol == crate::spec::Protocol::H3;
        let addr = candidates.iter().find(|addr| {
            candidates.len() == 1
                || quic
                || match std::net::TcpStream::connect_timeout(addr, connect_timeout) {
                    Ok(_) => true,
                    Err(e) => {
                        out_of_fds |= out_of_files(&e);
                        reason = match secret {
                            None => format!("{addr}: {e}"),
                            Some(_) => e.to_string(),
                        };
                        false
                    }
                }
        });
        let unreachable = |reason: String| RunError::Unreachable {
            endpoint: shown.clone(),
            reason: redact(&reason, secret),
        };
        let Some(&addr) = addr else {
            return Err(if out_of_fds {
                budget.exhausted()
            } else {
                unreachable(reason)
            });
        };
        let to_check = if quic { &candidates[..] } else { &[addr][..] };
        match first_passing(&runtime, to_check, target) {
            Ok((addr, n)) => {
                negotiated.push(n);
                addrs.push(addr);
            }
            Err(CheckError::Unreachable(reason)) => return Err(unreachable(reason)),
            Err(CheckError::OutOfFiles) => return Err(budget.exhausted()),
        }
    }
    Ok((endpoint_of, addrs, negotiated))
}

/// The first of `candidates` (at least one) that passes the check at start for `target`,
/// tried in turn, each within the target's `timeout`; with what it negotiated. Errors: the
/// last candidate's, or running out of file descriptors at once.
pub(super) fn first_passing(
    runtime: &tokio::runtime::Runtime,
    candidates: &[SocketAddr],
    target: &TargetPlan,
) -> Result<(SocketAddr, Negotiated), CheckError> {
    let mut failure = CheckError::Unreachable("no address".to_string());
    for &addr in candidates {
        match transport::check(runtime, addr, target, target.timeout) {
            Ok(negotiated) => return Ok((addr, negotiated)),
            Err(CheckError::OutOfFiles) => return Err(CheckError::OutOfFiles),
            Err(unreachable) => failure = unreachable,
        }
    }
    Err(failure)
}

/// `reason` with every occurrence of `secret` (a host from `${VAR}`, which resolver and TLS
/// messages quote) replaced by `${...}`.
fn redact(reason: &str, secret: Option<&str>) -> String {
    match secret {
        Some(host) if !host.is_empty() => reason.replace(host, "${...}"),
        _ => reason.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use std::net::{Ipv6Addr, SocketAddr};

    use super::first_passing;
    use crate::run::h3::tests::{SelfSigned, plan_of, runtime};
    use crate::run::transport::CheckError;

    #[test]
    fn the_check_at_start_tries_each_address_of_an_http3_target() {
        // `localhost` may resolve to ::1 first while the server listens on 127.0.0.1 only.
        let pki = SelfSigned::new();
        let server = pki.spawn("127.0.0.1:0".parse().unwrap());
        let v4 = server.addr();
        let yaml = format!(
            "version: 1\nname: h3\ndefaults:\n  timeout: 1s\ntargets:\n  - name: t\n    url: \
             https://localhost:{port}/\n    protocol: h3\n    tls:\n      insecure_skip_verify: \
             true\nload:\n  connections: 1\n  requests: 1\n",
            port = v4.port()
        );
        let plan = plan_of(yaml);
        let runtime = runtime();
        let v6 = SocketAddr::from((Ipv6Addr::LOCALHOST, v4.port()));
        let target = &plan.targets[0];
        let (addr, _) = first_passing(&runtime, &[v6, v4], target).unwrap_or_else(|_| panic!("v4"));
        assert_eq!(addr, v4, "the address that answers QUIC");
        // Nothing answers on ::1: the check's own reason.
        match first_passing(&runtime, &[v6], target) {
            Err(CheckError::Unreachable(why)) => assert!(why.contains("no QUIC answer"), "{why}"),
            _ => panic!("::1 does not answer"),
        }
    }
}
