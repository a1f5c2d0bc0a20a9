#!/usr/bin/python3
"""A third-party WebSocket server (python3-websockets) for the transport tests.

Prints one JSON line {"port": N, "fingerprint": hex} once listening. Behaviour by path:
  /echo          echoes every message back
  /close4001     closes with code 4001 "bye-reason" after the first message
  /ping          sends a ping with payload b"hi", says "pong-ok" once answered, then echoes
  /big           sends a text message of the size given by the first message, then echoes
  /headers       replies with the request headers as JSON
  /flood         after the first message N, sends N MiB as 256 KiB binary messages (each starting
                 with its 4-byte big-endian index) as fast as the client takes them, printing
                 {"sent": bytes} to stdout after each MiB, then the text "done"
"""
import argparse, asyncio, hashlib, json, ssl, sys
import websockets

async def handler(ws, path=None):
    path = path or ws.path
    if path == "/headers":
        await ws.send(json.dumps(dict(ws.request_headers.raw_items())))
    if path == "/flood":
        total = int(await ws.recv()) << 20
        sent, i = 0, 0
        while sent < total:
            await ws.send(i.to_bytes(4, "big") + bytes(256 * 1024 - 4))
            sent += 256 * 1024
            i += 1
            if sent % (1 << 20) == 0:
                print(json.dumps({"sent": sent}), flush=True)
        await ws.send("done")
        await ws.wait_closed()
        return
    if path == "/ping":
        pong = await ws.ping(b"hi")
        await asyncio.wait_for(pong, 5)
        await ws.send("pong-ok")
    async for msg in ws:
        if path == "/close4001":
            await ws.close(4001, "bye-reason")
            return
        if path == "/big":
            await ws.send("x" * int(msg))
            continue
        await ws.send(msg)

async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cert"); ap.add_argument("--key")
    a = ap.parse_args()
    ctx = None
    fp = None
    if a.cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.cert, a.key)
        der = ssl.PEM_cert_to_DER_cert(open(a.cert).read())
        fp = hashlib.sha256(der).hexdigest()
    async with websockets.serve(handler, "127.0.0.1", 0, ssl=ctx, max_size=None, compression=None) as server:
        port = server.sockets[0].getsockname()[1]
        print(json.dumps({"port": port, "fingerprint": fp}), flush=True)
        await asyncio.Future()

asyncio.run(main())
