"""TLS in front of a plain loopback server, for the node's HTTPS tests: listens on 127.0.0.1
(--port, 0 = any) with --cert/--key and forwards each connection to 127.0.0.1:--to. Prints
{"port": N} once it listens."""
import argparse, asyncio, json, ssl

ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, default=0)
ap.add_argument("--to", type=int, required=True)
ap.add_argument("--cert", required=True)
ap.add_argument("--key", required=True)
args = ap.parse_args()


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, ssl.SSLError):
        pass
    finally:
        writer.close()


async def handle(reader, writer):
    try:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", args.to)
    except OSError:
        writer.close()
        return
    await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


async def main():
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.cert, args.key)
    server = await asyncio.start_server(handle, "127.0.0.1", args.port, ssl=ctx)
    print(json.dumps({"port": server.sockets[0].getsockname()[1]}), flush=True)
    async with server:
        await server.serve_forever()

asyncio.run(main())
