# The measuring half of scripts/bench-kde: a private headless KWin (kwin_wayland --virtual, as the
# tests make it: Tests/TestSupport/Sources/KWinSession.swift) with the package's grant pointed at
# the node's binary, and the node's screen.snapshot against calling KWin's ScreenShot2 directly
# from a copy of python3 that a second entry grants it (KWin matches the caller's executable); and
# screen.record's CPU (the daemon and its encoder process) on a still and a moving screen against
# that python3 polling ScreenShot2 at the same rate into ffmpeg's libx264 (veryfast): KWin 5.27's
# virtual backend sends screen casts no frames, so polling is what a script can do there too.
#   python3 bench_kde_measure.py NODE_BIN RUNS JSON(0|1)
# Every process it starts is stopped by its PID; the session's folder is removed.
from bench_rows import emit
from bench_session import Processes, recording_cpu, stop, wait_for
import json, os, resource, shutil, statistics, subprocess, sys, tempfile, time

NODE, RUNS, AS_JSON = os.path.realpath(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
T = tempfile.mkdtemp(prefix="ocn-bench-kde-")
RUN = T + "/run"
for d in ("run", "home/.config", "cache", "share/applications", "bin"):
    os.makedirs(os.path.join(T, d))
os.chmod(RUN, 0o700)
ENV = dict(os.environ, XDG_RUNTIME_DIR=RUN, HOME=T + "/home", XDG_CACHE_HOME=T + "/cache", XDG_CONFIG_HOME=T + "/home/.config",
           XDG_DATA_DIRS=T + "/share:/usr/share", DBUS_SESSION_BUS_ADDRESS="unix:path=%s/bus" % RUN,
           DBUS_SYSTEM_BUS_ADDRESS="unix:path=%s/system_bus" % RUN, WAYLAND_DISPLAY="wayland-0", XDG_CURRENT_DESKTOP="KDE",
           XDG_SESSION_TYPE="wayland", NO_AT_BRIDGE="1", GTK_A11Y="none", OPENCLAW_NODE_LOG="warn")
PROCS = Processes(ENV)
start = PROCS.start
PYTHON = T + "/bin/python-kwin-shot"

# Both references' one screenshot: ScreenShot2.CaptureScreen into a pipe, read whole (raw pixels).
CAPTURE = r'''
import os, subprocess, sys, threading, time, dbus
bus = dbus.bus.BusConnection(os.environ["DBUS_SESSION_BUS_ADDRESS"])
shot = dbus.Interface(bus.get_object("org.kde.KWin", "/org/kde/KWin/ScreenShot2"), "org.kde.KWin.ScreenShot2")
def capture():
    r, w = os.pipe()
    data = []
    reader = threading.Thread(target=lambda: data.append(open(r, "rb").read()))
    reader.start()
    info = shot.CaptureScreen("Virtual-0", {"include-cursor": False, "native-resolution": True}, dbus.types.UnixFd(w))
    os.close(w)
    reader.join()
    width, height, stride = int(info["width"]), int(info["height"]), int(info["stride"])
    assert len(data[0]) >= stride * height, info
    return width, height, stride, data[0]
'''

# The snapshot reference: the median time of one screenshot (no encoding).
SHOT = CAPTURE + r'''
times = []
for _ in range(int(sys.argv[1])):
    t = time.monotonic()
    capture()
    times.append((time.monotonic() - t) * 1000)
print(sorted(times)[len(times) // 2])
'''

# The recording reference: a screenshot every 1/FPS s for SECONDS, raw frames into ffmpeg (libx264
# veryfast, yuv420p, MP4), as the node records (the same rate, codec preset and container).
RECORD = CAPTURE + r'''
seconds, fps, out = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
enc = None
start = time.monotonic()
for i in range(int(seconds * fps)):
    width, height, stride, pixels = capture()
    frame = pixels[:stride * height] if stride == width * 4 else b"".join(pixels[y * stride:y * stride + width * 4] for y in range(height))
    if enc is None:
        enc = subprocess.Popen(["ffmpeg", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "bgra", "-s", "%dx%d" % (width, height),
                                "-r", str(fps), "-i", "-", "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", out],
                               stdin=subprocess.PIPE)
    enc.stdin.write(frame)
    time.sleep(max(0, start + (i + 1) / fps - time.monotonic()))
enc.stdin.close()
enc.wait()
'''


def reference_record_cpu(seconds):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([PYTHON, "-c", RECORD, str(seconds), "10", T + "/ref.mp4"], env=ENV, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def probe(animate):
    log = T + "/probe.log"
    if os.path.exists(log):
        os.remove(log)
    p = start(["/usr/bin/python3", ROOT + "/Tests/gnome/probe_window.py", "--connector", "Virtual-0", "--colour", "336699", "--log", log]
              + (["--animate", str(animate)] if animate else []))
    wait_for(lambda: os.path.exists(log) and "READY" in open(log).read(), 20, "the probe window")
    return p


def grant(name, exe):
    with open(ROOT + "/scripts/debian/ai.openclaw.node.desktop") as f:
        entry = f.read().replace("\nExec=/usr/lib/openclaw-node/openclaw-node\n", "\nExec=%s\n" % exe)
    with open("%s/share/applications/%s.desktop" % (T, name), "w") as f:
        f.write(entry)


def timed(argv):
    t = time.monotonic()
    r = subprocess.run(argv, env=ENV, capture_output=True)
    if r.returncode != 0:
        raise RuntimeError("%s: %s %s" % (" ".join(argv[1:3]), r.stdout.decode()[-300:], r.stderr.decode()[-300:]))
    p = json.loads(r.stdout)
    assert p.get("width") == 1280 or p.get("format") == "mp4", {k: v for k, v in p.items() if k != "base64"}
    return (time.monotonic() - t) * 1000


rows = []
try:
    shutil.copy(os.path.realpath("/usr/bin/python3"), PYTHON)
    grant("ai.openclaw.node", NODE)
    grant("bench-python", PYTHON)
    subprocess.run(["kbuildsycoca5", "--noincremental"], env=ENV, check=True, capture_output=True)
    PROCS.buses(RUN, T)
    shutil.copy("/usr/bin/kwin_wayland", T + "/bin/kwin_wayland")  # drops the file capability
    start([T + "/bin/kwin_wayland", "--virtual", "--width", "1280", "--height", "720", "--no-lockscreen", "--socket", "wayland-0"])
    wait_for(lambda: os.path.exists(RUN + "/wayland-0"), 30, "kwin_wayland")
    window = probe(0)
    ref = subprocess.run([PYTHON, "-c", SHOT, str(RUNS)], env=ENV, capture_output=True, text=True)
    if ref.returncode != 0:
        raise RuntimeError("the reference: " + ref.stderr[-400:])
    ref_ms = float(ref.stdout)
    cfg = T + "/node.json5"
    with open(cfg, "w") as f:
        f.write("{ node: { stateDir: '%s/state' }, presence: { mode: 'always' }, capabilities: { screen: { backend: 'kde' } } }" % T)
    snap = [NODE, "invoke", "screen.snapshot", "--compact", "--config", cfg, "--params", '{"format":"png","maxWidth":1280,"includePointer":false}']
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
    rows.append(("KDE screen.snapshot 1280x720 PNG, warm (running daemon)", "%.0f ms" % warm_ms,
                 "%.0f ms (ScreenShot2.CaptureScreen called directly: raw pixels, not encoded)" % ref_ms, "%.2fx" % (ref_ms / warm_ms)))
    rows.append(("KDE screen.snapshot 1280x720 PNG, cold (invoke --local)", "%.0f ms" % cold_ms, "%.0f ms (the same)" % ref_ms,
                 "%.2fx" % (ref_ms / cold_ms)))
    for moving, label in [(False, "still"), (True, "moving (20 changes/s)")]:
        node_cpu, ref_cpu = cpu[moving]
        rows.append(("KDE screen.record 5 s @ 10 fps, %s screen, CPU" % label, "%.2f s" % node_cpu,
                     "%.2f s (ScreenShot2 polled at 10 fps into ffmpeg libx264 veryfast)" % ref_cpu, "%.2fx" % (ref_cpu / max(node_cpu, 0.01))))
finally:
    PROCS.stop_all()
    shutil.rmtree(T, ignore_errors=True)

emit(rows, AS_JSON, "Headless kwin_wayland --virtual, one 1280x720 output, medians of %d runs" % RUNS)
