#!/usr/bin/env python3
"""The WebSocket peers for `courier-bench websocket` (Docs/WebSocket.md, "Measured: speed").

    ws-peers.py server --port P [--cert C --key K]   an echo server (Python `websockets`), ws or wss
    ws-peers.py client --lib websockets|aiohttp --url U [--ca F] [--messages N] [--size BYTES] [--big-mib M]

The client prints one line in courier-bench's RESULT format: echo latency p50/p99 over N small
text messages (one in flight), then the throughput of M one-MiB binary messages echoed one at a
time. Needs `pip install websockets aiohttp` (in a virtual environment); nothing of it is part of
the package.
"""
import argparse, asyncio, ssl, statistics, sys, time


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100.0 * (len(ordered) - 1))))]


async def serve(args):
    import websockets
    context = None
    if args.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)

    async def echo(connection):
        async for message in connection:
            await connection.send(message)

    async with websockets.serve(echo, "127.0.0.1", args.port, ssl=context, max_size=None, compression=None) as server:
        print("READY port=%d" % server.sockets[0].getsockname()[1], flush=True)
        await asyncio.Future()


async def client_websockets(args, context):
    import websockets
    async with websockets.connect(args.url, ssl=context, max_size=None, compression=None) as connection:
        async def round_trip(message):
            await connection.send(message)
            return await connection.recv()
        return await measure(args, round_trip)


async def client_aiohttp(args, context):
    import aiohttp
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(args.url, ssl=context if context else None, max_msg_size=0, compress=0) as connection:
            async def round_trip(message):
                if isinstance(message, str):
                    await connection.send_str(message)
                else:
                    await connection.send_bytes(message)
                return (await connection.receive()).data
            return await measure(args, round_trip)


async def measure(args, round_trip):
    small = "x" * args.size
    for _ in range(200):  # warm-up
        await round_trip(small)
    latencies = []
    for _ in range(args.messages):
        start = time.perf_counter_ns()
        answer = await round_trip(small)
        latencies.append((time.perf_counter_ns() - start) / 1000.0)
        assert answer == small
    big = bytes(range(256)) * (4096 * 1)  # 1 MiB
    start = time.perf_counter()
    for _ in range(args.big_mib):
        answer = await round_trip(big)
        assert len(answer) == len(big)
    seconds = time.perf_counter() - start
    return latencies, args.big_mib / seconds


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("server")
    s.add_argument("--port", type=int, default=0)
    s.add_argument("--cert")
    s.add_argument("--key")
    c = sub.add_parser("client")
    c.add_argument("--lib", choices=["websockets", "aiohttp"], default="websockets")
    c.add_argument("--url", required=True)
    c.add_argument("--ca")
    c.add_argument("--messages", type=int, default=10000)
    c.add_argument("--size", type=int, default=32)
    c.add_argument("--big-mib", type=int, default=64)
    args = parser.parse_args()
    if args.mode == "server":
        asyncio.run(serve(args))
        return
    context = None
    if args.url.startswith("wss:"):
        context = ssl.create_default_context(cafile=args.ca)
    run = client_websockets if args.lib == "websockets" else client_aiohttp
    started = time.process_time()
    latencies, mib_per_second = asyncio.run(run(args, context))
    cpu = time.process_time() - started
    print("RESULT client=python-%s workload=websocket url=%s n=%d p50_us=%.1f p99_us=%.1f mib_per_s=%.1f cpu_s=%.2f" % (
        args.lib, args.url.split(":")[0], len(latencies), percentile(latencies, 50), percentile(latencies, 99),
        mib_per_second, cpu))


if __name__ == "__main__":
    sys.exit(main())
