"""The smallest HTTP/3 client on aioquic's API (aioquic ships its example client in the sdist
only): one QUIC connection to HOST:PORT, ALPN h3, the server certificate checked against --ca,
the requests sent at once (one stream each), and one JSON line on stdout: a list, in the order
of the URLs, of {"status": int, "headers": {name: value}, "body_len": int}. Prints
`client.py: connected` on stderr once the handshake is done. Exits 1 with the reason on stderr
when the connection or a request fails, or when it all takes over --timeout seconds.

    client.py --ca ca.pem [--method HEAD] [--server-name localhost] https://127.0.0.1:PORT/path?q ...
"""

import argparse
import asyncio
import json
import sys
from urllib.parse import urlsplit

from aioquic.asyncio.client import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import ConnectionTerminated


class Client(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._http = H3Connection(self._quic)
        self._responses = {}  # stream id -> (future, {"status", "headers", "body_len"})

    def quic_event_received(self, event):
        if isinstance(event, ConnectionTerminated):
            for future, _ in self._responses.values():
                if not future.done():
                    future.set_exception(
                        ConnectionError(f"connection closed: {event.error_code} {event.reason_phrase}")
                    )
        for h3_event in self._http.handle_event(event):
            entry = self._responses.get(getattr(h3_event, "stream_id", None))
            if entry is None:
                continue
            future, response = entry
            if isinstance(h3_event, HeadersReceived):
                for name, value in h3_event.headers:
                    if name == b":status":
                        response["status"] = int(value)
                    else:
                        response["headers"][name.decode()] = value.decode()
            elif isinstance(h3_event, DataReceived):
                response["body_len"] += len(h3_event.data)
            if h3_event.stream_ended and not future.done():
                future.set_result(response)

    async def request(self, method, url):
        parts = urlsplit(url)
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        stream_id = self._quic.get_next_available_stream_id()
        future = self._loop.create_future()
        self._responses[stream_id] = (future, {"status": None, "headers": {}, "body_len": 0})
        self._http.send_headers(
            stream_id=stream_id,
            headers=[
                (b":method", method.encode()),
                (b":scheme", b"https"),
                (b":authority", parts.netloc.encode()),
                (b":path", path.encode()),
                (b"user-agent", b"aioquic-test-client"),
            ],
            end_stream=True,
        )
        self.transmit()
        return await future


async def main(args):
    configuration = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN)
    configuration.load_verify_locations(args.ca)
    configuration.server_name = args.server_name
    first = urlsplit(args.urls[0])
    async with connect(
        first.hostname, first.port, configuration=configuration, create_protocol=Client
    ) as client:
        print("client.py: connected", file=sys.stderr, flush=True)
        return await asyncio.gather(*(client.request(args.method, url) for url in args.urls))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="HTTP/3 requests on one connection")
    parser.add_argument("--ca", required=True, help="PEM file of the CA that issued the server's certificate")
    parser.add_argument("--method", default="GET")
    parser.add_argument("--server-name", default="localhost", help="the name to check the certificate for")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds for it all")
    parser.add_argument("urls", nargs="+")
    args = parser.parse_args()
    try:
        responses = asyncio.run(asyncio.wait_for(main(args), args.timeout))
    except Exception as error:  # noqa: BLE001: any failure is the answer
        print(f"client.py: {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)
    print(json.dumps(responses))
