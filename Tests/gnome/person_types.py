#!/usr/bin/env python3
# A person at a GNOME session, for the presence tests: presses and releases Shift through a
# RemoteDesktop session of its own (another process than the node, so not the node's input), and
# returns once GNOME's idle monitor has it. Mutter drops the first event of a new virtual
# keyboard, so it presses again until the idle monitor shows a key pressed after it began.
import sys
import time

import dbus

bus = dbus.SessionBus()
idle = bus.get_object("org.gnome.Mutter.IdleMonitor", "/org/gnome/Mutter/IdleMonitor/Core")
rd = bus.get_object("org.gnome.Mutter.RemoteDesktop", "/org/gnome/Mutter/RemoteDesktop")
path = rd.CreateSession(dbus_interface="org.gnome.Mutter.RemoteDesktop")
session = dbus.Interface(bus.get_object("org.gnome.Mutter.RemoteDesktop", path), "org.gnome.Mutter.RemoteDesktop.Session")
session.Start()
started = time.monotonic()
try:
    while time.monotonic() - started < 10:
        sent = time.monotonic()
        session.NotifyKeyboardKeysym(dbus.UInt32(0xFFE1), True)
        session.NotifyKeyboardKeysym(dbus.UInt32(0xFFE1), False)
        # Asked until the key shows or half a second passes (then it was dropped: press again).
        while time.monotonic() - sent < 0.5:
            idle_ms = int(idle.GetIdletime(dbus_interface="org.gnome.Mutter.IdleMonitor"))
            if idle_ms <= (time.monotonic() - sent) * 1000 + 2:
                sys.exit(0)
finally:
    session.Stop()
sys.exit("GNOME's idle monitor never showed the key")
