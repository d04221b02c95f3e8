#!/usr/bin/env python3
"""examples/echo.proto's Echo service on grpcio (gRPC's own Python server, its asyncio API): the
second server of bench/grpc.sh, a peer nobody here wrote.

    echo_server.py PROTO_DIR OUT_DIR

Compiles PROTO_DIR/echo.proto with grpc_tools.protoc into OUT_DIR, serves h2c on a free port of
127.0.0.1 and prints `listening on 127.0.0.1:PORT` once it accepts calls; runs until SIGTERM or
SIGINT. Say answers with the request's text (with `size` bytes of padding, after `delay_ms`, or
fails with gRPC status `status`), as `loadgate serve --grpc` does; Stream sends `count` replies
(0: 3).
"""
import asyncio
import signal
import sys


def compile_proto(proto_dir, out_dir):
    from grpc_tools import protoc

    code = protoc.main(["protoc", f"-I{proto_dir}", f"--python_out={out_dir}",
                        f"--grpc_python_out={out_dir}", f"{proto_dir}/echo.proto"])
    if code != 0:
        sys.exit(f"protoc failed on {proto_dir}/echo.proto (exit {code})")
    sys.path.insert(0, out_dir)


async def serve():
    import grpc
    import echo_pb2
    import echo_pb2_grpc

    statuses = {status.value[0]: status for status in grpc.StatusCode}

    async def reply(request, context, sequence):
        if request.delay_ms:
            await asyncio.sleep(request.delay_ms / 1000)
        if request.status:
            await context.abort(statuses.get(request.status, grpc.StatusCode.UNKNOWN),
                                "failed as asked")
        return echo_pb2.SayReply(text=request.text, sequence=sequence,
                                 padding=b"x" * request.size)

    class Echo(echo_pb2_grpc.EchoServicer):
        async def Say(self, request, context):
            return await reply(request, context, 1)

        async def Stream(self, request, context):
            for sequence in range(1, (request.count or 3) + 1):
                yield await reply(request, context, sequence)

    server = grpc.aio.server()
    echo_pb2_grpc.add_EchoServicer_to_server(Echo(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"listening on 127.0.0.1:{port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop(grace=None)


if __name__ == "__main__":
    compile_proto(*sys.argv[1:3])
    asyncio.run(serve())
