# The measuring half of scripts/bench-gnome: a private headless GNOME session (as the tests make
# it: Tests/TestSupport/Sources/GnomeShell.swift), the node's screen.snapshot and screen.record
# against reading the same Mutter screen cast directly with GStreamer's pipewiresrc.
#   python3 bench_gnome_measure.py NODE_BIN RUNS JSON(0|1)
# Every process it starts is stopped by its PID; the session's folder is removed.
from bench_rows import emit
from bench_session import Processes, recording_cpu, stop, wait_for
import json, os, resource, shutil, signal, statistics, subprocess, sys, tempfile, time

NODE, RUNS, AS_JSON = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
T = tempfile.mkdtemp(prefix="ocn-bench-gnome-")
RUN = T + "/run"
os.makedirs(RUN, mode=0o700)
os.makedirs(T + "/home/.config/glib-2.0/settings")
with open(T + "/home/.config/glib-2.0/settings/keyfile", "w") as f:
    f.write("[org/gnome/desktop/notifications]\nshow-banners=false\n")
ENV = dict(os.environ, XDG_RUNTIME_DIR=RUN, HOME=T + "/home", DBUS_SESSION_BUS_ADDRESS="unix:path=%s/bus" % RUN,
           DBUS_SYSTEM_BUS_ADDRESS="unix:path=%s/system_bus" % RUN, WAYLAND_DISPLAY="wayland-0", XDG_CURRENT_DESKTOP="GNOME",
           XDG_SESSION_TYPE="wayland", GSETTINGS_BACKEND="keyfile", NO_AT_BRIDGE="1", GTK_A11Y="none", OPENCLAW_NODE_LOG="warn")
PROCS = Processes(ENV)
start = PROCS.start


def has_owner(name):
    r = subprocess.run(["dbus-send", "--bus=" + ENV["DBUS_SESSION_BUS_ADDRESS"], "--print-reply", "--dest=org.freedesktop.DBus",
                        "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", "string:" + name], capture_output=True, text=True)
    return "boolean true" in r.stdout


def session():
    PROCS.buses(RUN, T)
    start(["pipewire"])
    wait_for(lambda: os.path.exists(RUN + "/pipewire-0"), 10, "pipewire")
    start(["wireplumber"])
    start(["gnome-shell", "--headless", "--wayland", "--no-x11", "--virtual-monitor", "1280x720"])
    wait_for(lambda: has_owner("org.gnome.Mutter.ScreenCast") and has_owner("org.gnome.Shell"), 30, "gnome-shell")


def probe(animate):
    log = T + "/probe.log"
    p = start(["/usr/bin/python3", ROOT + "/Tests/gnome/probe_window.py", "--connector", "Meta-0", "--colour", "336699", "--log", log]
              + (["--animate", str(animate)] if animate else []))
    wait_for(lambda: os.path.exists(log) and "READY" in open(log).read(), 20, "the probe window")
    # GNOME starts in its overview, over the windows: Escape, as a person would.
    subprocess.run(["/usr/bin/python3", ROOT + "/Tests/gnome/leave_overview.py"], env=ENV, check=True, capture_output=True)
    return p


class Cast:
    """A Mutter screen cast of Meta-0 opened directly (what the reference reads)."""

    def __init__(self, cursor=0):
        import dbus
        import dbus.mainloop.glib
        from gi.repository import GLib
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        self.bus = dbus.bus.BusConnection(ENV["DBUS_SESSION_BUS_ADDRESS"])
        sc = self.bus.get_object("org.gnome.Mutter.ScreenCast", "/org/gnome/Mutter/ScreenCast")
        path = sc.CreateSession(dbus.Dictionary({}, signature="sv"), dbus_interface="org.gnome.Mutter.ScreenCast")
        self.session = dbus.Interface(self.bus.get_object("org.gnome.Mutter.ScreenCast", path), "org.gnome.Mutter.ScreenCast.Session")
        stream = self.session.RecordMonitor("Meta-0", dbus.Dictionary({"cursor-mode": dbus.UInt32(cursor)}, signature="sv"))
        loop = GLib.MainLoop()
        self.node = None

        def added(node):
            self.node = int(node)
            loop.quit()
        self.bus.add_signal_receiver(added, "PipeWireStreamAdded", "org.gnome.Mutter.ScreenCast.Stream", path=stream)
        self.session.Start()
        GLib.timeout_add(5000, loop.quit)
        loop.run()
        if self.node is None:
            raise RuntimeError("no PipeWire node from Mutter")

    def close(self):
        self.session.Stop()
        self.bus.close()


def reference_snapshot():
    t = time.monotonic()
    cast = Cast()
    r = subprocess.run(["gst-launch-1.0", "-q", "pipewiresrc", "path=%d" % cast.node, "num-buffers=1", "!", "videoconvert", "!",
                        "pngenc", "!", "filesink", "location=" + T + "/ref.png"], env=ENV, capture_output=True)
    cast.close()
    if r.returncode != 0:
        raise RuntimeError("gst-launch: " + r.stderr.decode()[-300:])
    return (time.monotonic() - t) * 1000


def timed(argv):
    t = time.monotonic()
    r = subprocess.run(argv, env=ENV, capture_output=True)
    if r.returncode != 0:
        raise RuntimeError("%s: %s %s" % (" ".join(argv[1:3]), r.stdout.decode()[-300:], r.stderr.decode()[-300:]))
    p = json.loads(r.stdout)
    assert p.get("width") == 1280 or p.get("format") == "mp4", {k: v for k, v in p.items() if k != "base64"}
    return (time.monotonic() - t) * 1000


def reference_record_cpu(seconds):
    """gst: the cast at 10 fps (frames repeated on a still screen) into H.264/MP4 with x264 veryfast."""
    cast = Cast(cursor=1)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.Popen(["gst-launch-1.0", "-q", "-e", "pipewiresrc", "path=%d" % cast.node, "keepalive-time=100", "!", "videorate", "!",
                          "video/x-raw,framerate=10/1", "!", "videoconvert", "!", "x264enc", "speed-preset=veryfast", "!", "mp4mux", "!",
                          "filesink", "location=" + T + "/ref.mp4"], env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(seconds)
    p.send_signal(signal.SIGINT)
    p.wait(30)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cast.close()
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


rows = []
try:
    session()
    cfg = T + "/node.json5"
    with open(cfg, "w") as f:
        f.write("{ node: { stateDir: '%s/state' }, presence: { mode: 'always' }, capabilities: { screen: { backend: 'gnome' } } }" % T)
    snap = [NODE, "invoke", "screen.snapshot", "--compact", "--config", cfg, "--params",
            '{"format":"png","maxWidth":1280,"includePointer":false}']
    window = probe(0)
    ref_ms = statistics.median(reference_snapshot() for _ in range(RUNS))
    cold_ms = statistics.median(timed(snap + ["--local"]) for _ in range(RUNS))
    daemon = start([NODE, "run", "--config", cfg])
    try:
        wait_for(lambda: os.path.exists(T + "/state/control.sock"), 30, "the daemon")
        timed(snap)
        warm_ms = statistics.median(timed(snap) for _ in range(RUNS))
        record = [NODE, "invoke", "screen.record", "--compact", "--config", cfg, "--params", '{"durationMs":5000,"fps":10}']
        cpu, window = recording_cpu(daemon, lambda: timed(record), reference_record_cpu, window, probe)
    finally:
        stop(daemon)
    rows.append(("GNOME screen.snapshot 1280x720 PNG, warm (running daemon)", "%.0f ms" % warm_ms,
                 "%.0f ms (Mutter ScreenCast + gst pipewiresrc num-buffers=1 ! pngenc)" % ref_ms, "%.2fx" % (ref_ms / warm_ms)))
    rows.append(("GNOME screen.snapshot 1280x720 PNG, cold (invoke --local)", "%.0f ms" % cold_ms,
                 "%.0f ms (the same)" % ref_ms, "%.2fx" % (ref_ms / cold_ms)))
    for moving, label in [(False, "still"), (True, "moving (20 changes/s)")]:
        node_cpu, ref_cpu = cpu[moving]
        rows.append(("GNOME screen.record 5 s @ 10 fps, %s screen, CPU" % label, "%.2f s" % node_cpu,
                     "%.2f s (gst pipewiresrc ! videorate ! x264enc veryfast ! mp4mux)" % ref_cpu, "%.2fx" % (ref_cpu / max(node_cpu, 0.01))))
finally:
    PROCS.stop_all()
    shutil.rmtree(T, ignore_errors=True)

emit(rows, AS_JSON, "Headless gnome-shell, one 1280x720 virtual monitor, medians of %d runs" % RUNS)
