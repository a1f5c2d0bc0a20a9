#!/usr/bin/python3
"""A tiny NMEA 0183 source for gpsd, used by the location tests and scripts/bench-location.

gpsd is started as `gpsd -N -n -S <port> tcp://127.0.0.1:<feeder port>` and connects here as a
client. Every `--interval` seconds the feeder writes one reporting cycle (RMC, GGA, GSA, GST, GSV)
describing its current state to every connected client.

It listens on 127.0.0.1, port 0 unless --port is given, and prints one JSON line {"port": N}
when ready. Control lines arrive on stdin as JSON objects (one per line):
  {"fix": {"lat": 52.5216, "lon": 13.4066, "alt": 34.0, "speedMps": 1.5, "track": 90.0,
           "mode": 3, "sigmaLat": 3.0, "sigmaLon": 4.0, "sigmaAlt": 6.0, "hdop": 0.9}}
      report this position (every key but lat/lon is optional; mode 2 = 2D fix, no altitude)
  {"nofix": true}        report "no fix" (GGA quality 0, RMC status V, GSA mode 1)
  {"silent": true}       stop writing cycles (gpsd keeps the device, no new reports)
  {"raw": "text"}        write this line once, as is (for malformed-NMEA tests)
  {"garbage": true}      interleave malformed sentences into every cycle from now on
  {"drop": true}         close every client connection (gpsd reconnects to us)
Each applied command is acknowledged with {"ok": "<command>"} on stdout; a new client prints
{"client": N} (N = number of connected clients).
"""
import argparse
import datetime
import json
import math
import socket
import sys
import threading
import time

lock = threading.Lock()
clients = []
state = {"mode": "nofix", "fix": None, "garbage": False}


def checksum(body):
    c = 0
    for ch in body.encode("ascii"):
        c ^= ch
    return "%02X" % c


def sentence(body):
    return "$%s*%s\r\n" % (body, checksum(body))


def nmea_angle(value, degree_digits, hemispheres):
    """Degrees -> (d)ddmm.mmmmmmm with enough decimals that the round trip is exact to 1e-9 deg."""
    hemi = hemispheres[0] if value >= 0 else hemispheres[1]
    v = abs(value)
    deg = int(v)
    minutes = (v - deg) * 60.0
    text = "%0*d%010.7f" % (degree_digits, deg, minutes)
    return text, hemi


def cycle(now):
    hhmmss = now.strftime("%H%M%S") + ".%02d" % (now.microsecond // 10000)
    ddmmyy = now.strftime("%d%m%y")
    out = []
    fix = state["fix"] if state["mode"] == "fix" else None
    if fix is None:
        out.append(sentence("GPRMC,%s,V,,,,,,,%s,,,N" % (hhmmss, ddmmyy)))
        out.append(sentence("GPGGA,%s,,,,,0,00,99.99,,,,,," % hhmmss))
        out.append(sentence("GPGSA,A,1,,,,,,,,,,,,,99.99,99.99,99.99"))
    else:
        lat, ns = nmea_angle(fix["lat"], 2, "NS")
        lon, ew = nmea_angle(fix["lon"], 3, "EW")
        mode = int(fix.get("mode", 3))
        knots = fix.get("speedMps", 0.0) / 0.514444
        track = fix.get("track")
        track_text = "" if track is None else "%.2f" % track
        hdop = fix.get("hdop", 0.9)
        out.append(sentence("GPRMC,%s,A,%s,%s,%s,%s,%.4f,%s,%s,,,A"
                            % (hhmmss, lat, ns, lon, ew, knots, track_text, ddmmyy)))
        alt = "%.2f" % fix.get("alt", 0.0) if mode == 3 else ""
        out.append(sentence("GPGGA,%s,%s,%s,%s,%s,1,08,%.2f,%s,M,%s,M,,"
                            % (hhmmss, lat, ns, lon, ew, hdop, alt, "47.00" if mode == 3 else "")))
        out.append(sentence("GPGSA,A,%d,02,05,07,13,15,18,21,26,,,,,%.2f,%.2f,%.2f"
                            % (mode, hdop * 1.6, hdop, hdop * 1.3)))
        if "sigmaLat" in fix or "sigmaLon" in fix:
            sl = fix.get("sigmaLat", 5.0)
            so = fix.get("sigmaLon", 5.0)
            sa = fix.get("sigmaAlt", 8.0)
            out.append(sentence("GPGST,%s,%.2f,%.2f,%.2f,0.0,%.2f,%.2f,%.2f"
                                % (hhmmss, math.hypot(sl, so), max(sl, so), min(sl, so), sl, so, sa)))
    sats = [(2, 40, 80, 42), (5, 55, 150, 45), (7, 20, 220, 38), (13, 70, 300, 47)]
    body = "GPGSV,1,1,%02d" % len(sats) + "".join(",%02d,%02d,%03d,%02d" % s for s in sats)
    out.append(sentence(body))
    if state["garbage"]:
        # Bad checksum, truncated sentence, binary noise, an over-long line, an unknown talker.
        out.insert(1, "$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*00\r\n")
        out.insert(2, "$GPRMC,1235\r\n")
        out.insert(3, "\x00\xff\xfe garbage \x01\r\n")
        out.append("$" + "Z" * 300 + "\r\n")
        out.append(sentence("XXFOO,1,2,3"))
    return "".join(out)


def broadcast(text):
    data = text.encode("latin-1")
    with lock:
        for c in list(clients):
            try:
                c.sendall(data)
            except OSError:
                clients.remove(c)
                c.close()


def ticker(interval):
    while True:
        time.sleep(interval)
        if state["mode"] == "silent":
            continue
        broadcast(cycle(datetime.datetime.now(datetime.timezone.utc)))


def acceptor(server):
    while True:
        conn, _ = server.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with lock:
            clients.append(conn)
            n = len(clients)
        print(json.dumps({"client": n}), flush=True)


def apply(cmd):
    if "fix" in cmd:
        state["fix"] = cmd["fix"]
        state["mode"] = "fix"
        return "fix"
    if cmd.get("nofix"):
        state["mode"] = "nofix"
        return "nofix"
    if cmd.get("silent"):
        state["mode"] = "silent"
        return "silent"
    if "raw" in cmd:
        broadcast(cmd["raw"] + "\r\n")
        return "raw"
    if "garbage" in cmd:
        state["garbage"] = bool(cmd["garbage"])
        return "garbage"
    if cmd.get("drop"):
        with lock:
            for c in clients:
                try:
                    c.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                c.close()
            clients.clear()
        return "drop"
    return "unknown"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--interval", type=float, default=0.2)
    ap.add_argument("--fix", help="initial fix as JSON (same keys as the fix command)")
    args = ap.parse_args()
    if args.fix:
        apply({"fix": json.loads(args.fix)})
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", args.port))
    server.listen(8)
    print(json.dumps({"port": server.getsockname()[1]}), flush=True)
    threading.Thread(target=acceptor, args=(server,), daemon=True).start()
    threading.Thread(target=ticker, args=(args.interval,), daemon=True).start()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            cmd = json.loads(line)
        except ValueError:
            print(json.dumps({"error": "bad command"}), flush=True)
            continue
        print(json.dumps({"ok": apply(cmd)}), flush=True)
    # stdin closed: the test is gone; stop.


if __name__ == "__main__":
    main()
