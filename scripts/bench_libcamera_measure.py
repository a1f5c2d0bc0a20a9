# The measuring half of scripts/bench-libcamera, run inside its Debian 13 root (python3 there):
#   python3 measure.py RUNS JSON(0|1)
# Every process it starts is waited for; the daemon is stopped by its PID.
from bench_rows import emit
import json, os, statistics, subprocess, sys, time

RUNS, AS_JSON = int(sys.argv[1]), sys.argv[2] == "1"
B = "/opt/bench"
ENV = dict(os.environ, LD_PRELOAD=B + "/fake_udmabuf.so", LIBCAMERA_PIPELINES_MATCH_LIST="virtual",
           LIBCAMERA_LOG_LEVELS="*:ERROR", OPENCLAW_NODE_CAMERA_DIR=B + "/dev", OPENCLAW_NODE_LOG="warn",
           HOME=B, GST_REGISTRY=B + "/gst-registry.bin")


def config(name, camera):
    path = "%s/%s.json5" % (B, name)
    with open(path, "w") as f:
        f.write("{ node: { stateDir: '%s/state-%s', releaseIdleLibrariesAfter: 5 }, presence: { mode: 'always' },"
                " capabilities: { camera: { backend: 'libcamera'%s } } }" % (B, name, camera))
    return path


def timed(argv, output=None):
    if output and os.path.exists(output):
        os.unlink(output)
    t = time.monotonic()
    r = subprocess.run(argv, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    ms = (time.monotonic() - t) * 1000
    # gstreamer1.0-libcamera 0.4 often aborts at the end of the stream (an assertion in its
    # request queue) after the picture is written: the picture is what counts for it.
    if output and os.path.exists(output) and os.path.getsize(output) > 1000:
        return ms, r.stdout
    if r.returncode != 0:
        raise RuntimeError("%s failed: %s %s" % (" ".join(argv[:3]), r.stdout.decode()[-300:], r.stderr.decode()[-300:]))
    return ms, r.stdout


def median(argv, check=None, output=None):
    times = []
    for _ in range(RUNS):
        ms, out = timed(argv, output)
        if check:
            check(out)
        times.append(ms)
    return statistics.median(times)


def check_snap(out):
    p = json.loads(out)
    assert p["width"] == 1280 and p["height"] == 720, {k: v for k, v in p.items() if k != "base64"}


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))


# Discovery kept 10 s + node.releaseIdleLibrariesAfter 5 s + a margin.
RELEASED_AFTER_S = 17


def libcamera_maps(pid):
    with open("/proc/%d/maps" % pid) as f:
        return sorted({l.split()[-1].rsplit("/", 1)[-1] for l in f if "libcamera" in l and "/" in l})



def wait_for(pred, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.1)
    return False


def snap_cmd(cfg, local):
    return ["openclaw-node", "invoke", "camera.snap", "--compact", "--config", cfg, "--params", '{"maxWidth":1280}'] + (["--local"] if local else [])


# libcamerasrc has no num-buffers; jpegenc's snapshot mode ends the stream after its first picture.
gst = ["gst-launch-1.0", "-q", "libcamerasrc", "!", "video/x-raw,width=1280,height=720", "!",
       "jpegenc", "snapshot=true", "!", "filesink", "location=" + B + "/gst.jpg"]
cam = ["cam", "--camera", "1", "--capture=1", "--stream", "width=1280,height=720", "--file=" + B + "/cam.bin"]
timed(gst, B + "/gst.jpg")  # builds GStreamer's plugin registry once, outside the measurement
gst_ms, cam_ms = median(gst, output=B + "/gst.jpg"), median(cam)

rows = []
memory = []
for name, camera, label in [("settle", "", "default warm-up (500 ms of frames)"), ("first", ", warmup: 'never'", "warmup 'never' (first frame)")]:
    cfg = config(name, camera)
    cold = median(snap_cmd(cfg, True), check_snap)
    daemon = subprocess.Popen(["openclaw-node", "run", "--config", cfg], env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if not wait_for(lambda: os.path.exists("%s/state-%s/control.sock" % (B, name)), 30):
            raise RuntimeError("the daemon did not start")
        if name == "first":
            # Idle: the start-up probe's discovery forgotten (kept 10 s) and libcamera released
            # (5 s idle) — its pages stay mapped, see below; what it allocated is gone.
            time.sleep(RELEASED_AFTER_S)
            idle = rss_kib(daemon.pid)
        timed(snap_cmd(cfg, False))
        warm = median(snap_cmd(cfg, False), check_snap)
        if name == "first":
            loaded = rss_kib(daemon.pid)
            time.sleep(RELEASED_AFTER_S)
            memory = [idle, loaded, rss_kib(daemon.pid), libcamera_maps(daemon.pid)]
    finally:
        daemon.terminate()
        daemon.wait(15)
    for mode, ms in [("cold (invoke --local)", cold), ("warm (running daemon)", warm)]:
        rows.append(("camera.snap 1280x720 libcamera, %s, %s" % (mode, label), "%.0f ms" % ms,
                     "%.0f ms (gst-launch libcamerasrc ! jpegenc snapshot=true)" % gst_ms, "%.2fx" % (gst_ms / ms)))
    rows.append(("camera.snap 1280x720 libcamera, warm, %s, vs cam" % label, "%.0f ms" % warm,
                 "%.0f ms (cam --capture=1 --file, raw frame)" % cam_ms, "%.2fx" % (cam_ms / warm)))

idle, loaded, after, still_mapped = memory
rows.append(("daemon VmRSS right after libcamera snaps", "idle + %.1f MiB" % ((loaded - idle) / 1024),
             "idle (%d s after start) %.1f MiB" % (RELEASED_AFTER_S, idle / 1024), "-"))
# libcamera's C++ inline statics are STB_GNU_UNIQUE symbols, which make glibc ignore dlclose: its
# pages stay mapped, while the camera manager, its threads and buffers are freed.
rows.append(("daemon VmRSS %d s after the snaps, libcamera released (releaseIdleLibrariesAfter 5 s)" % RELEASED_AFTER_S, "idle + %.1f MiB" % ((after - idle) / 1024),
             "still mapped: %s" % (", ".join(still_mapped) or "nothing"), "-"))

emit(rows, AS_JSON, "libcamera virtual camera 1280x720 @ 30 fps in a Debian 13 root, median of %d runs, command wall time" % RUNS)
