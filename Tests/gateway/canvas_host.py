#!/usr/bin/env python3
"""Loopback stand-in for a gateway's canvas host (tests only).

Serves Tests/gateway/canvas_host/ under the paths a gateway uses:
  /__openclaw__/canvas/<file>   canvas documents (colors.html: four known colours)
  /__openclaw__/a2ui/           a test A2UI renderer (a2ui.html) that records what it receives
  /__openclaw__/cap/<token>/…   the same behind a capability prefix (older gateways); tokens that
                                start with "expired" get 401, as an expired capability does
  /hang                         accepts the request and never answers (load timeout)
  /slow/<file>                  the canvas document <file> after 2.5 s (a load that outlives a short invoke)
  /never-ready/__openclaw__/a2ui/  a page without openclawA2UI (A2UI_HOST_UNAVAILABLE)
Prints {"event":"listening","port":N} when ready and one {"event":"request","path":…} per request.
"""
import http.server, json, os, sys, threading, time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "canvas_host")


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_file(self, name):
        with open(os.path.join(ROOT, name), "rb") as f:
            body = f.read()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        emit({"event": "request", "path": self.path})
        if path.startswith("/__openclaw__/cap/"):
            rest = path[len("/__openclaw__/cap/"):]
            if rest.startswith("expired"):
                body = b"capability expired"
                self.send_response(401)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            path = "/" + rest.split("/", 1)[1] if "/" in rest else "/"
        if path == "/hang":
            time.sleep(120)
            return
        if path.startswith("/slow/"):
            time.sleep(2.5)
            return self.send_file(os.path.basename(path))
        if path.startswith("/never-ready/__openclaw__/a2ui"):
            return self.send_file("plain.html")
        if path.startswith("/__openclaw__/a2ui"):
            return self.send_file("a2ui.html")
        if path.startswith("/__openclaw__/canvas/"):
            name = os.path.basename(path)
            if name and os.path.exists(os.path.join(ROOT, name)):
                return self.send_file(name)
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    emit({"event": "listening", "port": server.server_address[1]})
    threading.Thread(target=server.serve_forever, daemon=True).start()
    # Ends when the test closes stdin or stops us by PID.
    for _ in sys.stdin:
        pass


if __name__ == "__main__":
    main()
