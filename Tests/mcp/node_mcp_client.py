#!/usr/bin/env python3
"""The mcp SDK's own client (PyPI `mcp`) against `openclaw-node mcp serve` over stdio.

Usage: node_mcp_client.py NODE_BINARY CONFIG STEPS_JSON [--http URL --token TOKEN [--uds SOCKET] [--cafile PEM]]
With --http the client connects to a running `openclaw-node mcp serve --http` (streamable HTTP,
the bearer token in the Authorization header, over a Unix socket with --uds; an https URL is
verified against --cafile, else the system's trust store) instead of starting
`mcp serve` on stdio.
STEPS_JSON is a list of steps, each {"do": "list"}, {"do": "call", "tool": ..., "arguments": {...},
"timeout": seconds?, "waitGone": "a process command line that must end after a cancel"},
{"do": "run", "argv": [...]} (a program the test needs run mid-session) or
{"do": "waitListChanged", "timeout": seconds} (until notifications/tools/list_changed arrives).
Prints one JSON object per step on stdout: what the client got, decoded the way an agent would.
"""
import asyncio, base64, json, os, ssl, subprocess, sys, time
from datetime import timedelta

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
import httpx2


def image_size(data: bytes):
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if data[:2] == b"\xff\xd8":
        i = 2
        while i < len(data):
            if data[i] != 0xFF:
                i += 1
                continue
            marker = data[i + 1]
            if marker in (0xC0, 0xC1, 0xC2):
                return int.from_bytes(data[i + 7:i + 9], "big"), int.from_bytes(data[i + 5:i + 7], "big")
            i += 2 + int.from_bytes(data[i + 2:i + 4], "big")
    return None


def running(cmdline: str) -> bool:
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if f.read().replace(b"\0", b" ").strip().decode(errors="replace") == cmdline:
                    return True
        except OSError:
            pass
    return False


def transport(argv):
    binary, config = argv[1], argv[2]
    opts = dict(zip(argv[4::2], argv[5::2]))
    if "--http" not in opts:
        return stdio_client(StdioServerParameters(command=binary, args=["mcp", "serve", "--config", config], env=dict(os.environ)))
    kwargs = {"headers": {"Authorization": "Bearer " + opts["--token"]}, "timeout": httpx2.Timeout(30, read=60)}
    if "--uds" in opts:
        kwargs["transport"] = httpx2.AsyncHTTPTransport(uds=opts["--uds"])
    if "--cafile" in opts:
        kwargs["verify"] = ssl.create_default_context(cafile=opts["--cafile"])
    return streamable_http_client(opts["--http"], http_client=httpx2.AsyncClient(**kwargs))


async def main():
    steps = json.loads(sys.argv[3])
    list_changed = asyncio.Event()

    async def on_message(message):
        if getattr(message, "method", None) == "notifications/tools/list_changed" or type(message).__name__ == "ToolListChangedNotification":
            list_changed.set()

    async with transport(sys.argv) as streams:
        r, w = streams[0], streams[1]
        async with ClientSession(r, w, message_handler=on_message) as s:
            init = await s.initialize()
            print(json.dumps({"step": "initialize", "protocolVersion": init.protocol_version,
                              "server": init.server_info.name, "instructions": init.instructions}), flush=True)
            for step in steps:
                out = {"step": step["do"]}
                if step["do"] == "run":
                    out["code"] = subprocess.run(step["argv"]).returncode
                elif step["do"] == "waitListChanged":
                    try:
                        await asyncio.wait_for(list_changed.wait(), step.get("timeout", 20))
                        out["changed"] = True
                    except asyncio.TimeoutError:
                        out["changed"] = False
                    list_changed.clear()
                elif step["do"] == "list":
                    tools = await s.list_tools()
                    out["tools"] = {t.name: {"inputSchema": t.input_schema, "description": t.description} for t in tools.tools}
                elif step["do"] == "call":
                    out["tool"] = step["tool"]
                    started = time.monotonic()
                    try:
                        kwargs = {}
                        if "timeout" in step:
                            kwargs["read_timeout_seconds"] = step["timeout"]
                        res = await s.call_tool(step["tool"], step.get("arguments", {}), **kwargs)
                        out["isError"] = res.is_error
                        out["structured"] = res.structured_content
                        out["content"] = []
                        for c in res.content:
                            if c.type == "text":
                                out["content"].append({"type": "text", "text": c.text})
                            elif c.type == "image":
                                data = base64.b64decode(c.data)
                                size = image_size(data)
                                out["content"].append({"type": "image", "mimeType": c.mime_type, "bytes": len(data),
                                                       "width": size[0] if size else None, "height": size[1] if size else None})
                            else:
                                out["content"].append({"type": c.type})
                    except Exception as e:  # a timeout (the SDK then sends notifications/cancelled) or a protocol error
                        out["exception"] = f"{type(e).__name__}: {e}"
                    out["seconds"] = round(time.monotonic() - started, 3)
                    if "waitGone" in step:
                        deadline = time.monotonic() + 15
                        while running(step["waitGone"]) and time.monotonic() < deadline:
                            await asyncio.sleep(0.05)
                        out["goneAfter"] = round(time.monotonic() - started, 3)
                        out["stillRunning"] = running(step["waitGone"])
                print(json.dumps(out), flush=True)


asyncio.run(main())
