//! UDP sockets for QUIC (HTTP/3), with their kernel buffers raised as far as the system
//! allows: the client's endpoint (`run`) and `loadgate serve --h3` bind through here.
//!
//! QUIC carries every stream of a connection (and, here, every connection of a worker) on
//! one socket; with Linux's default buffers (212,992 bytes, `net.core.rmem_max` and
//! `net.core.wmem_max`) a burst of datagrams overflows the receive buffer and is dropped,
//! which QUIC sees as loss and answers by slowing down. The run reports a limited buffer
//! (see [`UdpBuffers::limited`]) so that a slow HTTP/3 result is not blamed on the server.

use std::io;
use std::net::{SocketAddr, UdpSocket};

use socket2::{Domain, Protocol, Socket, Type};

/// The buffer size asked for each direction, bytes (8 MiB: quinn's receive window of a
/// connection plus headroom; what quic-go and msquic recommend raising `rmem_max` to).
pub(crate) const WANTED_BUFFER_BYTES: usize = 8 << 20;

/// The kernel buffer sizes a UDP socket got, read back after asking for
/// [`WANTED_BUFFER_BYTES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct UdpBuffers {
    /// What was asked for each direction, bytes.
    pub(crate) wanted_bytes: usize,
    /// The receive buffer the socket was given, bytes: on Linux half of what `SO_RCVBUF`
    /// reads back, which doubles the size set to count the kernel's bookkeeping (`man 7
    /// socket`), so that it compares with `wanted_bytes` and with `net.core.rmem_max`.
    pub(crate) recv_bytes: usize,
    /// The send buffer the socket was given, bytes (as `recv_bytes`, with `SO_SNDBUF` and
    /// `net.core.wmem_max`).
    pub(crate) send_bytes: usize,
}

impl UdpBuffers {
    /// Whether the system gave less than was asked in either direction (on Linux, capped by
    /// `net.core.rmem_max` / `net.core.wmem_max`).
    pub(crate) fn limited(&self) -> bool {
        self.recv_bytes < self.wanted_bytes || self.send_bytes < self.wanted_bytes
    }

    /// What to tell the user when [`UdpBuffers::limited`]: the sizes got and how to raise
    /// the limits (Linux's sysctl names; other systems have their own).
    pub(crate) fn advice(&self) -> String {
        format!(
            "UDP socket buffers limited to {} KiB receive, {} KiB send (asked {} KiB): HTTP/3 \
             may drop datagrams under load; on Linux raise the limits with \
             `sysctl -w net.core.rmem_max={wanted} net.core.wmem_max={wanted}`",
            self.recv_bytes / 1024,
            self.send_bytes / 1024,
            self.wanted_bytes / 1024,
            wanted = self.wanted_bytes,
        )
    }
}

/// How many times the size set a system reads back for a socket buffer: Linux doubles it
/// (`man 7 socket`, `SO_RCVBUF`); the others read back what they set.
const READ_BACK_PER_BYTE_SET: usize = if cfg!(any(target_os = "linux", target_os = "android")) {
    2
} else {
    1
};

/// Binds a UDP socket to `addr` (port 0: any free port), non-blocking, with both buffers
/// asked to be [`WANTED_BUFFER_BYTES`], and returns it with the sizes it was given (Linux's
/// doubled read-back halved). A system that refuses the size outright (rather than capping
/// it) leaves its default, reported as given.
///
/// Errors: the bind's (address in use, address family not supported).
pub(crate) fn bind(addr: SocketAddr) -> io::Result<(UdpSocket, UdpBuffers)> {
    let socket = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    // IPv6 sockets keep the system's dual-stack default, as TCP listeners do: `serve --listen
    // [::]:PORT --h3` answers HTTP/3 from IPv4 clients too, as its TCP side does.

    // Capped silently by the system's limits; the read-back below says what was given.
    let _ = socket.set_recv_buffer_size(WANTED_BUFFER_BYTES);
    let _ = socket.set_send_buffer_size(WANTED_BUFFER_BYTES);
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    let buffers = UdpBuffers {
        wanted_bytes: WANTED_BUFFER_BYTES,
        recv_bytes: socket.recv_buffer_size()? / READ_BACK_PER_BYTE_SET,
        send_bytes: socket.send_buffer_size()? / READ_BACK_PER_BYTE_SET,
    };
    Ok((socket.into(), buffers))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binds_loopback_and_reads_back_the_buffer_sizes() {
        let (socket, buffers) = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let local = socket.local_addr().unwrap();
        assert!(local.ip().is_loopback() && local.port() != 0, "{local}");
        assert!(
            buffers.recv_bytes > 0 && buffers.send_bytes > 0,
            "{buffers:?}"
        );
        assert_eq!(buffers.wanted_bytes, WANTED_BUFFER_BYTES);
        // The advice appears exactly when a size fell short.
        let short = UdpBuffers {
            recv_bytes: 425_984,
            ..buffers
        };
        assert!(short.limited());
        assert!(
            short.advice().contains("416 KiB receive"),
            "{}",
            short.advice()
        );
        let full = UdpBuffers {
            recv_bytes: WANTED_BUFFER_BYTES,
            send_bytes: 2 * WANTED_BUFFER_BYTES,
            ..buffers
        };
        assert!(!full.limited());
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn the_sizes_given_are_the_systems_limits_in_its_own_units() {
        // Linux caps a size set at net.core.rmem_max / wmem_max and reads back twice the
        // size set: a socket given 4 MiB of an 8 MiB ask reads back 8 MiB, and is limited.
        let limit = |name: &str| -> usize {
            let path = format!("/proc/sys/net/core/{name}");
            std::fs::read_to_string(path)
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        };
        let (rmem_max, wmem_max) = (limit("rmem_max"), limit("wmem_max"));
        let (_, buffers) = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        assert_eq!(
            buffers.recv_bytes,
            WANTED_BUFFER_BYTES.min(rmem_max),
            "{buffers:?}"
        );
        assert_eq!(
            buffers.send_bytes,
            WANTED_BUFFER_BYTES.min(wmem_max),
            "{buffers:?}"
        );
        assert_eq!(
            buffers.limited(),
            rmem_max.min(wmem_max) < WANTED_BUFFER_BYTES,
            "rmem_max {rmem_max}, wmem_max {wmem_max}"
        );
    }

    #[test]
    fn an_ipv6_wildcard_socket_takes_ipv4_datagrams_as_tcp_listeners_do() {
        let (wildcard, _) = bind("[::]:0".parse().unwrap()).unwrap();
        let port = wildcard.local_addr().unwrap().port();
        let (v4, _) = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        v4.send_to(b"v4", ("127.0.0.1", port)).unwrap();
        wildcard.set_nonblocking(false).unwrap();
        wildcard
            .set_read_timeout(Some(std::time::Duration::from_secs(2)))
            .unwrap();
        let mut buf = [0u8; 8];
        let (n, _) = wildcard.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"v4");
    }

    #[test]
    fn a_datagram_goes_through_a_bound_pair() {
        let (a, _) = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let (b, _) = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        a.send_to(b"ping", b.local_addr().unwrap()).unwrap();
        b.set_nonblocking(false).unwrap();
        b.set_read_timeout(Some(std::time::Duration::from_secs(2)))
            .unwrap();
        let mut buf = [0u8; 8];
        let (n, from) = b.recv_from(&mut buf).unwrap();
        assert_eq!((&buf[..n], from), (&b"ping"[..], a.local_addr().unwrap()));
    }
}
