#!/usr/bin/env python3
# A headless gnome-shell starts in the overview (workspace thumbnails over the windows); a person
# leaves it with Escape. This does that through Mutter's RemoteDesktop API on the session bus of
# DBUS_SESSION_BUS_ADDRESS and returns once org.gnome.Shell reports the overview closed.
import sys
import time

import dbus

bus = dbus.SessionBus()
shell = bus.get_object("org.gnome.Shell", "/org/gnome/Shell")


def overview():
    return bool(shell.Get("org.gnome.Shell", "OverviewActive", dbus_interface="org.freedesktop.DBus.Properties"))


rd = bus.get_object("org.gnome.Mutter.RemoteDesktop", "/org/gnome/Mutter/RemoteDesktop")
path = rd.CreateSession(dbus_interface="org.gnome.Mutter.RemoteDesktop")
session = dbus.Interface(bus.get_object("org.gnome.Mutter.RemoteDesktop", path), "org.gnome.Mutter.RemoteDesktop.Session")
session.Start()
started = time.monotonic()
try:
    while overview() and time.monotonic() - started < 10:
        # Mutter makes its virtual keyboard on first use and drops that first key: Shift warms it.
        for keysym in (0xFFE1, 0xFF1B):
            session.NotifyKeyboardKeysym(dbus.UInt32(keysym), True)
            session.NotifyKeyboardKeysym(dbus.UInt32(keysym), False)
        # The shell's answer, asked until it comes or half a second passes (then Escape again).
        sent = time.monotonic()
        while overview() and time.monotonic() - sent < 0.5:
            pass
finally:
    session.Stop()
sys.exit(1 if overview() else 0)
