#!/usr/bin/python3
"""Owns org.freedesktop.login1 on a private bus: emits PrepareForSleep on command, and answers
Manager.Inhibit as logind does (a pipe's write end as the UNIX_FD; the lock lasts until every copy
of that descriptor is closed), recording each call and when its lock ends.

Usage: fake_logind.py BUS_ADDRESS. Prints {"ready": true} once the name is owned; then each stdin
line "sleep" or "resume" emits PrepareForSleep(true|false) from /org/freedesktop/login1. Each
Inhibit call prints {"inhibit": {"id", "what", "who", "why", "mode"}}; the end of that lock (the
holder closed its descriptor, or exited) prints {"released": id}.
"""
import json, os, sys
import dbus
import dbus.lowlevel
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(sys.argv[1])
name = dbus.service.BusName("org.freedesktop.login1", bus)


def say(obj):
    print(json.dumps(obj), flush=True)


class Manager(dbus.service.Object):
    def __init__(self):
        super().__init__(bus, "/org/freedesktop/login1")
        self.next = 0

    @dbus.service.method("org.freedesktop.login1.Manager", in_signature="ssss", out_signature="h")
    def Inhibit(self, what, who, why, mode):
        self.next += 1
        lock = self.next
        r, w = os.pipe()
        say({"inhibit": {"id": lock, "what": str(what), "who": str(who), "why": str(why), "mode": str(mode)}})

        def ended(fd, _cond):
            os.close(fd)
            say({"released": lock})
            return False
        GLib.io_add_watch(r, GLib.IO_HUP | GLib.IO_ERR, ended)
        fd = dbus.types.UnixFd(w)   # dbus-python dups it; ours is closed here, as logind keeps only the read end
        os.close(w)
        return fd


manager = Manager()


pending = b""


def command(fd, _cond):
    # Read from the descriptor, not through Python's buffered file: lines it buffered would wait
    # for more input that may never come.
    global pending
    chunk = os.read(fd, 4096)
    if not chunk:
        loop.quit()
        return False
    pending += chunk
    while b"\n" in pending:
        line, pending = pending.split(b"\n", 1)
        word = line.decode().strip()
        if word in ("sleep", "resume"):
            msg = dbus.lowlevel.SignalMessage("/org/freedesktop/login1", "org.freedesktop.login1.Manager", "PrepareForSleep")
            msg.append(word == "sleep", signature="b")
            bus.send_message(msg)
            bus.flush()
            say({"sent": word})
    return True


loop = GLib.MainLoop()
GLib.io_add_watch(sys.stdin.fileno(), GLib.IO_IN | GLib.IO_HUP, command)
say({"ready": True})
loop.run()
