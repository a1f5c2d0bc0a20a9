"""The gateway's desktop broker for desktop.stream, as test_gateway.py plays it (docs/PROTOCOL.md
"desktop.stream"): it mints a one-time ticket (48 lowercase hex, 60 s, single use), invokes
desktop.stream with it, accepts the node's attach WebSocket at /node-desktop/attach?ticket=… (HTTP
401 for a bad, used or expired ticket), checks the metadata frame (closed JSON; 1008 "node desktop
attach rejected" otherwise), pre-authenticates the RFB session with the password it carries (VNC
authentication, DES from python3-cryptography), and then serves a viewer on a loopback TCP port as
an RFB server without authentication, splicing the viewer's bytes to the node's. Like the real
gateway it takes at most 64 KiB per message from the node and refuses text frames.

Events: desktop_viewer {id, port, ticket}, desktop_attach_refused {reason}, desktop_attached {auth,
passwordLength}, desktop_auth {ok, version, offered}, desktop_viewer_connected, desktop_closed
{fromNode, toNode, frames, largestFrame, textFrames}.
Commands: {"cmd": "desktop_stream", "id": id, "ticket"?: t (use this ticket instead of a fresh one),
"attachTicket"?: t (params name one ticket, the attach socket another), "stallMs"?: n (stop reading
the node's socket for n ms once "stallAfter" bytes, default 1 MiB, have come: a slow viewer), "wrongPassword"?: b}
{"cmd": "desktop_close", "id": id} (the viewer side goes away: the gateway closes the attach socket).
"""
import asyncio, http, json, secrets, struct, time

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
try:
    from cryptography.hazmat.decrepit.ciphers.algorithms import TripleDES
except ImportError:  # older python3-cryptography (Debian 12)
    TripleDES = algorithms.TripleDES

ATTACH_PATH = "/node-desktop/attach"
TICKET_TTL = 60.0
MAX_NODE_MESSAGE = 64 * 1024


def vnc_response(password, challenge):
    key = bytes(int(f"{b:08b}"[::-1], 2) for b in password.encode()[:8].ljust(8, b"\0"))
    enc = Cipher(TripleDES(key * 3), modes.ECB()).encryptor()
    return enc.update(challenge) + enc.finalize()


def version_reply(banner):
    major, minor = int(banner[4:7]), int(banner[8:11])
    m = 8 if major > 3 or (major == 3 and minor > 7) else 7 if (major, minor) == (3, 7) else 3
    return b"RFB 003.00%d\n" % m


class NodeBytes:
    """The node's binary messages as a byte stream; records their sizes."""
    def __init__(self, ws, stats):
        self.ws, self.buf, self.stats = ws, b"", stats

    async def message(self):
        m = await self.ws.recv()
        if isinstance(m, str):
            self.stats["textFrames"] += 1
            raise ValueError("node sent a text frame on the attach socket")
        self.stats["frames"] += 1
        self.stats["fromNode"] += len(m)
        self.stats["largestFrame"] = max(self.stats["largestFrame"], len(m))
        if len(m) > MAX_NODE_MESSAGE:
            raise ValueError("node message of %d bytes is over the gateway's 64 KiB" % len(m))
        return m

    async def read(self, n):
        while len(self.buf) < n:
            self.buf += await self.message()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out


class DesktopBroker:
    def __init__(self, emit):
        self.emit = emit
        self.tickets = {}   # ticket -> {"created", "id", "used", "stallMs", "wrongPassword"}
        self.streams = {}   # invoke id -> {"ws", "viewer_server"}

    def check_ticket(self, path):
        """process_request: None lets the upgrade go on, else the HTTP refusal."""
        if not path.startswith(ATTACH_PATH):
            return None
        query = path.split("?", 1)[1] if "?" in path else ""
        ticket = dict(p.split("=", 1) for p in query.split("&") if "=" in p).get("ticket", "")
        t = self.tickets.get(ticket)
        ok = t is not None and not t["used"] and time.monotonic() - t["created"] < TICKET_TTL and path == ATTACH_PATH + "?ticket=" + ticket
        if not ok:
            self.emit({"event": "desktop_attach_refused", "reason": "ticket"})
            return (http.HTTPStatus.UNAUTHORIZED, [("Content-Length", "0")], b"")
        t["used"] = True
        return None

    async def start(self, c, send_invoke):
        ticket = c.get("ticket") or secrets.token_hex(24)
        attach = c.get("attachTicket") or ticket
        self.tickets[attach] = {"created": time.monotonic(), "id": c["id"], "used": False,
                                "stallMs": c.get("stallMs", 0), "stallAfter": c.get("stallAfter", 1 << 20), "wrongPassword": bool(c.get("wrongPassword"))}
        viewer = asyncio.get_running_loop().create_future()
        server = await asyncio.start_server(lambda r, w: viewer.done() or viewer.set_result((r, w)), "127.0.0.1", 0)
        self.streams[c["id"]] = {"viewer": viewer, "server": server, "ws": None}
        self.tickets[attach]["stream"] = self.streams[c["id"]]
        port = server.sockets[0].getsockname()[1]
        self.emit({"event": "desktop_viewer", "id": c["id"], "port": port, "ticket": ticket})
        params = c.get("params") or {"ticket": ticket, "attachPath": ATTACH_PATH + "?ticket=" + ticket}
        await send_invoke(c["id"], "desktop.stream", json.dumps(params), 0)

    async def close(self, c):
        s = self.streams.get(c["id"])
        if s and s["ws"] is not None:
            await s["ws"].close(1000, "viewer closed")
        self.emit({"event": "desktop_close_sent", "id": c["id"]})

    async def attach(self, ws, path):
        ticket = path.split("ticket=", 1)[1]
        t = self.tickets[ticket]
        stream = t["stream"]
        stream["ws"] = ws
        stats = {"fromNode": 0, "toNode": 0, "frames": 0, "largestFrame": 0, "textFrames": 0}
        try:
            meta = await asyncio.wait_for(ws.recv(), 10)
            ok = isinstance(meta, bytes) and 0 < len(meta) <= MAX_NODE_MESSAGE
            m = json.loads(meta) if ok else None
            ok = ok and isinstance(m, dict) and (
                (m.get("auth") == "vnc-password" and set(m) == {"auth", "vncPassword"} and isinstance(m["vncPassword"], str) and m["vncPassword"])
                or (m.get("auth") == "ard-account" and set(m) == {"auth"}))
            if not ok:
                self.emit({"event": "desktop_attach_refused", "reason": "metadata", "metadata": repr(meta)[:200]})
                await ws.close(1008, "node desktop attach rejected")
                return
            self.emit({"event": "desktop_attached", "id": t["id"], "auth": m["auth"], "passwordLength": len(m.get("vncPassword", ""))})
            node = NodeBytes(ws, stats)
            banner = await node.read(12)
            reply = version_reply(banner)
            await ws.send(reply)
            if reply == b"RFB 003.003\n":
                offered = [struct.unpack(">I", await node.read(4))[0]]
            else:
                n = (await node.read(1))[0]
                offered = list(await node.read(n))
                await ws.send(bytes([2]))
            password = ("wrong" if t["wrongPassword"] else "") + m.get("vncPassword", "")
            challenge = await node.read(16)
            await ws.send(vnc_response(password, challenge))
            result = struct.unpack(">I", await node.read(4))[0]  # SecurityResult (every version, for VNC auth)
            self.emit({"event": "desktop_auth", "id": t["id"], "ok": result == 0, "version": banner.decode().strip(), "offered": offered})
            if result != 0:
                await ws.close(1008, "authentication failed")
                return
            # Wait for the viewer, unless the node hangs up first (it may end the stream any time).
            closed = asyncio.ensure_future(ws.wait_closed())
            await asyncio.wait([stream["viewer"], closed], timeout=30, return_when=asyncio.FIRST_COMPLETED)
            closed.cancel()
            if not stream["viewer"].done():
                raise ConnectionError("the node closed the attach socket before a viewer came" if ws.closed else "no viewer within 30 s")
            reader, writer = stream["viewer"].result()
            self.emit({"event": "desktop_viewer_connected", "id": t["id"]})
            # The viewer's side: an RFB 3.8 server without authentication (the gateway has done it).
            writer.write(b"RFB 003.008\n")
            await reader.readexactly(12)
            writer.write(bytes([1, 1]))
            await reader.readexactly(1)
            writer.write(struct.pack(">I", 0))
            await writer.drain()
            if node.buf:
                writer.write(node.buf)
                node.buf = b""

            async def viewer_to_node():
                while True:
                    data = await reader.read(65536)
                    if not data:
                        return
                    stats["toNode"] += len(data)
                    await ws.send(data)

            async def node_to_viewer():
                stall = t["stallMs"]
                while True:
                    # The slow viewer: once stallAfter bytes have come (past the RFB handshake,
                    # into a screen update), stop reading the node's socket for stallMs.
                    if stall and stats["fromNode"] >= t["stallAfter"]:
                        await asyncio.sleep(stall / 1000)
                        stall = 0
                        self.emit({"event": "desktop_stall_over", "id": t["id"], "fromNode": stats["fromNode"]})
                    writer.write(await node.message())
                    await writer.drain()

            tasks = [asyncio.ensure_future(viewer_to_node()), asyncio.ensure_future(node_to_viewer())]
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for x in tasks:
                x.cancel()
            writer.close()
        except Exception as e:  # the node or the viewer went away, or broke a rule
            self.emit({"event": "desktop_error", "id": t["id"], "error": repr(e)[:300]})
        finally:
            stream["server"].close()
            await ws.close()
            self.emit({"event": "desktop_closed", "id": t["id"], **stats})
