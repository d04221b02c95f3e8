//! Before the run: each distinct endpoint resolved once and checked to accept a connection.

use std::net::{SocketAddr, ToSocketAddrs};

use super::transport;
use super::{Negotiated, RunError};
use crate::plan::TargetPlan;

/// Resolves each distinct endpoint (connection slot: endpoint and transport) once and checks
/// that it accepts a connection (with TLS and HTTP/2 as the run will speak them).
#[allow(clippy::type_complexity)]
pub(super) fn resolve(
    targets: &[TargetPlan],
) -> Result<(Vec<usize>, Vec<SocketAddr>, Vec<Negotiated>), RunError> {
    let mut endpoints: Vec<&TargetPlan> = Vec::new();
    let mut addrs = Vec::new();
    let mut negotiated = Vec::new();
    let mut endpoint_of = Vec::with_capacity(targets.len());
    for target in targets {
        if let Some(i) = endpoints
            .iter()
            .position(|e| e.shares_connections_with(target))
        {
            endpoint_of.push(i);
            continue;
        }
        let endpoint = &target.endpoint;
        let candidates: Vec<SocketAddr> = (endpoint.host.as_str(), endpoint.port)
            .to_socket_addrs()
            .map_err(|e| RunError::Resolve {
                endpoint: endpoint.clone(),
                reason: e.to_string(),
            })?
            .collect();
        // The first address that accepts a connection (`localhost` may give ::1 first to a
        // server listening on 127.0.0.1 only); a single address is left to the check below,
        // so that the check at start opens one connection per endpoint.
        let mut reason = "no address".to_string();
        let addr = candidates
            .iter()
            .find(|addr| {
                candidates.len() == 1
                    || match std::net::TcpStream::connect_timeout(addr, target.timeout) {
                        Ok(_) => true,
                        Err(e) => {
                            reason = format!("{addr}: {e}");
                            false
                        }
                    }
            })
            .copied()
            .ok_or_else(|| RunError::Unreachable {
                endpoint: endpoint.clone(),
                reason,
            })?;
        negotiated.push(
            transport::check(addr, target, target.timeout).map_err(|reason| {
                RunError::Unreachable {
                    endpoint: endpoint.clone(),
                    reason,
                }
            })?,
        );
        endpoint_of.push(endpoints.len());
        endpoints.push(target);
        addrs.push(addr);
    }
    Ok((endpoint_of, addrs, negotiated))
}
