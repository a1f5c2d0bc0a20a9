# What the desktop benchmarks (bench-gnome, bench-kde) share: processes started into a private
# session and stopped by their PIDs, waits with a deadline, the session's two D-Bus daemons, and the
# CPU a recording costs.
import os, subprocess, time


class Processes:
    def __init__(self, env):
        self.env = env
        self.started = []

    def start(self, argv, **kw):
        p = subprocess.Popen(argv, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
        self.started.append(p)
        return p

    def stop_all(self):
        for p in reversed(self.started):
            stop(p)

    def buses(self, run, conf_dir):
        """A session bus without service directories and a stand-in system bus, in `run`."""
        for name, sock in [("session", "bus"), ("system", "system_bus")]:
            conf = "%s/%s.conf" % (conf_dir, name)
            with open(conf, "w") as f:
                f.write('<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" '
                        '"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd"><busconfig><type>session</type>'
                        '<listen>unix:path=%s/%s</listen><auth>EXTERNAL</auth><policy context="default"><allow user="*"/>'
                        '<allow own="*"/><allow send_destination="*"/><allow receive_sender="*"/></policy></busconfig>' % (run, sock))
            self.start(["dbus-daemon", "--config-file=" + conf, "--nofork", "--nopidfile"])
            wait_for(lambda: os.path.exists("%s/%s" % (run, sock)), 10, "dbus-daemon")


def wait_for(pred, seconds, what):
    deadline = time.monotonic() + seconds
    while not pred():
        if time.monotonic() > deadline:
            raise RuntimeError("timed out waiting for " + what)
        time.sleep(0.05)


def stop(p):
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def cpu_seconds(pid):
    """The process's CPU time and its reaped children's (utime, stime, cutime, cstime): a
    recording is encoded in a child process (`openclaw-node video-encoder`) the daemon waits for."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / os.sysconf("SC_CLK_TCK")


def recording_cpu(daemon, record, reference, window, probe):
    """The desktop benches' recording rows: {moving: (node CPU s, reference CPU s)} for a 5 s
    recording of a still screen (`window` as it is) and then of one that changes 20 times a second
    (a new probe window); and the window left running (the caller stops it)."""
    cpu = {}
    for moving in (False, True):
        if moving:
            stop(window)
            window = probe(20)
        c0 = cpu_seconds(daemon.pid)
        record()
        cpu[moving] = (cpu_seconds(daemon.pid) - c0, reference(5))
    return cpu, window
