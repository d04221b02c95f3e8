"""The smallest HTTP/3 server on aioquic's API, a target nobody here wrote: UDP on --host:--port
(port 0 picks a free one), ALPN h3, TLS 1.3 with --cert/--key (PEM); every request, whatever its
method, gets 200 with the body BODY (text/plain, with Content-Length), but for paths that fail
on purpose: `/reset` resets the request's stream with H3_REQUEST_CANCELLED (0x10c), `/close`
closes the connection with H3_INTERNAL_ERROR (0x102), `/stall` sends the response head and then
nothing (with --idle-timeout, the connection then times out idle). Prints
`aioquic server: listening on udp://HOST:PORT` on stdout once bound, then serves until killed.

    server.py --cert server.pem --key server.key [--host 127.0.0.1] [--port 0] [--idle-timeout S]
"""

import argparse
import asyncio

from aioquic.asyncio import QuicConnectionProtocol, serve
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration

BODY = b"hello from aioquic\n"
H3_REQUEST_CANCELLED = 0x10C
H3_INTERNAL_ERROR = 0x102


class Server(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._http = H3Connection(self._quic)
        self._paths = {}

    def quic_event_received(self, event):
        for h3_event in self._http.handle_event(event):
            if isinstance(h3_event, HeadersReceived):
                self._paths[h3_event.stream_id] = dict(h3_event.headers).get(b":path", b"/")
            # Answer once the request has ended (its headers, or the last of its body).
            if isinstance(h3_event, (HeadersReceived, DataReceived)) and h3_event.stream_ended:
                path = self._paths.pop(h3_event.stream_id, b"/")
                if path == b"/reset":
                    self._quic.reset_stream(h3_event.stream_id, H3_REQUEST_CANCELLED)
                    self.transmit()
                    continue
                if path == b"/close":
                    self._quic.close(error_code=H3_INTERNAL_ERROR, reason_phrase="closed on purpose")
                    self.transmit()
                    continue
                if path == b"/stall":
                    self._http.send_headers(
                        stream_id=h3_event.stream_id,
                        headers=[(b":status", b"200"), (b"server", b"aioquic")],
                    )
                    self.transmit()
                    continue
                self._http.send_headers(
                    stream_id=h3_event.stream_id,
                    headers=[
                        (b":status", b"200"),
                        (b"content-type", b"text/plain"),
                        (b"content-length", str(len(BODY)).encode()),
                        (b"server", b"aioquic"),
                    ],
                )
                self._http.send_data(stream_id=h3_event.stream_id, data=BODY, end_stream=True)
                self.transmit()


async def main(args):
    configuration = QuicConfiguration(
        is_client=False, alpn_protocols=H3_ALPN, idle_timeout=args.idle_timeout
    )
    configuration.load_cert_chain(args.cert, args.key)
    server = await serve(args.host, args.port, configuration=configuration, create_protocol=Server)
    # serve() returns the endpoint's asyncio protocol; its transport knows the bound port.
    host, port = server._transport.get_extra_info("sockname")[:2]
    print(f"aioquic server: listening on udp://{host}:{port}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="a fixed 200 over HTTP/3")
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--idle-timeout", type=float, default=60.0, help="seconds")
    try:
        asyncio.run(main(parser.parse_args()))
    except KeyboardInterrupt:
        pass
