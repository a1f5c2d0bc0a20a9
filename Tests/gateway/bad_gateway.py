#!/usr/bin/python3
"""Gateways that misbehave on the wire, for the node's network-fault tests. argv[1] is the mode:
  silent      accepts TCP and reads, never writes a byte
  drip-http   answers the WebSocket upgrade one byte per second
  drip-frame  completes the upgrade, then sends the first frame one byte per second
  oversize    completes the upgrade, then sends a 65537-byte frame instead of connect.challenge
Prints {"port": N} when listening; each connection is logged as {"event": "conn", "t": <when accepted, seconds since the epoch>}."""
import base64, hashlib, json, socket, sys, threading, time

mode = sys.argv[1]
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 0)); srv.listen(16)
print(json.dumps({"port": srv.getsockname()[1]}), flush=True)


def upgrade_response(request):
    key = [l.split(":", 1)[1].strip() for l in request.split("\r\n") if l.lower().startswith("sec-websocket-key:")][0]
    accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
    return ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Accept: %s\r\n\r\n" % accept).encode()


def frame(payload):
    n = len(payload)
    head = bytes([0x81]) + (bytes([n]) if n < 126 else bytes([126]) + n.to_bytes(2, "big") if n < 65536 else bytes([127]) + n.to_bytes(8, "big"))
    return head + payload


def serve(c):
    print(json.dumps({"event": "conn", "t": time.time()}), flush=True)
    try:
        req = b""
        while b"\r\n\r\n" not in req:
            d = c.recv(4096)
            if not d:
                return
            req += d
        if mode == "silent":
            while c.recv(4096):
                pass
            return
        resp = upgrade_response(req.decode("latin-1"))
        if mode == "drip-http":
            for b in resp:
                c.sendall(bytes([b])); time.sleep(1)
            return
        c.sendall(resp)
        if mode == "drip-frame":
            for b in frame(json.dumps({"type": "event", "event": "connect.challenge", "payload": {"nonce": "n", "ts": 0}}).encode()):
                c.sendall(bytes([b])); time.sleep(1)
        elif mode == "oversize":
            c.sendall(frame(b"x" * 65537))
            while c.recv(4096):
                pass
    except OSError:
        pass
    finally:
        c.close()


while True:
    conn, _ = srv.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
