#!/usr/bin/python3
"""openclaw-node plugin: system.notify {title, body, priority?, sound?} → {sent: true, id}.

Calls org.freedesktop.Notifications.Notify on the session bus with busctl (part of systemd).
priority: passive → low urgency, active (default) → normal, timeSensitive → critical.
"""
import json, os, shutil, subprocess, sys

URGENCY = {"passive": 0, "active": 1, "timeSensitive": 2}


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def fail(mid, code, message):
    send({"type": "result", "id": mid, "ok": False, "error": {"code": code, "message": "%s: %s" % (code, message)}})


def notify(mid, p):
    title, body = p.get("title"), p.get("body", "")
    if not isinstance(title, str) or not title:
        return fail(mid, "INVALID_REQUEST", "title required")
    if not isinstance(body, str):
        return fail(mid, "INVALID_REQUEST", "body must be a string")
    priority = p.get("priority", "active")
    if priority not in URGENCY:
        return fail(mid, "INVALID_REQUEST", "priority must be one of passive, active, timeSensitive")
    busctl = shutil.which("busctl")
    if not busctl:
        return fail(mid, "NOTIFY_UNAVAILABLE", "busctl not found (it ships with systemd)")
    if not os.environ.get("DBUS_SESSION_BUS_ADDRESS") and not os.path.exists("/run/user/%d/bus" % os.getuid()):
        return fail(mid, "NOTIFY_UNAVAILABLE", "no D-Bus session bus for this user; run the node inside the desktop session "
                                               "(systemd --user service) or set DBUS_SESSION_BUS_ADDRESS")
    hints = ["1", "urgency", "y", str(URGENCY[priority])]
    if p.get("sound") is False:
        hints = ["2", "urgency", "y", str(URGENCY[priority]), "suppress-sound", "b", "true"]
    # "--" ends option parsing: the trailing expire_timeout -1 is an argument, not an option.
    cmd = [busctl, "--user", "call", "--", "org.freedesktop.Notifications", "/org/freedesktop/Notifications",
           "org.freedesktop.Notifications", "Notify", "susssasa{sv}i", "OpenClaw", "0", "", title, body, "0"] + hints + ["-1"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
    except subprocess.TimeoutExpired:
        return fail(mid, "NOTIFY_UNAVAILABLE", "the notification service did not answer within 10 s")
    if r.returncode != 0:
        return fail(mid, "NOTIFY_UNAVAILABLE", "no notification daemon answered (%s); start one (dunst, mako, or a desktop "
                                               "environment's)" % (r.stderr.strip() or "busctl failed"))
    parts = r.stdout.split()
    send({"type": "result", "id": mid, "ok": True, "payload": {"sent": True, "id": int(parts[1]) if len(parts) > 1 else 0}})


for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if msg.get("type") == "hello":
        send({"type": "hello", "protocol": 1})
    elif msg.get("type") == "invoke":
        if msg.get("command") == "system.notify":
            notify(msg["id"], msg.get("params") or {})
        else:
            fail(msg["id"], "INVALID_REQUEST", "unknown command")
