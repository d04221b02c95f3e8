//! The phases of a request (connection setup, stream wait, request write, time to first byte,
//! body read): what the transport reports with each response, and a target's histograms of
//! them.

use super::Recorder;

/// How long the phases of one request took, in microseconds: what the transport reports with
/// each response.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Timing {
    /// The setup of the connection, when this request opened it.
    pub(crate) setup: Option<Setup>,
    /// HTTP/2: how long the request waited for a free stream on its connection (the server's
    /// `SETTINGS_MAX_CONCURRENT_STREAMS` reached), before its write; `None` when it did not
    /// wait.
    pub(crate) stream_wait_us: Option<u64>,
    /// HTTP/2: the most concurrent streams the server allowed on the connection when the
    /// request was sent (its `SETTINGS_MAX_CONCURRENT_STREAMS`); `None` when it set no limit
    /// (or not HTTP/2).
    pub(crate) peer_max_streams: Option<u32>,
    /// Request write: from the first byte written to the last byte handed to the socket
    /// (HTTP/1.1: written and flushed; HTTP/2: headers and body handed to the connection).
    pub(crate) write_us: u64,
    /// Time to first byte: from the end of the write until the first byte of the response
    /// (HTTP/1.1) or its header block (HTTP/2) arrived.
    pub(crate) ttfb_us: u64,
    /// Body read: from the first byte (HTTP/1.1) or the header block (HTTP/2) to the last
    /// byte of the response.
    pub(crate) body_us: u64,
}

/// How long opening one connection took, in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Setup {
    /// Resolving the host name; `None` when the URL's host is an IP address.
    pub(crate) dns_us: Option<u64>,
    /// TCP connect (SYN to established); 0 for HTTP/3, which has no TCP connect (not
    /// recorded: a QUIC connection's setup is its handshake, in `tls_us`).
    pub(crate) connect_us: u64,
    /// TLS handshake (HTTP/3: the QUIC handshake, transport and TLS 1.3 together); `None`
    /// over cleartext.
    pub(crate) tls_us: Option<u64>,
    /// WebSocket: the HTTP/1.1 upgrade (request written to `101 Switching Protocols` read);
    /// `None` for every other protocol.
    pub(crate) upgrade_us: Option<u64>,
    /// The TLS handshake resumed an earlier session.
    pub(crate) tls_resumed: bool,
    /// HTTP/3: whether the connection tried 0-RTT (early data on a resumed session) and
    /// whether the server took it.
    pub(crate) zero_rtt: ZeroRtt,
    /// The connection was opened before the clock started (`load.pre_connect`): this setup
    /// is in no request's latency.
    pub(crate) pre_connected: bool,
}

/// Whether a QUIC connection used 0-RTT: the first request sent with the handshake, on a
/// session ticket from an earlier connection that allows early data (RFC 9001 §4.6).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum ZeroRtt {
    /// Not tried: no ticket allowing early data, or not HTTP/3.
    #[default]
    NotTried,
    /// Tried; the server refused the early data (the request was sent again after the
    /// handshake).
    Rejected,
    /// Tried and accepted.
    Accepted,
}

/// Phase histograms of one target, in microseconds (3 significant digits, each made at its
/// first sample): connection setup
/// (DNS, TCP connect, TLS handshake; HTTP/3: DNS and the QUIC handshake, no connect) per
/// connection opened; write, TTFB and body read per response.
#[derive(Debug, Clone, Default)]
pub(crate) struct Phases {
    pub(crate) dns_us: Recorder,
    pub(crate) connect_us: Recorder,
    pub(crate) tls_us: Recorder,
    /// WebSocket upgrades, per connection opened ([`Setup::upgrade_us`]).
    pub(crate) upgrade_us: Recorder,
    pub(crate) write_us: Recorder,
    pub(crate) ttfb_us: Recorder,
    pub(crate) body_us: Recorder,
    /// Stream wait, per response that waited ([`Timing::stream_wait_us`]); most targets
    /// never wait, and never make it.
    pub(crate) stream_wait_us: Recorder,
    /// The smallest stream limit a server set on this target's HTTP/2 connections
    /// ([`Timing::peer_max_streams`]); `None` when none set one.
    pub(crate) peer_max_streams: Option<u32>,
    /// Connections opened (each has a `connect_us` sample, but HTTP/3's).
    pub(crate) connections: u64,
    /// TLS handshakes that resumed a session.
    pub(crate) tls_resumed: u64,
    /// HTTP/3 connections that tried 0-RTT ([`ZeroRtt::Rejected`] or [`ZeroRtt::Accepted`]).
    pub(crate) zero_rtt_attempted: u64,
    /// Of those, the ones whose early data the server accepted.
    pub(crate) zero_rtt_accepted: u64,
    /// Of the connections, those opened before the clock started.
    pub(crate) pre_connected: u64,
}

impl Phases {
    /// Records the phases of one complete response.
    #[inline]
    pub(crate) fn record(&mut self, timing: &Timing) {
        if let Some(setup) = &timing.setup {
            if let Some(dns) = setup.dns_us {
                self.dns_us.record(dns);
            }
            if setup.connect_us > 0 {
                self.connect_us.record(setup.connect_us);
            }
            if let Some(tls) = setup.tls_us {
                self.tls_us.record(tls);
            }
            if let Some(upgrade) = setup.upgrade_us {
                self.upgrade_us.record(upgrade.max(1));
            }
            self.connections += 1;
            self.tls_resumed += u64::from(setup.tls_resumed);
            self.zero_rtt_attempted += u64::from(setup.zero_rtt != ZeroRtt::NotTried);
            self.zero_rtt_accepted += u64::from(setup.zero_rtt == ZeroRtt::Accepted);
            self.pre_connected += u64::from(setup.pre_connected);
        }
        if let Some(wait) = timing.stream_wait_us {
            self.stream_wait_us.record(wait);
        }
        self.peer_max_streams = smallest(self.peer_max_streams, timing.peer_max_streams);
        self.write_us.record(timing.write_us);
        self.ttfb_us.record(timing.ttfb_us);
        self.body_us.record(timing.body_us);
    }

    /// Adds `other` into `self`.
    pub(crate) fn merge(&mut self, other: &Phases) {
        for (a, b) in [
            (&mut self.dns_us, &other.dns_us),
            (&mut self.connect_us, &other.connect_us),
            (&mut self.tls_us, &other.tls_us),
            (&mut self.upgrade_us, &other.upgrade_us),
            (&mut self.write_us, &other.write_us),
            (&mut self.ttfb_us, &other.ttfb_us),
            (&mut self.body_us, &other.body_us),
            (&mut self.stream_wait_us, &other.stream_wait_us),
        ] {
            a.merge(b);
        }
        self.peer_max_streams = smallest(self.peer_max_streams, other.peer_max_streams);
        self.connections += other.connections;
        self.tls_resumed += other.tls_resumed;
        self.zero_rtt_attempted += other.zero_rtt_attempted;
        self.zero_rtt_accepted += other.zero_rtt_accepted;
        self.pre_connected += other.pre_connected;
    }
}

/// The smaller of two limits, either of which may be unset.
fn smallest(a: Option<u32>, b: Option<u32>) -> Option<u32> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_record_setup_only_when_a_connection_was_opened() {
        let mut p = Phases::default();
        let reused = Timing {
            setup: None,
            write_us: 7,
            stream_wait_us: None,
            peer_max_streams: None,
            ttfb_us: 300,
            body_us: 20,
        };
        let opened = Timing {
            setup: Some(Setup {
                dns_us: None,
                connect_us: 80,
                tls_us: Some(900),
                upgrade_us: None,
                tls_resumed: true,
                zero_rtt: ZeroRtt::NotTried,
                pre_connected: true,
            }),
            ..reused
        };
        p.record(&reused);
        p.record(&opened);
        let mut q = Phases::default();
        q.record(&opened);
        p.merge(&q);
        assert_eq!(p.write_us.len(), 3);
        assert!(p.write_us.equivalent(p.write_us.max(), 7));
        assert_eq!(p.ttfb_us.len(), 3);
        assert_eq!(p.body_us.len(), 3);
        assert_eq!(p.connect_us.len(), 2);
        assert_eq!(p.tls_us.len(), 2);
        assert!(p.dns_us.is_empty(), "an IP address is not resolved");
        assert_eq!((p.connections, p.tls_resumed, p.pre_connected), (2, 2, 2));
        assert!(p.tls_us.equivalent(p.tls_us.max(), 900));
        assert_eq!((p.zero_rtt_attempted, p.zero_rtt_accepted), (0, 0));
        assert!(
            p.stream_wait_us.is_empty(),
            "no request waited for a stream"
        );
    }

    #[test]
    fn stream_waits_are_recorded_apart_with_the_smallest_limit() {
        let waited = |wait, limit| Timing {
            stream_wait_us: wait,
            peer_max_streams: limit,
            ..Timing::default()
        };
        let mut p = Phases::default();
        p.record(&waited(None, None));
        p.record(&waited(Some(80_000), Some(4)));
        let mut q = Phases::default();
        q.record(&waited(Some(90_000), Some(1)));
        p.merge(&q);
        let wait = &p.stream_wait_us;
        assert_eq!(wait.len(), 2, "one sample per request that waited");
        assert!(wait.equivalent(wait.max(), 90_000));
        assert_eq!(p.peer_max_streams, Some(1));
        assert_eq!(p.write_us.len(), 3);
    }

    #[test]
    fn quic_setups_count_their_0rtt_and_have_no_connect_sample() {
        let quic = |zero_rtt| Timing {
            setup: Some(Setup {
                dns_us: None,
                connect_us: 0,
                tls_us: Some(1_200),
                upgrade_us: None,
                tls_resumed: zero_rtt == ZeroRtt::Accepted,
                zero_rtt,
                pre_connected: false,
            }),
            write_us: 5,
            stream_wait_us: None,
            peer_max_streams: None,
            ttfb_us: 200,
            body_us: 10,
        };
        let mut p = Phases::default();
        for zero_rtt in [ZeroRtt::NotTried, ZeroRtt::Rejected, ZeroRtt::Accepted] {
            p.record(&quic(zero_rtt));
        }
        let mut q = Phases::default();
        q.record(&quic(ZeroRtt::Accepted));
        p.merge(&q);
        assert_eq!(p.connections, 4);
        assert_eq!((p.zero_rtt_attempted, p.zero_rtt_accepted), (3, 2));
        assert_eq!(p.tls_resumed, 2);
        assert!(p.connect_us.is_empty(), "QUIC has no TCP connect");
        assert_eq!(p.tls_us.len(), 4);
    }
}
