#!/usr/bin/env python3
"""An HTTP server on loopback that answers every request with a malformed response, for the attack
tests of the node's HTTP clients (MCP streamable HTTP, the join-URL fetch). The answer is chosen by
the request path's last segment (`/mcp/neg-length`, `/j/neg-length`); `/ok-json` answers a valid
JSON body. Prints {"port": N} when it listens; each request is printed as {"path": ..., "authorization":
whether it carried that header}."""
import json
import socket
import sys
import threading

BODY = b'{"url":"ws://127.0.0.1:1","bootstrapToken":"t"}'

ANSWERS = {
    # Lengths a careless parser turns into a negative slice, an overflow or a huge allocation.
    "neg-length": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: -5\r\n\r\n" + BODY,
    "plus-length": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: +48\r\n\r\n" + BODY,
    "huge-length": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 99999999999999999999999\r\n\r\n" + BODY,
    "int-max-length": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 9223372036854775807\r\n\r\n" + BODY,
    "two-lengths": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 48\r\nContent-Length: 3\r\n\r\n" + BODY,
    "neg-chunk": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n" + BODY + b"\r\n0\r\n\r\n",
    "overflow-chunk": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n7fffffffffffffff\r\n" + BODY + b"\r\n0\r\n\r\n",
    "wrap-chunk": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000001\r\n" + BODY + b"\r\n0\r\n\r\n",
    "short-chunk": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n" + BODY + b"\r\n0\r\n\r\n",
    "status-garbage": b"HTTP/1.1 -200000000000000000000 OK\r\nContent-Length: 2\r\n\r\n{}",
    "head-only": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 48\r\n",
    "sse-neg-retry": b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\nretry: -99999999999999999999\r\nid: 1\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1\r\n\r\n",
    "ok-json": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(BODY) + BODY,
}


def serve(conn):
    with conn:
        conn.settimeout(10)
        data = b""
        while b"\r\n\r\n" not in data:
            part = conn.recv(65536)
            if not part:
                return
            data += part
        path = data.split(b" ", 2)[1].decode("latin-1")
        head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").lower()
        print(json.dumps({"path": path, "authorization": "\r\nauthorization:" in head}), flush=True)
        answer = ANSWERS.get(path.rstrip("/").rsplit("/", 1)[-1], ANSWERS["neg-length"])
        try:
            conn.sendall(answer)
        except OSError:
            pass


def main():
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    print(json.dumps({"port": srv.getsockname()[1]}), flush=True)
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
