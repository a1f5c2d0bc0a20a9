#!/usr/bin/python3
"""Owns org.freedesktop.ScreenSaver on a private session bus, as a desktop's session does (KDE's,
and what xdg-desktop-portal-gtk hands an idle inhibition to when no GNOME session manager runs):
records each Inhibit(application, reason) and UnInhibit(cookie).

Usage: fake_screensaver.py BUS_ADDRESS. Prints {"ready": true} once the name is owned; each Inhibit
prints {"inhibit": {"cookie", "application", "reason"}}, each UnInhibit {"uninhibit": cookie}.
"""
import json, sys
import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(sys.argv[1])
name = dbus.service.BusName("org.freedesktop.ScreenSaver", bus)


def say(obj):
    print(json.dumps(obj), flush=True)


class ScreenSaver(dbus.service.Object):
    def __init__(self):
        super().__init__(bus, "/org/freedesktop/ScreenSaver")
        self.next = 0

    @dbus.service.method("org.freedesktop.ScreenSaver", in_signature="ss", out_signature="u")
    def Inhibit(self, application, reason):
        self.next += 1
        say({"inhibit": {"cookie": self.next, "application": str(application), "reason": str(reason)}})
        return dbus.UInt32(self.next)

    @dbus.service.method("org.freedesktop.ScreenSaver", in_signature="u", out_signature="")
    def UnInhibit(self, cookie):
        say({"uninhibit": int(cookie)})

    @dbus.service.method("org.freedesktop.ScreenSaver", in_signature="", out_signature="b")
    def GetActive(self):
        return False


ScreenSaver()
say({"ready": True})
GLib.MainLoop().run()
