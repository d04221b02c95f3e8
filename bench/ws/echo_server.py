#!/usr/bin/env python3
"""A WebSocket echo server on Python's `websockets` (asyncio): the second server of bench/ws.sh,
a peer nobody here wrote.

    echo_server.py

Serves on a free port of 127.0.0.1, echoes every message back as it came (text as text, binary
as binary) on any path, prints `listening on ws://127.0.0.1:PORT` once it accepts connections,
and runs until SIGTERM or SIGINT.
"""
import asyncio
import signal

from websockets.asyncio.server import serve


async def echo(connection):
    async for message in connection:
        await connection.send(message)


async def main():
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with serve(echo, "127.0.0.1", 0, compression=None, max_size=None) as server:
        port = server.sockets[0].getsockname()[1]
        print(f"listening on ws://127.0.0.1:{port}", flush=True)
        await stop.wait()


if __name__ == "__main__":
    asyncio.run(main())
