//! What the reports say about HTTP/3, in every format alike: that a server offers it (its
//! `Alt-Svc`) to a target that loaded it over HTTP/1.1 or HTTP/2, the 0-RTT of QUIC
//! connections beside the TLS resumptions, and what to do about UDP socket buffers that the
//! system kept smaller than loadgate asked for.

use crate::result::{Environment, PhasesResult, TransportResult};

/// The `h3` entry of the `Alt-Svc` a target's responses carried (`h3=":8443"`) when the
/// target spoke HTTP/1.1 or HTTP/2: the server offers HTTP/3, which `protocol: h3` loads.
pub(super) fn offered_h3(transport: &TransportResult) -> Option<&str> {
    (transport.protocol != "h3")
        .then_some(transport.alt_svc_h3.as_deref())
        .flatten()
}

/// What to do about the UDP socket buffers of the run's HTTP/3 endpoints, when the system
/// gave less than loadgate asked for (`udp::UdpBuffers::advice`); `None` when it did not.
pub(super) fn udp_advice(environment: &Environment) -> Option<String> {
    let b = environment.udp_buffers.filter(|b| b.limited)?;
    let size = |bytes: u64| usize::try_from(bytes).unwrap_or(usize::MAX);
    let buffers = crate::udp::UdpBuffers {
        wanted_bytes: size(b.wanted_bytes),
        recv_bytes: size(b.recv_bytes),
        send_bytes: size(b.send_bytes),
    };
    Some(buffers.advice())
}

/// The HTTP/3 connections that tried 0-RTT and those whose early data was accepted, to follow
/// the TLS resumptions: `, 3 tried 0-RTT (2 accepted)`; empty when none tried.
pub(super) fn zero_rtt(phases: &PhasesResult) -> String {
    if phases.zero_rtt_attempted == 0 {
        return String::new();
    }
    format!(
        ", {} tried 0-RTT ({} accepted)",
        phases.zero_rtt_attempted, phases.zero_rtt_accepted
    )
}
