#!/usr/bin/python3
"""openclaw-node benchmark driver (run through scripts/bench, which builds the release binary).

Measures, against the loopback test gateway (Tests/gateway/test_gateway.py):
  - invoke round trip for device.info (p50/p99, sequential) and invokes/s with 8 in flight
  - cold start: process spawn -> hello-ok
  - idle RSS of the daemon after --idle-seconds (default 60)
and folds in capability rows printed by scripts/bench-* (one JSON object per line on stdout).
Writes a markdown table to stdout and JSON to bench-out/bench.json. Only loopback traffic.
"""
import argparse, json, os, shutil, signal, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The release build, or another build to compare with (OPENCLAW_NODE_BIN).
NODE = os.environ.get("OPENCLAW_NODE_BIN") or os.path.join(ROOT, ".build", "release", "openclaw-node")
GATEWAY = os.path.join(ROOT, "Tests", "gateway", "test_gateway.py")


class Gateway:
    def __init__(self, state, port=0, extra=()):
        self.p = subprocess.Popen(["/usr/bin/python3", "-u", GATEWAY, "--port", str(port), "--state", state, "--auto-approve", *extra],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.ready = json.loads(self.p.stdout.readline())
        self.port = self.ready["port"]

    def wait(self, event, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            line = self.p.stdout.readline()
            if not line:
                break
            obj = json.loads(line)
            if obj.get("event") == event:
                return obj
        raise RuntimeError("gateway: no %s event" % event)

    def cmd(self, obj):
        self.p.stdin.write(json.dumps(obj) + "\n")
        self.p.stdin.flush()

    def stop(self):
        self.p.terminate()
        self.p.wait(5)


def node_config(tmp, port):
    path = os.path.join(tmp, "config.json5")
    with open(path, "w") as f:
        f.write("{ gateway: { url: 'ws://127.0.0.1:%d' }, node: { stateDir: '%s/state' }, presence: { mode: 'always' } }" % (port, tmp))
    return path


def start_node(cfg, tmp):
    env = dict(os.environ, HOME=tmp, OPENCLAW_NODE_LOG="warn")
    return subprocess.Popen([NODE, "run", "--config", cfg], env=env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "node.log"), "a"))


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def pss_kib(pid):
    """Proportional set size: shared library pages divided among the processes using them."""
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1])
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--idle-seconds", type=int, default=60)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--cold-runs", type=int, default=5)
    ap.add_argument("--core-only", action="store_true", help="only the gateway rows (cold start, invokes, idle memory), not the scripts/bench-* rows")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ocn-bench-")
    rows, result = [], {}
    gw = Gateway(os.path.join(tmp, "gw.json"))
    try:
        cfg = node_config(tmp, gw.port)
        # Cold start: spawn -> hello-ok (first run pairs and creates the key; later runs reuse them).
        times = []
        for i in range(a.cold_runs + 1):
            t0 = time.perf_counter()
            node = start_node(cfg, tmp)
            gw.wait("hello")
            ms = (time.perf_counter() - t0) * 1000
            if i > 0:
                times.append(ms)
            if i < a.cold_runs:
                node.send_signal(signal.SIGTERM)
                node.wait(10)
        result["coldStartToHelloMs"] = statistics.median(times)
        rows.append(("cold start → hello-ok (median of %d)" % len(times), "%.1f ms" % result["coldStartToHelloMs"], "", ""))

        gw.cmd({"cmd": "bench", "n": a.n, "concurrency": 8, "seconds": 5})
        b = gw.wait("bench", timeout=300)
        result["invoke"] = b
        rows.append(("device.info round trip p50 / p99", "%.3f / %.3f ms" % (b["p50Ms"], b["p99Ms"]), "", "n=%d sequential" % b["n"]))
        rows.append(("device.info invokes/s, 8 in flight", "%.0f /s" % b["invokesPerSecond"], "", "%d failures" % b["failures"]))

        time.sleep(a.idle_seconds)
        result["idleRssKiB"] = rss_kib(node.pid)
        result["idlePssKiB"] = pss_kib(node.pid)
        result["idleSeconds"] = a.idle_seconds
        rows.append(("idle memory after %d s (RSS / PSS)" % a.idle_seconds,
                     "%.1f / %.1f MiB" % (result["idleRssKiB"] / 1024, result["idlePssKiB"] / 1024), "",
                     "after %d invokes" % (b["n"] + b["invokesPerSecond"] * 5)))
        node.send_signal(signal.SIGTERM)
        node.wait(10)
    finally:
        gw.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    # Capability rows from their own scripts (each prints JSON objects with name/node/other/ratio).
    for script in [] if a.core_only else sorted(os.listdir(os.path.join(ROOT, "scripts"))):
        if script.startswith("bench-") and os.access(os.path.join(ROOT, "scripts", script), os.X_OK):
            try:
                out = subprocess.run([os.path.join(ROOT, "scripts", script), "--json"], capture_output=True, text=True, timeout=900).stdout
                for line in out.splitlines():
                    if line.startswith("{"):
                        r = json.loads(line)
                        result.setdefault("capabilities", []).append(r)
                        if "name" in r:  # a table row; other objects are kept in the JSON only
                            rows.append((r["name"], r.get("node", ""), r.get("other", ""), r.get("ratio", "")))
            except Exception as e:
                rows.append((script, "failed: %s" % e, "", ""))

    print("| measure | openclaw-node | the usual tool | ratio / note |")
    print("|---|---|---|---|")
    for r in rows:
        print("| %s | %s | %s | %s |" % r)
    os.makedirs(os.path.join(ROOT, "bench-out"), exist_ok=True)
    with open(os.path.join(ROOT, "bench-out", "bench.json"), "w") as f:
        json.dump(result, f, indent=2, sort_keys=True)
    print("\nJSON: bench-out/bench.json")


if __name__ == "__main__":
    main()
