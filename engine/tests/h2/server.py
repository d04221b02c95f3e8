"""The smallest HTTP/2 server (cleartext, prior knowledge) on the `h2` library from PyPI, a target
nobody here wrote: TCP on --host:--port (port 0 picks a free one). It advertises
SETTINGS_MAX_CONCURRENT_STREAMS=--max-streams (0: none advertised) and answers every request,
--delay-ms after its end, with status --status and the body BODY (text/plain, with
Content-Length). With --h1 it speaks HTTP/1.1 instead: every request gets the same status line
`HTTP/1.1 STATUS Odd` and BODY, on a kept-alive connection. Prints
`h2 server: listening on tcp://HOST:PORT` on stdout once bound, then serves until killed.

    server.py [--host 127.0.0.1] [--port 0] [--max-streams 1] [--delay-ms 10] [--status 200] [--h1]
"""

import argparse
import asyncio

import h2.config
import h2.connection
import h2.events
import h2.settings

BODY = b"hello from python h2\n"


async def serve_h2(reader, writer, args):
    config = h2.config.H2Configuration(client_side=False, header_encoding=None)
    # The library checks statuses it sends; a test server must be able to send any.
    config.validate_outbound_headers = False
    conn = h2.connection.H2Connection(config=config)
    conn.initiate_connection()
    if args.max_streams > 0:
        conn.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: args.max_streams})
    writer.write(conn.data_to_send())
    await writer.drain()
    lock = asyncio.Lock()

    async def answer(stream_id):
        await asyncio.sleep(args.delay_ms / 1000)
        async with lock:
            try:
                conn.send_headers(
                    stream_id,
                    [
                        (b":status", str(args.status).encode()),
                        (b"content-type", b"text/plain"),
                        (b"content-length", str(len(BODY)).encode()),
                    ],
                )
                conn.send_data(stream_id, BODY, end_stream=True)
            except Exception:  # the client reset the stream, or closed the connection
                return
            writer.write(conn.data_to_send())

    while True:
        data = await reader.read(65536)
        if not data:
            break
        async with lock:
            try:
                events = conn.receive_data(data)
            except Exception:
                break
            for event in events:
                if isinstance(event, h2.events.StreamEnded):
                    asyncio.ensure_future(answer(event.stream_id))
                elif isinstance(event, h2.events.DataReceived):
                    conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            writer.write(conn.data_to_send())
    writer.close()


async def serve_h1(reader, writer, args):
    response = b"HTTP/1.1 %d Odd\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s" % (
        args.status,
        len(BODY),
        BODY,
    )
    while True:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            break
        length = 0
        for line in head.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        if length:
            await reader.readexactly(length)
        await asyncio.sleep(args.delay_ms / 1000)
        writer.write(response)
    writer.close()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--max-streams", type=int, default=1)
    parser.add_argument("--delay-ms", type=int, default=10)
    parser.add_argument("--status", type=int, default=200)
    parser.add_argument("--h1", action="store_true")
    args = parser.parse_args()

    async def accept(reader, writer):
        try:
            await (serve_h1 if args.h1 else serve_h2)(reader, writer, args)
        except Exception:
            writer.close()

    server = await asyncio.start_server(accept, args.host, args.port)
    host, port = server.sockets[0].getsockname()[:2]
    print(f"h2 server: listening on tcp://{host}:{port}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
