"""A real RFB client for the desktop.stream tests: vncdotool (PyPI, in the test environment that
scripts/mcp-venv makes) connected to the test gateway's viewer port, as an operator's viewer is.

  rfb_viewer.py PORT [--pixel X,Y]... [--click X,Y] [--refreshes N]

Prints one JSON line: {"size": [w, h], "pixels": {"X,Y": [r, g, b]}, "refreshes": N}. Exit 1 with
{"error": …} when the session fails.
"""
import argparse, json, sys

from vncdotool import api

ap = argparse.ArgumentParser()
ap.add_argument("port", type=int)
ap.add_argument("--pixel", action="append", default=[])
ap.add_argument("--click")
ap.add_argument("--refreshes", type=int, default=1, help="full (non-incremental) screen updates to ask for and receive")
a = ap.parse_args()
client = None
try:
    client = api.connect("127.0.0.1::%d" % a.port, password=None, timeout=30)
    for _ in range(a.refreshes):
        client.refreshScreen(incremental=False)
    img = client.screen.convert("RGB")
    out = {"size": list(img.size), "pixels": {}, "refreshes": a.refreshes}
    for p in a.pixel:
        x, y = (int(v) for v in p.split(","))
        out["pixels"][p] = list(img.getpixel((x, y)))
    if a.click:
        x, y = (int(v) for v in a.click.split(","))
        client.mouseMove(x, y)
        client.mousePress(1)
        # One more round trip, so the click has reached the server before we hang up.
        client.refreshScreen(incremental=False)
    print(json.dumps(out), flush=True)
except Exception as e:
    print(json.dumps({"error": repr(e)[:500]}), flush=True)
    sys.exit(1)
finally:
    if client is not None:
        client.disconnect()
    api.shutdown()
