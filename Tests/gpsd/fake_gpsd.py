#!/usr/bin/python3
"""A fake gpsd that speaks just enough of the JSON protocol to feed the node hostile input.

Listens on 127.0.0.1 (port 0 unless --port) and prints {"port": N} when ready. Every client gets
the VERSION banner at once and, after its ?WATCH command, DEVICES and WATCH, like gpsd 3.22.
Control lines on stdin (JSON, one per line), each acknowledged with {"ok": "<command>"}:
  {"send": "text"}        write text + "\n" to every watching client (any bytes, valid or not)
  {"sendNoNewline": "t"}  write text as is (a line split across writes, or never ended)
  {"junk": N}             write N bytes of binary noise without a newline, then "\n"
  {"close": true}         close every client connection (the node should reconnect)
  {"devices": [paths]}    the device list sent after ?WATCH (default one device)
A new client prints {"client": N, "watching": false}; its ?WATCH prints {"watch": N}.
"""
import argparse
import json
import os
import socket
import sys
import threading

lock = threading.Lock()
watchers = []
devices = ["/dev/ttyFAKE0"]
counter = [0]

VERSION = '{"class":"VERSION","release":"3.22","rev":"3.22","proto_major":3,"proto_minor":14}\n'


def serve(conn, n):
    try:
        conn.sendall(VERSION.encode())
        buf = b""
        while b"?WATCH" not in buf:
            chunk = conn.recv(4096)
            if not chunk:
                return
            buf += chunk
        with lock:
            devs = [{"class": "DEVICE", "path": p, "driver": "NMEA0183", "activated": "2026-01-01T00:00:00.000Z"} for p in devices]
        conn.sendall((json.dumps({"class": "DEVICES", "devices": devs}) + "\n").encode())
        conn.sendall(b'{"class":"WATCH","enable":true,"json":true,"nmea":false,"raw":0,"scaled":false}\n')
        with lock:
            watchers.append(conn)
        print(json.dumps({"watch": n}), flush=True)
        while conn.recv(4096):
            pass
    except OSError:
        pass
    finally:
        with lock:
            if conn in watchers:
                watchers.remove(conn)
        conn.close()


def acceptor(server):
    while True:
        conn, _ = server.accept()
        counter[0] += 1
        print(json.dumps({"client": counter[0], "watching": False}), flush=True)
        threading.Thread(target=serve, args=(conn, counter[0]), daemon=True).start()


def write_all(data):
    with lock:
        for c in list(watchers):
            try:
                c.sendall(data)
            except OSError:
                watchers.remove(c)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", args.port))
    server.listen(8)
    print(json.dumps({"port": server.getsockname()[1]}), flush=True)
    threading.Thread(target=acceptor, args=(server,), daemon=True).start()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        cmd = json.loads(line)
        if "send" in cmd:
            write_all(cmd["send"].encode("utf-8", "surrogateescape") + b"\n")
            done = "send"
        elif "sendNoNewline" in cmd:
            write_all(cmd["sendNoNewline"].encode("utf-8", "surrogateescape"))
            done = "sendNoNewline"
        elif "junk" in cmd:
            write_all(os.urandom(int(cmd["junk"])).replace(b"\n", b"x") + b"\n")
            done = "junk"
        elif cmd.get("close"):
            with lock:
                for c in watchers:
                    try:
                        c.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                watchers.clear()
            done = "close"
        elif "devices" in cmd:
            with lock:
                devices[:] = cmd["devices"]
            done = "devices"
        else:
            done = "unknown"
        print(json.dumps({"ok": done}), flush=True)


if __name__ == "__main__":
    main()
