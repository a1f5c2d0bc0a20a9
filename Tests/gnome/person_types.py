#!/usr/bin/env python3
# A person at a GNOME session, for the presence tests: presses and releases Shift through a
# RemoteDesktop session of its own (another process than the node, so not the node's input).
import time

import dbus

bus = dbus.SessionBus()
rd = bus.get_object("org.gnome.Mutter.RemoteDesktop", "/org/gnome/Mutter/RemoteDesktop")
path = rd.CreateSession(dbus_interface="org.gnome.Mutter.RemoteDesktop")
session = dbus.Interface(bus.get_object("org.gnome.Mutter.RemoteDesktop", path), "org.gnome.Mutter.RemoteDesktop.Session")
session.Start()
try:
    # The first event of a new session makes Mutter's virtual keyboard (and may be dropped).
    for _ in range(2):
        session.NotifyKeyboardKeysym(dbus.UInt32(0xFFE1), True)
        session.NotifyKeyboardKeysym(dbus.UInt32(0xFFE1), False)
        time.sleep(0.2)
finally:
    session.Stop()
