#!/usr/bin/python3
"""A notification daemon for tests: owns org.freedesktop.Notifications on the bus given as argv[1]
and prints each Notify call as a JSON line (after {"ready": true})."""
import json, sys
import dbus, dbus.service, dbus.mainloop.glib
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(sys.argv[1])


class Notifications(dbus.service.Object):
    counter = 0

    @dbus.service.method("org.freedesktop.Notifications", in_signature="susssasa{sv}i", out_signature="u")
    def Notify(self, app, replaces, icon, summary, body, actions, hints, timeout):
        Notifications.counter += 1
        print(json.dumps({"notify": {"app": str(app), "summary": str(summary), "body": str(body),
                                     "urgency": int(hints.get("urgency", -1)),
                                     "suppressSound": bool(hints.get("suppress-sound", False))}}), flush=True)
        return dbus.UInt32(Notifications.counter)


name = dbus.service.BusName("org.freedesktop.Notifications", bus)
Notifications(bus, "/org/freedesktop/Notifications")
print(json.dumps({"ready": True}), flush=True)
GLib.MainLoop().run()
