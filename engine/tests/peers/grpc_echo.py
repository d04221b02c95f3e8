"""examples/echo.proto's Echo service on grpcio (PyPI), a gRPC server nobody here wrote, with the
stubs `python -m grpc_tools.protoc` generated into --stubs (echo_pb2.py, echo_pb2_grpc.py).

Listens on 127.0.0.1:--port (0 picks a free one), cleartext (h2c) or, with --cert and --key,
TLS (grpc.ssl_server_credentials). Prints `grpc server: listening on tcp://127.0.0.1:PORT` on
stdout once bound, then serves until killed. --mode chooses how it answers:

- echo (default): as echo.proto documents. Say answers with the request's text after
  `delay_ms`, with `size` bytes of padding (`x`), or fails with status `status` and the message
  "failed as asked"; Stream answers with `count` replies (0: 3), `delay_ms` apart, numbered from
  1 in `sequence`.
- wrong-type: Say answers with the bytes of a SayRequest (`size` = 7, a varint where SayReply
  has bytes): a message of another type, which a SayReply decoder must refuse.
- silent: Say and Stream never answer; each call waits until the client gives it up.

    grpc_echo.py --stubs DIR [--port 0] [--cert server.pem --key server.key] [--mode echo]
"""

import argparse
import sys
import threading
import time
from concurrent import futures

import grpc


def echo_servicer(pb2, pb2_grpc):
    class Echo(pb2_grpc.EchoServicer):
        def Say(self, request, context):
            time.sleep(request.delay_ms / 1000)
            if request.status:
                context.abort(grpc.StatusCode(_code(request.status)), "failed as asked")
            return pb2.SayReply(text=request.text, sequence=1, padding=b"x" * request.size)

        def Stream(self, request, context):
            for sequence in range(1, (request.count or 3) + 1):
                time.sleep(request.delay_ms / 1000)
                yield pb2.SayReply(
                    text=request.text, sequence=sequence, padding=b"x" * request.size
                )
            if request.status:
                context.abort(grpc.StatusCode(_code(request.status)), "failed as asked")

    return Echo()


def _code(number):
    """The grpc.StatusCode value (a tuple of number and name) of status `number`."""
    return next(code.value for code in grpc.StatusCode if code.value[0] == number)


def raw_handler(pb2, mode):
    """Echo's two methods with a raw (bytes) response serializer, for the misbehaving modes."""

    def wait_until_given_up(context):
        cancelled = threading.Event()
        context.add_callback(cancelled.set)
        cancelled.wait(60)

    def say(request, context):
        if mode == "wrong-type":
            return pb2.SayRequest(text=request.text, size=7).SerializeToString()
        wait_until_given_up(context)
        return b""

    def stream(request, context):
        wait_until_given_up(context)
        return iter(())

    handlers = {
        "Say": grpc.unary_unary_rpc_method_handler(
            say, request_deserializer=pb2.SayRequest.FromString, response_serializer=bytes
        ),
        "Stream": grpc.unary_stream_rpc_method_handler(
            stream, request_deserializer=pb2.SayRequest.FromString, response_serializer=bytes
        ),
    }
    return grpc.method_handlers_generic_handler("loadgate.echo.v1.Echo", handlers)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--stubs", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--mode", choices=["echo", "wrong-type", "silent"], default="echo")
    args = parser.parse_args()
    sys.path.insert(0, args.stubs)
    import echo_pb2
    import echo_pb2_grpc

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=32))
    if args.mode == "echo":
        echo_pb2_grpc.add_EchoServicer_to_server(
            echo_servicer(echo_pb2, echo_pb2_grpc), server
        )
    else:
        server.add_generic_rpc_handlers((raw_handler(echo_pb2, args.mode),))
    address = f"127.0.0.1:{args.port}"
    if args.cert:
        with open(args.key, "rb") as key, open(args.cert, "rb") as cert:
            credentials = grpc.ssl_server_credentials([(key.read(), cert.read())])
        port = server.add_secure_port(address, credentials)
    else:
        port = server.add_insecure_port(address)
    server.start()
    print(f"grpc server: listening on tcp://127.0.0.1:{port}", flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
