//! An HTTP/2 server (h2c, prior knowledge) built on the `h2` crate that resets every second
//! stream with RST_STREAM(INTERNAL_ERROR) and answers the others `200 ok`. It runs on a thread
//! and runtime of its own, on loopback; it stops when dropped, and by itself after
//! [`FIXTURE_LIFETIME`](super::FIXTURE_LIFETIME).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;

use bytes::Bytes;
use tokio::sync::oneshot;

/// A server that resets odd-numbered streams (1st, 3rd, ... across all connections).
pub struct H2ResetServer {
    addr: SocketAddr,
    streams: Arc<AtomicU64>,
    resets: Arc<AtomicU64>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl H2ResetServer {
    /// Starts the server on a free `127.0.0.1` port; returns once it accepts connections.
    pub fn start() -> H2ResetServer {
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        std_listener.set_nonblocking(true).expect("nonblocking");
        let addr = std_listener.local_addr().expect("local_addr");
        let streams = Arc::new(AtomicU64::new(0));
        let resets = Arc::new(AtomicU64::new(0));
        let (stop, stopped) = oneshot::channel::<()>();
        let (s, r) = (streams.clone(), resets.clone());
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(std_listener).expect("listener");
                let serve = async {
                    loop {
                        let Ok((socket, _)) = listener.accept().await else {
                            continue;
                        };
                        tokio::spawn(serve_connection(socket, s.clone(), r.clone()));
                    }
                };
                tokio::select! {
                    _ = serve => {}
                    _ = stopped => {}
                    _ = tokio::time::sleep(super::FIXTURE_LIFETIME) => {}
                }
            });
        });
        H2ResetServer {
            addr,
            streams,
            resets,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Streams received so far.
    pub fn streams(&self) -> u64 {
        self.streams.load(Ordering::SeqCst)
    }

    /// Streams reset so far.
    pub fn resets(&self) -> u64 {
        self.resets.load(Ordering::SeqCst)
    }
}

impl Drop for H2ResetServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn serve_connection(
    socket: tokio::net::TcpStream,
    streams: Arc<AtomicU64>,
    resets: Arc<AtomicU64>,
) {
    let Ok(mut connection) = h2::server::handshake(socket).await else {
        return;
    };
    while let Some(Ok((_request, mut respond))) = connection.accept().await {
        let n = streams.fetch_add(1, Ordering::SeqCst);
        if n.is_multiple_of(2) {
            resets.fetch_add(1, Ordering::SeqCst);
            respond.send_reset(h2::Reason::INTERNAL_ERROR);
        } else {
            let response = http::Response::builder().status(200).body(()).unwrap();
            if let Ok(mut body) = respond.send_response(response, false) {
                let _ = body.send_data(Bytes::from_static(b"ok\n"), true);
            }
        }
    }
}
