"""A WebSocket server on `websockets` (PyPI), a peer nobody here wrote: 127.0.0.1:--port (0 picks
a free one), cleartext or, with --cert and --key, TLS (wss). The path (and its query) chooses
how a connection is answered:

- /echo?delay=MS: each message back as it came (text or binary), MS milliseconds later.
- /chatter?n=N: for each message, N messages `{"noise": I}` first, then `{"echo": MESSAGE}`
  (the message parsed as JSON when it is JSON, else its text).
- /burst?n=N: for each message, N messages `push I`.
- /ticks?ms=MS: `tick I` every MS milliseconds from the upgrade on; what comes in is ignored.
- /close?code=CODE: closes with CODE (reason `as asked`) on the first message.
- /silent: reads every message, never answers.
- /big?size=N: for each message, a text message of N `x`.
- /hello: for each message, `{"authorization": ..., "cookie": ..., "subprotocol": ...,
  "text": MESSAGE}`: what the upgrade request carried and the subprotocol chosen.

--subprotocol (repeatable) lists the subprotocols it accepts; --ping-interval and
--ping-timeout (seconds) make it ping every connection that often and close it with 1011 when a
pong is that late (websockets' keepalive; default: no pings). Prints
`ws server: listening on tcp://127.0.0.1:PORT` on stdout once bound, then serves until killed.

    ws_server.py [--port 0] [--cert server.pem --key server.key] [--subprotocol chat.v1]
                 [--ping-interval 0.05 --ping-timeout 0.1]
"""

import argparse
import asyncio
import json
import ssl
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed


def as_json(message):
    text = message.decode("utf-8", "replace") if isinstance(message, bytes) else message
    try:
        return json.loads(text)
    except ValueError:
        return text


async def handle(ws):
    url = urlsplit(ws.request.path)
    query = {name: values[0] for name, values in parse_qs(url.query).items()}
    try:
        if url.path == "/ticks":
            for i in range(1, 1_000_000):
                await asyncio.sleep(int(query.get("ms", "20")) / 1000)
                await ws.send(f"tick {i}")
        async for message in ws:
            await answer(ws, url.path, query, message)
    except ConnectionClosed:
        pass


async def answer(ws, path, query, message):
    if path == "/echo":
        await asyncio.sleep(int(query.get("delay", "0")) / 1000)
        await ws.send(message)
    elif path == "/chatter":
        for i in range(int(query.get("n", "3"))):
            await ws.send(json.dumps({"noise": i}))
        await ws.send(json.dumps({"echo": as_json(message)}))
    elif path == "/burst":
        for i in range(1, int(query.get("n", "5")) + 1):
            await ws.send(f"push {i}")
    elif path == "/close":
        await ws.close(int(query.get("code", "1011")), "as asked")
    elif path == "/big":
        await ws.send("x" * int(query.get("size", "1024")))
    elif path == "/hello":
        headers = ws.request.headers
        await ws.send(
            json.dumps(
                {
                    "authorization": headers.get("Authorization"),
                    "cookie": headers.get("Cookie"),
                    "subprotocol": ws.subprotocol,
                    "text": as_json(message),
                }
            )
        )
    # /silent, and any other path: no answer.


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--subprotocol", action="append")
    parser.add_argument("--ping-interval", type=float)
    parser.add_argument("--ping-timeout", type=float)
    args = parser.parse_args()
    context = None
    if args.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
    accepted = args.subprotocol or []

    def select_subprotocol(_ws, offered):
        # A client that offers none, or none of these, is served without one.
        return next((p for p in offered if p in accepted), None)

    async with serve(
        handle,
        "127.0.0.1",
        args.port,
        ssl=context,
        select_subprotocol=select_subprotocol,
        ping_interval=args.ping_interval,
        ping_timeout=args.ping_timeout,
        max_size=None,
    ) as server:
        port = server.sockets[0].getsockname()[1]
        print(f"ws server: listening on tcp://127.0.0.1:{port}", flush=True)
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
