#!/usr/bin/env python3
# A person at a GNOME session answering the desktop portal's "Screen Share" dialog (GNOME 43's
# xdg-desktop-portal-gnome), once: picks the first monitor in its list and presses Share, or
# presses Cancel. Through Mutter's RemoteDesktop on the real session bus (DBUS_SESSION_BUS_ADDRESS),
# with a screen cast of the monitor for absolute pointer positions. The dialog is centred on the
# monitor with a fixed size, so its parts sit at fixed offsets from the centre. The test runs this
# when it sees the dialog on the screen.
#   person_answers_share.py share|cancel CONNECTOR WIDTH HEIGHT
import sys
import time

import dbus

answer, connector, width, height = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
bus = dbus.SessionBus()
rd_path = bus.get_object("org.gnome.Mutter.RemoteDesktop", "/org/gnome/Mutter/RemoteDesktop").CreateSession(
    dbus_interface="org.gnome.Mutter.RemoteDesktop")
rd_object = bus.get_object("org.gnome.Mutter.RemoteDesktop", rd_path)
rd = dbus.Interface(rd_object, "org.gnome.Mutter.RemoteDesktop.Session")
session_id = rd_object.Get("org.gnome.Mutter.RemoteDesktop.Session", "SessionId", dbus_interface="org.freedesktop.DBus.Properties")
sc_path = bus.get_object("org.gnome.Mutter.ScreenCast", "/org/gnome/Mutter/ScreenCast").CreateSession(
    {"remote-desktop-session-id": session_id}, dbus_interface="org.gnome.Mutter.ScreenCast")
stream = dbus.Interface(bus.get_object("org.gnome.Mutter.ScreenCast", sc_path), "org.gnome.Mutter.ScreenCast.Session").RecordMonitor(connector, {})
rd.Start()

cx, cy = width / 2, height / 2
# Measured on GNOME 43 at 1280x720: the monitor row at (640, 401), Share at (852, 249), Cancel at (430, 249).
ROW, SHARE, CANCEL = (0, 41), (212, -111), (-210, -111)
idle = bus.get_object("org.gnome.Mutter.IdleMonitor", "/org/gnome/Mutter/IdleMonitor/Core")


def handled(send):
    """Sends an event until GNOME's idle monitor shows it handled: Mutter answers the call before
    its compositor handles the event, drops the first event of a session's new virtual pointer,
    and refuses motion before the session's stream runs. Each try is asked about until it shows
    or half a second passes (then sent again); at most 10 s in all."""
    started = time.monotonic()
    while time.monotonic() - started < 10:
        sent = time.monotonic()
        try:
            send()
        except dbus.DBusException:
            continue  # the stream is not running yet
        while time.monotonic() - sent < 0.5:
            if int(idle.GetIdletime(dbus_interface="org.gnome.Mutter.IdleMonitor")) <= (time.monotonic() - sent) * 1000 + 2:
                return
    sys.exit("GNOME never handled the person's input")


def click(offset):
    handled(lambda: rd.NotifyPointerMotionAbsolute(stream, float(cx + offset[0]), float(cy + offset[1])))
    handled(lambda: rd.NotifyPointerButton(272, True))
    handled(lambda: rd.NotifyPointerButton(272, False))


try:
    if answer == "share":
        click(ROW)
        click(SHARE)
    else:
        click(CANCEL)
finally:
    rd.Stop()
