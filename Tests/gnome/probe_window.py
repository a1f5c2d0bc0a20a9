#!/usr/bin/env python3
# A GTK 4 window for the GNOME/KDE tests: fullscreen on one monitor (named by its connector), one
# solid colour, and every click, key, scroll and pointer move it receives written to a log, one
# line each, so a test can check what reached a real client.
#   probe_window.py --connector Meta-0 --colour ff0000 --log FILE [--animate FPS]
# --animate: the colour changes FPS times a second (a screen that moves, for the benchmarks).
# Lines: "READY WxH", "CLICK button x y", "RELEASE button x y", "KEY keyval name", "TEXT utf8",
# "SCROLL dx dy", "MOTION x y".
import argparse
import sys

import gi

gi.require_version("Gtk", "4.0")
gi.require_version("Gdk", "4.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--connector", required=True)
ap.add_argument("--colour", required=True)
ap.add_argument("--log", required=True)
ap.add_argument("--animate", type=int, default=0)
args = ap.parse_args()

log = open(args.log, "a", buffering=1)


def say(line):
    log.write(line + "\n")


class Probe(Gtk.Application):
    def __init__(self):
        super().__init__(application_id=None)

    def do_activate(self):
        css = Gtk.CssProvider()
        css.load_from_data(("window, window * { background: #%s; }" % args.colour).encode())
        Gtk.StyleContext.add_provider_for_display(Gdk.Display.get_default(), css, Gtk.STYLE_PROVIDER_PRIORITY_USER)
        win = Gtk.ApplicationWindow(application=self, title="probe " + args.connector)
        win.set_decorated(False)
        # A text entry takes typing (with its input method, as real apps do); it is the window's
        # only child and fills it, so the window stays one colour.
        entry = Gtk.Text()
        entry.connect("changed", lambda e: say("TEXT " + e.get_text()))
        win.set_child(entry)
        click = Gtk.GestureClick(button=0)

        # Claimed, so the text's own gestures never see it: a right click would open its context
        # menu, which then takes the next clicks and keys. Focus goes to the text by hand.
        def pressed(g, n, x, y):
            say("CLICK %d %d %d" % (g.get_current_button(), x, y))
            g.set_state(Gtk.EventSequenceState.CLAIMED)
            entry.grab_focus_without_selecting()
        click.connect("pressed", pressed)
        click.connect("released", lambda g, n, x, y: say("RELEASE %d %d %d" % (g.get_current_button(), x, y)))
        click.set_propagation_phase(Gtk.PropagationPhase.CAPTURE)
        win.add_controller(click)
        keys = Gtk.EventControllerKey()
        keys.connect("key-pressed", lambda c, keyval, code, state: say("KEY %d %s" % (keyval, Gdk.keyval_name(keyval))) or False)
        keys.set_propagation_phase(Gtk.PropagationPhase.CAPTURE)
        win.add_controller(keys)
        scroll = Gtk.EventControllerScroll(flags=Gtk.EventControllerScrollFlags.BOTH_AXES)
        scroll.connect("scroll", lambda c, dx, dy: say("SCROLL %g %g" % (dx, dy)) or False)
        win.add_controller(scroll)
        motion = Gtk.EventControllerMotion()
        motion.connect("motion", lambda c, x, y: say("MOTION %d %d" % (x, y)))
        win.add_controller(motion)

        monitors = Gdk.Display.get_default().get_monitors()
        target = None
        for i in range(monitors.get_n_items()):
            m = monitors.get_item(i)
            if m.get_connector() == args.connector:
                target = m
        if target is None:
            print("no monitor %s" % args.connector, file=sys.stderr)
            sys.exit(2)
        geometry = target.get_geometry()

        # Ready once the window is shown at the monitor's size (fullscreen took effect), plus a
        # moment for the compositor to show its first frame.
        def ready():
            if not win.get_mapped() or win.get_width() != geometry.width or win.get_height() != geometry.height:
                return True
            GLib.timeout_add(200, lambda: say("READY %dx%d" % (win.get_width(), win.get_height())) or False)
            return False
        win.fullscreen_on_monitor(target)
        win.present()
        entry.grab_focus()
        GLib.timeout_add(50, ready)
        if args.animate > 0:
            step = [0]

            def animate():
                step[0] = (step[0] + 1) % 256
                css.load_from_data(("window, window * { background: #%02x%s; }" % (step[0], args.colour[2:])).encode())
                return True
            GLib.timeout_add(max(1, 1000 // args.animate), animate)


Probe().run([])
