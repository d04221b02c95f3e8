"""A gRPC server that misbehaves on purpose, on the `h2` library from PyPI (grpcio cannot reset
a stream or break a message on purpose): cleartext HTTP/2 with prior knowledge on
127.0.0.1:--port (0 picks a free one). Every call, whatever its method, is answered as --mode
says, once its request has ended:

- reset: RST_STREAM with INTERNAL_ERROR (0x2), no response.
- truncated: HEADERS (200, application/grpc), a DATA frame whose message prefix promises 100
  bytes but holds 3, then trailers `grpc-status: 0`: a malformed message.
- no-status: HEADERS, one well-formed SayReply (`text: "ok"`), then trailers without
  `grpc-status`: gRPC's clients read that as UNKNOWN.

Prints `grpc h2 server: listening on tcp://127.0.0.1:PORT` on stdout once bound, then serves
until killed.

    grpc_h2.py --mode reset|truncated|no-status [--port 0]
"""

import argparse
import asyncio
import struct

import h2.config
import h2.connection
import h2.errors
import h2.events

# SayReply { text: "ok" }: field 1, length-delimited, 2 bytes.
SAY_REPLY_OK = b"\x0a\x02ok"


def message(payload, promised=None):
    """A gRPC message: uncompressed flag, big-endian length (`promised`, else the payload's)."""
    return b"\x00" + struct.pack(">I", len(payload) if promised is None else promised) + payload


def answer(conn, stream_id, mode):
    if mode == "reset":
        conn.reset_stream(stream_id, error_code=h2.errors.ErrorCodes.INTERNAL_ERROR)
        return
    conn.send_headers(stream_id, [(":status", "200"), ("content-type", "application/grpc")])
    if mode == "truncated":
        conn.send_data(stream_id, message(b"\x0a\x01x", promised=100))
        conn.send_headers(stream_id, [("grpc-status", "0")], end_stream=True)
    else:
        conn.send_data(stream_id, message(SAY_REPLY_OK))
        conn.send_headers(stream_id, [("x-note", "no status")], end_stream=True)


async def serve(reader, writer, mode):
    config = h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
    conn = h2.connection.H2Connection(config=config)
    conn.initiate_connection()
    writer.write(conn.data_to_send())
    while True:
        data = await reader.read(65536)
        if not data:
            break
        try:
            events = conn.receive_data(data)
        except Exception:
            break
        for event in events:
            if isinstance(event, h2.events.DataReceived):
                conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                try:
                    answer(conn, event.stream_id, mode)
                except Exception:  # the client reset the stream meanwhile
                    pass
        writer.write(conn.data_to_send())
        await writer.drain()
    writer.close()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--mode", choices=["reset", "truncated", "no-status"], required=True)
    args = parser.parse_args()

    async def accept(reader, writer):
        try:
            await serve(reader, writer, args.mode)
        except Exception:
            writer.close()

    server = await asyncio.start_server(accept, "127.0.0.1", args.port)
    port = server.sockets[0].getsockname()[1]
    print(f"grpc h2 server: listening on tcp://127.0.0.1:{port}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
