#!/usr/bin/python3
"""openclaw-node plugin: sensors.read from /sys/class/hwmon (no lm-sensors needed).

Speaks the plugin protocol of Plugins/README.md on stdin/stdout. Plugin config:
  {"root": "/"}   sysfs root (tests point it at a fixture tree)
"""
import json, os, sys

KINDS = {"temp": ("temperature", "°C", 1000.0), "fan": ("fan", "rpm", 1.0), "in": ("voltage", "V", 1000.0),
         "power": ("power", "W", 1000000.0), "curr": ("current", "A", 1000.0)}


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def sensors(root):
    base = os.path.join(root, "sys/class/hwmon")
    out = []
    for hw in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        d = os.path.join(base, hw)
        chip = read(os.path.join(d, "name")) or hw
        for f in sorted(os.listdir(d)):
            if not f.endswith("_input"):
                continue
            prefix = f[:-len("_input")]
            kind = prefix.rstrip("0123456789")
            if kind not in KINDS:
                continue
            raw = read(os.path.join(d, f))
            try:
                value = int(raw) / KINDS[kind][2]
            except (TypeError, ValueError):
                continue
            out.append({"chip": chip, "sensor": prefix, "label": read(os.path.join(d, prefix + "_label")) or prefix,
                        "kind": KINDS[kind][0], "value": round(value, 3), "unit": KINDS[kind][1]})
    return out


def main():
    root = "/"
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("type") == "hello":
            root = (msg.get("config") or {}).get("root", "/")
            send({"type": "hello", "protocol": 1})
        elif msg.get("type") == "invoke":
            if msg.get("command") != "sensors.read":
                send({"type": "result", "id": msg["id"], "ok": False,
                      "error": {"code": "INVALID_REQUEST", "message": "INVALID_REQUEST: unknown command"}})
                continue
            send({"type": "result", "id": msg["id"], "ok": True, "payload": {"sensors": sensors(root)}})


main()
