#!/usr/bin/python3
"""A lossy network link in user space, for the fault tests: what `tc netem` does, on a kernel
without sch_netem (the test machines have none).

Two TUN interfaces make a point-to-point IP link: `--host-dev` in this process's network namespace
and `--ns-dev` inside the network namespace `--netns` (made by the test). Every IP packet that
leaves one side is read here and written to the other side after the impairments, each drawn from
a seeded random generator so a run replays:
  --loss P          drop it with probability P (both directions)
  --delay-ms D --jitter-ms J
                    hold it D ± J ms (uniform), which also reorders packets sent closer together
                    than the jitter
  --reorder P       send it at once instead, with probability P (netem's "reorder")
Real kernel TCP runs on both ends, so retransmissions, RTO backoff and reordering are the
kernel's own answers to a bad link.

Talks to the test over stdout: {"event": "ready"} once both interfaces are up, then on SIGTERM
{"event": "stats", "forwarded": n, "dropped": n, "reordered": n} before it exits.
"""
import argparse, ctypes, fcntl, heapq, json, os, random, select, signal, struct, subprocess, sys, time

TUNSETIFF = 0x400454CA
IFF_TUN, IFF_NO_PI = 0x0001, 0x1000
CLONE_NEWNET = 0x40000000
libc = ctypes.CDLL(None, use_errno=True)


def setns(fd):
    if libc.setns(fd, CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "setns")


def open_tun(name, addr, peer):
    """A TUN device `name` in the current network namespace, addressed addr → peer, up."""
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    # Children inherit the namespace this thread is in: `ip` configures the right one.
    subprocess.run(["ip", "addr", "add", addr, "peer", peer, "dev", name], check=True)
    subprocess.run(["ip", "link", "set", name, "up"], check=True)
    return fd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--netns", required=True)
    ap.add_argument("--host-dev", required=True); ap.add_argument("--host-addr", required=True)
    ap.add_argument("--ns-dev", required=True); ap.add_argument("--ns-addr", required=True)
    ap.add_argument("--loss", type=float, default=0.0)
    ap.add_argument("--delay-ms", type=float, default=0.0)
    ap.add_argument("--jitter-ms", type=float, default=0.0)
    ap.add_argument("--reorder", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    # If the test runner dies, so does the link (its TUN devices go with it).
    PR_SET_PDEATHSIG = 1
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() == 1:
        sys.exit("the test runner is gone")

    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    host = open_tun(a.host_dev, a.host_addr, a.ns_addr)
    target = os.open("/run/netns/" + a.netns, os.O_RDONLY)
    setns(target)
    inner = open_tun(a.ns_dev, a.ns_addr, a.host_addr)
    setns(home)
    os.close(target); os.close(home)

    stats = {"forwarded": 0, "dropped": 0, "reordered": 0}
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    print(json.dumps({"event": "ready"}), flush=True)

    other = {host: inner, inner: host}
    queue = []  # (due, seq, fd, packet)
    seq = 0
    while not stop:
        timeout = max(0.0, queue[0][0] - time.monotonic()) if queue else 0.5
        try:
            readable, _, _ = select.select([host, inner], [], [], timeout)
        except InterruptedError:
            continue
        for fd in readable:
            while True:
                try:
                    pkt = os.read(fd, 65536)
                except BlockingIOError:
                    break
                if rng.random() < a.loss:
                    stats["dropped"] += 1
                    continue
                if a.reorder and rng.random() < a.reorder:
                    due = time.monotonic()
                    stats["reordered"] += 1
                else:
                    due = time.monotonic() + max(0.0, a.delay_ms + rng.uniform(-a.jitter_ms, a.jitter_ms)) / 1000
                seq += 1
                heapq.heappush(queue, (due, seq, other[fd], pkt))
        now = time.monotonic()
        while queue and queue[0][0] <= now:
            _, _, fd, pkt = heapq.heappop(queue)
            try:
                os.write(fd, pkt)
                stats["forwarded"] += 1
            except OSError:
                stats["dropped"] += 1
    print(json.dumps({"event": "stats", **stats}), flush=True)


if __name__ == "__main__":
    main()
