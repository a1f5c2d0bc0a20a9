"""A small MCP server written with the `mcp` SDK's own server machinery (MCPServer), for the node's
tests and benchmark: `--transport stdio` or `--transport streamable-http --port N`.

Tools: echo, fail (a tool error), slow (sleeps; creates --marker + ".started" when it begins and
writes "cancelled" to --marker when the client cancels it), big (N bytes of text), structured (structuredContent), crash (the process exits),
grow (adds a tool and tells the client its list changed), write (writes a file: the sandbox test),
env_names (what its environment holds: the secrets test), flood (notifications as fast as it can)."""
import argparse
import os
import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

ap = argparse.ArgumentParser()
ap.add_argument("--transport", default="stdio")
ap.add_argument("--port", type=int, default=0)
ap.add_argument("--marker", default="")
ap.add_argument("--name", default="openclaw-test")
args = ap.parse_args()

server = MCPServer(args.name)


@server.tool(description="Echo the text back")
def echo(text: str) -> str:
    return text


@server.tool(description="Fail with this message (a tool error, not a protocol error)")
def fail(message: str) -> str:
    raise ToolError(message)


@server.tool(description="Sleep for this many seconds")
async def slow(seconds: float) -> str:
    if args.marker:
        open(args.marker + ".started", "w").close()
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        if args.marker:
            with open(args.marker, "w") as f:
                f.write("cancelled")
        raise
    return "slept"


@server.tool(description="Return this many bytes of text")
def big(size: int) -> str:
    return "x" * size


@server.tool(description="Return structured content")
def structured(n: int) -> dict:
    return {"n": n, "double": 2 * n}


@server.tool(description="Exit the server process at once")
def crash() -> str:
    sys.stderr.write("crashing on request\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool(description="Add a tool named after the argument and announce the new tool list")
async def grow(name: str, ctx: Context) -> str:
    def added() -> str:
        return "I was added"
    server.add_tool(added, name=name, description="A tool added at run time")
    await ctx.session.send_tool_list_changed()
    return "added " + name


@server.tool(description="Send this many log notifications as fast as it can, then answer")
async def flood(count: int, ctx: Context) -> str:
    for i in range(count):
        await ctx.info("flood %d" % i)
    return "flooded"


@server.tool(description="The server's environment variable names")
def env_names() -> str:
    return " ".join(sorted(os.environ))


@server.tool(description="Write text to a file")
def write(path: str, text: str) -> str:
    with open(path, "w") as f:
        f.write(text)
    return "wrote " + path


@server.tool(description="Connect a Unix socket to this path; say whether it worked")
def unix_connect(path: str) -> str:
    import socket
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(path)
        s.close()
        return "connected"
    except OSError as e:
        return "refused %d" % e.errno


@server.tool(description="Start a detached (setsid) sleeper and write its pid to this file")
def spawn_detached(pidfile: str) -> str:
    import subprocess
    p = subprocess.Popen(["sleep", "1000"], start_new_session=True, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(pidfile, "w") as f:
        f.write(str(p.pid))
    return "started %d" % p.pid


if args.transport == "stdio":
    server.run("stdio")
else:
    server.run("streamable-http", host="127.0.0.1", port=args.port)
