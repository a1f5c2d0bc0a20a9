#!/usr/bin/python3
"""Owns org.freedesktop.login1 on a private bus and emits PrepareForSleep on command.

Usage: fake_logind.py BUS_ADDRESS. Prints {"ready": true} once the name is owned; then each stdin
line "sleep" or "resume" emits PrepareForSleep(true|false) from /org/freedesktop/login1.
"""
import json, sys
import dbus
import dbus.lowlevel

bus = dbus.bus.BusConnection(sys.argv[1])
bus.request_name("org.freedesktop.login1")
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    word = line.strip()
    if word not in ("sleep", "resume"):
        continue
    msg = dbus.lowlevel.SignalMessage("/org/freedesktop/login1", "org.freedesktop.login1.Manager", "PrepareForSleep")
    msg.append(word == "sleep", signature="b")
    bus.send_message(msg)
    bus.flush()
    print(json.dumps({"sent": word}), flush=True)
