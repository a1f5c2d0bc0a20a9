#!/usr/bin/python3
"""A protocol-faithful OpenClaw gateway for the node's tests (docs/PROTOCOL.md).

Independent of the node's own code: WebSocket from python3-websockets, Ed25519 from
python3-cryptography, and every frame the node sends is validated against the upstream
protocol.schema.json with python3-jsonschema. The real gateway rejects frames that do not
validate; so does this one.

Talks to the test over stdio, one JSON object per line.
  stdout: {"event": "listening", "port": N, "fingerprint": hex|null} first, then events such as
          connect, pairing_requested, hello, invoke_result, node_event, schema_error, disconnect,
          progress (one per node.invoke.progress unless the invoke was sent with "quietProgress").
Duplex invokes (docs/PROTOCOL.md): node.invoke.progress is checked against the 2026.8 schemas in
newest-node-schemas.json and as the gateway checks it (nodeId, 16 KiB of UTF-8, seq from 0 without
gaps), answered {ok, ignored}; node.host.stats payloads are checked against NodeHostStatsPayload
(and free <= total); every input/cancel event sent is checked against its schema too.
  stdin:  {"cmd": "approve", "requestId": id} | {"cmd": "approve_all"} | {"cmd": "reject", "requestId": id}
          {"cmd": "chat_reply", "text": s} (the agent's reply to chat.send)
          {"cmd": "speak", "audioFile": path, "outputFormat"?, "mimeType"?, "fileExtension"?, "delayMs"?} |
          {"cmd": "speak", "error": {"reason": r, "fallbackEligible": b}} (what talk.speak returns)
          {"cmd": "invoke", "id": id, "command": c, "paramsJSON": s|null, "timeoutMs": n,
           "quietProgress"?: b, "ignoreProgressAfter"?: n}
          {"cmd": "cancel", "id": id} | {"cmd": "raw", "text": s} | {"cmd": "close", "code": n}
          {"cmd": "input", "id": id, "seq": n, "payloadJSON": s} (node.invoke.input of a running invoke)
          {"cmd": "ignore_progress", "id": id, "after": n} (answer ignored:true after n accepted chunks)
          {"cmd": "event_answer", "handled": b, "reason": r|null} (how node.event is answered from now on)
          {"cmd": "skills_answer", "mode": ok|unknown|invalid|unavailable} (how node.skills.update is answered;
          each one is emitted as skills_update {skills, answer} after its params passed NodeSkillsUpdateParams)
          {"cmd": "shutdown", "restartExpectedMs": n} | {"cmd": "revoke_tokens"} | {"cmd": "stats"}
          {"cmd": "bench", "command": c, "paramsJSON": s|null, "n": n, "concurrency": n, "seconds": s}
          {"cmd": "refuse", "error": {code, message, details?, retryable?, retryAfterMs?}, "times": n} (the next n
          connects get exactly this error: any pairing/auth refusal of docs/PROTOCOL.md §3.8; with
          details.waitForResolution the socket stays open until an approve/reject) | {"cmd": "refuse", "clear": true}
          {"cmd": "join_code", "code": c, "payload": {...}} (served once at GET /j/<code>, then 404 not_found)
          {"cmd": "pair_resolved", "requestId": id, "decision": d} (node.pair.resolved to every session)
          {"cmd": "relay", …} | {"cmd": "relay_close"}: the realtime Talk relay (talk_relay.py says how)
Approving or rejecting a request sends node.pair.resolved {nodeId, requestId, decision} to every
connected session and to sockets kept open for the decision (--pairing-wait: node pairing refusals
carry waitForResolution and keep the socket open, as a newest gateway may).
State (paired devices and their roles, device tokens per role, pending requests) persists in
--state so a restarted gateway remembers them, like the real one.

Roles: a device pairs as "node"; the same key may connect as "operator" too, which needs its own
approval ("role-upgrade", or --auto-approve-operator as a loopback gateway does silently) and gets
its own token. Operator sessions may call chat.send and talk.speak and receive every chat event;
node sessions may not. --bootstrap-operator makes a setup-code bootstrap hand over an operator
token too (hello-ok.auth.deviceTokens).
"""
import argparse, asyncio, base64, hashlib, http, json, os, secrets, ssl, sys, time
import websockets
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.exceptions import InvalidSignature
import jsonschema
from desktop_broker import DesktopBroker, ATTACH_PATH
from talk_relay import Relay

HERE = os.path.dirname(os.path.abspath(__file__))


def emit(obj):
    sys.stdout.write(json.dumps(obj, sort_keys=True) + "\n")
    sys.stdout.flush()


def b64url_decode(s):
    s = s.replace("-", "+").replace("_", "/")
    return base64.b64decode(s + "=" * (-len(s) % 4))


class Schema:
    def __init__(self, path):
        with open(path) as f:
            self.doc = json.load(f)
        defs = self.doc["definitions"]
        self.frame = jsonschema.Draft7Validator({"oneOf": self.doc["oneOf"], "definitions": defs})
        self.by_name = {}
        for name in ("ConnectParams", "NodeInvokeResultParams", "NodeEventParams", "NodePresenceAlivePayload",
                     "ChatSendParams", "TalkSpeakParams"):
            if name in defs:
                self.by_name[name] = jsonschema.Draft7Validator({"$ref": "#/definitions/" + name, "definitions": defs})

    def errors(self, frame):
        errs = [e.message for e in self.frame.iter_errors(frame)]
        if frame.get("type") == "req":
            method = frame.get("method")
            name = {"connect": "ConnectParams", "node.invoke.result": "NodeInvokeResultParams",
                    "node.event": "NodeEventParams", "chat.send": "ChatSendParams", "talk.speak": "TalkSpeakParams"}.get(method)
            if name:
                errs += ["%s: %s" % (name, e.message) for e in self.by_name[name].iter_errors(frame.get("params"))]
            if method == "node.event" and isinstance(frame.get("params"), dict) \
                    and frame["params"].get("event") == "node.presence.alive" and "NodePresenceAlivePayload" in self.by_name:
                try:
                    payload = json.loads(frame["params"].get("payloadJSON") or "{}")
                    errs += ["NodePresenceAlivePayload: " + e.message
                             for e in self.by_name["NodePresenceAlivePayload"].iter_errors(payload)]
                except ValueError as e:
                    errs.append("payloadJSON is not JSON: %s" % e)
        return errs


class NewestSchemas:
    """The 2026.8 node-facing definitions (newest-node-schemas.json), by name."""
    def __init__(self, path):
        with open(path) as f:
            doc = json.load(f)
        defs = doc["definitions"]
        self.by_name = {name: jsonschema.Draft7Validator({"$ref": "#/definitions/" + name, "definitions": defs})
                        for name in defs}

    def errors(self, name, value):
        return ["%s: %s" % (name, e.message) for e in self.by_name[name].iter_errors(value)]


class State:
    def __init__(self, path):
        self.path = path
        self.paired = {}      # deviceId -> {"publicKey", "platform", "deviceFamily", "roles"}
        self.tokens = {}      # deviceId (node) or deviceId|operator -> device token
        self.pending = {}     # requestId -> {"deviceId", "publicKey", "platform", "deviceFamily", "role"}
        if path and os.path.exists(path):
            with open(path) as f:
                d = json.load(f)
            self.paired, self.tokens, self.pending = d["paired"], d["tokens"], d["pending"]

    def save(self):
        if not self.path:
            return
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"paired": self.paired, "tokens": self.tokens, "pending": self.pending}, f)
        os.replace(tmp, self.path)


def payload_v2(d, client, role, scopes, signed_at, token, nonce):
    return "|".join(["v2", d, client["id"], client["mode"], role, ",".join(scopes), str(signed_at), token, nonce])


def norm(s):
    s = (s or "").strip()
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in s)


def payload_v3(d, client, role, scopes, signed_at, token, nonce):
    return payload_v2(d, client, role, scopes, signed_at, token, nonce).replace("v2|", "v3|", 1) + \
        "|" + norm(client.get("platform")) + "|" + norm(client.get("deviceFamily"))


class Gateway:
    def __init__(self, args):
        self.args = args
        self.schema = Schema(args.schema)
        self.newest = NewestSchemas(args.newest_schema)
        self.progress = {}        # invoke id -> {"next": seq expected, "count", "bytes", "heartbeats", "gaps", "quiet", "ignoreAfter"}
        self.event_answer = {"handled": False, "reason": args.event_unhandled} if args.event_unhandled else \
            {"handled": True, "reason": "persisted"}
        self.state = State(args.state)
        self.sessions = {}        # deviceId -> ws (node sessions)
        self.operators = {}       # deviceId -> ws (operator sessions)
        self.chat_reply = "The robot will go forward ten meters."
        self.speak = {"error": {"reason": "talk_unconfigured", "fallbackEligible": True}}
        self.previous_tokens = {} # deviceId -> the token issued before the current one (--rotate-tokens)
        self.pending_invokes = {}
        self.waiters = {}         # invoke id -> future (benchmark)
        self.counts = {"connects": 0, "frames": 0, "schema_errors": 0, "invoke_results": 0}
        self.refusal = None       # {"error": {...}, "times": n}: scripted connect refusals
        self.waiting = {}         # requestId -> ws kept open after a pairing refusal (waitForResolution)
        self.join_codes = {}      # one-time join codes -> setup payload (GET /j/<code>)
        self.desktop = DesktopBroker(emit)  # desktop.stream tickets, attach sockets and viewers
        self.node_commands = {}   # deviceId -> the commands its connect declared (plugin tool normalization)
        self.skills_answer = args.skills_answer  # how node.skills.update is answered
        self.relay = Relay(self, emit)  # realtime Talk (talk.session.*) on operator sessions
        self.scopes_of = {}       # operator ws -> the scopes it holds (asked, within its token's)
        self.token_scopes = {}    # deviceId|operator -> the scopes a setup code's operator token carries

    async def send(self, ws, obj):
        await ws.send(json.dumps(obj))

    def error(self, rid, code, message, details=None, retryable=None):
        err = {"code": code, "message": message}
        if details is not None:
            err["details"] = details
        if retryable is not None:
            err["retryable"] = retryable
        return {"type": "res", "id": rid, "ok": False, "error": err}

    def validate(self, frame):
        errs = self.schema.errors(frame)
        if errs:
            self.counts["schema_errors"] += 1
            emit({"event": "schema_error", "frame": frame, "errors": errs})
        return errs

    def validate_newest(self, frame):
        """The 2026.8 frames: node.invoke.progress params, node.host.stats payloads."""
        if frame.get("type") != "req" or not isinstance(frame.get("params"), dict):
            return []
        method, p = frame.get("method"), frame["params"]
        errs = []
        if method == "node.invoke.progress":
            errs = self.newest.errors("NodeInvokeProgressParams", p)
        elif method == "node.skills.update":
            errs = self.newest.errors("NodeSkillsUpdateParams", p)
            total = sum(len(s.get("content", "").encode("utf-8")) for s in p.get("skills", []) if isinstance(s, dict))
            if not errs and total > 512 * 1024:
                errs.append("NodeSkillsUpdateParams: total content %d bytes > 512 KiB" % total)
        elif method == "node.event" and p.get("event") == "node.host.stats":
            try:
                payload = json.loads(p.get("payloadJSON") or "null")
                errs = self.newest.errors("NodeHostStatsPayload", payload)
                if not errs and payload["memoryFreeBytes"] > payload["memoryTotalBytes"]:
                    errs.append("NodeHostStatsPayload: memoryFreeBytes > memoryTotalBytes")
                if not errs and "diskTotalBytes" in payload and payload["diskAvailableBytes"] > payload["diskTotalBytes"]:
                    errs.append("NodeHostStatsPayload: diskAvailableBytes > diskTotalBytes")
            except ValueError as e:
                errs = ["payloadJSON is not JSON: %s" % e]
        if errs:
            self.counts["schema_errors"] += 1
            emit({"event": "schema_error", "frame": frame, "errors": errs})
        return errs

    async def plugin_tools(self, ws, device_id, rid, p):
        """As the gateway's node.pluginTools.update: the closed params schema, then its
        normalization (descriptors whose command the node did not declare, node-mcp ones without
        mcp.tools.call.v1 or mcp, are dropped silently; 128 at most; duplicates by pluginId+name
        collapse), answered {nodeId, tools}. --plugin-tools-unknown: an older gateway."""
        if self.args.plugin_tools_unknown:
            await self.send(ws, self.error(rid, "INVALID_REQUEST", "unknown method: node.pluginTools.update"))
            emit({"event": "plugin_tools_refused"})
            return
        errs = self.newest.errors("NodePluginToolsUpdateParams", p)
        if errs:
            emit({"event": "schema_error", "frame": p, "errors": errs})
            await self.send(ws, self.error(rid, "INVALID_REQUEST", "invalid node.pluginTools.update params: %s" % errs[0]))
            return
        declared = self.node_commands.get(device_id, set())
        kept, seen = [], set()
        for d in p["tools"]:
            if d.get("command") not in declared:
                continue
            if d["pluginId"] == "node-mcp" and (d.get("command") != "mcp.tools.call.v1" or "mcp" not in d):
                continue
            key = (d["pluginId"], d["name"])
            if key in seen or len(kept) >= 128:
                continue
            seen.add(key)
            kept.append(dict(d, description=d["description"][:1024]))
        emit({"event": "plugin_tools", "sent": len(p["tools"]), "tools": kept})
        await self.send(ws, {"type": "res", "id": rid, "ok": True, "payload": {"nodeId": device_id, "tools": kept}})

    async def send_checked(self, ws, event, payload, schema):
        """A gateway event of the 2026.8 train, checked against its own schema first."""
        errs = self.newest.errors(schema, payload)
        if errs:
            emit({"event": "gateway_schema_error", "errors": errs})
        await self.send(ws, {"type": "event", "event": event, "payload": payload})

    async def handle_progress(self, ws, device_id, rid, p):
        """As the gateway's node.invoke.progress handler: nodeId, byte size, then ignored or not."""
        if p["nodeId"] != device_id:
            await self.send(ws, self.error(rid, "INVALID_REQUEST", "nodeId mismatch"))
            return
        chunk = p["chunk"]
        if len(chunk.encode("utf-8")) > 16384:
            emit({"event": "schema_error", "frame": {"method": "node.invoke.progress", "bytes": len(chunk.encode())},
                  "errors": ["progress chunk too large"]})
            await self.send(ws, self.error(rid, "INVALID_REQUEST", "progress chunk too large"))
            return
        iid = p["invokeId"]
        st = self.progress.get(iid)
        live = st is not None and iid in self.pending_invokes
        if st is not None:
            if p["seq"] != st["next"]:
                st["gaps"] += 1
                emit({"event": "progress_gap", "id": iid, "expected": st["next"], "seq": p["seq"]})
            st["next"] = max(st["next"], p["seq"] + 1)
            if st["ignoreAfter"] is not None and st["count"] >= st["ignoreAfter"]:
                live = False
            if live:
                st["count"] += 1
                st["bytes"] += len(chunk.encode("utf-8"))
                st["heartbeats"] += 1 if chunk == "" else 0
            else:
                st["ignoredAnswers"] += 1
        if st is not None and not st["quiet"]:
            emit({"event": "progress", "id": iid, "seq": p["seq"], "chunk": chunk, "bytes": len(chunk.encode("utf-8")),
                  "ignored": not live})
        await self.send(ws, {"type": "res", "id": rid, "ok": True, "payload": {"ok": True, "ignored": not live}})

    async def handler(self, ws, path=None):
        # websockets ≥ 13 has ws.request.path; the legacy server of 10.x (Debian 12) has ws.path
        # and only passes `path` to handlers that require it.
        if path is None:
            path = getattr(getattr(ws, "request", None), "path", None) or getattr(ws, "path", None)
        if path and path.startswith(ATTACH_PATH):
            await self.desktop.attach(ws, path)
            return
        nonce = secrets.token_urlsafe(16)
        if self.args.oversize_before_challenge:
            # A hostile or broken gateway: one frame over the 64 KiB pre-auth limit, then nothing.
            await ws.send("x" * self.args.oversize_before_challenge)
            await asyncio.sleep(30)
            return
        challenge = {"ts": int(time.time() * 1000)} if self.args.challenge_without_nonce else {"nonce": nonce, "ts": int(time.time() * 1000)}
        await self.send(ws, {"type": "event", "event": "connect.challenge", "payload": challenge})
        device_id = None
        try:
            raw = await asyncio.wait_for(ws.recv(), timeout=15)
            device_id = await self.handshake(ws, raw, nonce)
            if device_id is None:
                return
            role = "operator" if self.operators.get(device_id) is ws else "node"
            ticker = None if self.args.silent else asyncio.ensure_future(self.tick(ws))
            try:
                async for raw in ws:
                    await self.frame(ws, device_id, raw, role)
            finally:
                if ticker:
                    ticker.cancel()
        except (websockets.ConnectionClosed, asyncio.TimeoutError):
            pass
        finally:
            for table in (self.sessions, self.operators):
                if device_id and table.get(device_id) is ws:
                    del table[device_id]
            self.relay.dropped(ws)
            self.scopes_of.pop(ws, None)
            emit({"event": "disconnect", "deviceId": device_id, "code": ws.close_code})

    async def handshake(self, ws, raw, nonce):
        self.counts["connects"] += 1
        try:
            frame = json.loads(raw)
        except ValueError:
            await self.send(ws, self.error("?", "INVALID_REQUEST", "invalid request frame"))
            await ws.close(1008, "invalid request frame")
            return None
        if self.validate(frame):
            await self.send(ws, self.error(frame.get("id", "?"), "INVALID_REQUEST", "invalid connect params"))
            await ws.close(1008, "invalid connect params")
            return None
        if frame.get("method") != "connect":
            await self.send(ws, self.error(frame["id"], "INVALID_REQUEST", "invalid handshake: first request must be connect"))
            await ws.close(1008, "invalid handshake")
            return None
        rid, p = frame["id"], frame["params"]
        if not (p["minProtocol"] <= 4 <= p["maxProtocol"] or (p.get("role") == "node" and p["client"]["mode"] == "node" and p["minProtocol"] <= 3 <= p["maxProtocol"])):
            await self.send(ws, self.error(rid, "INVALID_REQUEST", "protocol mismatch", {"code": "PROTOCOL_MISMATCH", "expectedProtocol": 4}))
            await ws.close(1002, "protocol mismatch")
            return None
        dev, auth, client = p.get("device") or {}, p.get("auth") or {}, p["client"]
        if p.get("role") == "node" and dev.get("id"):
            self.node_commands[dev["id"]] = set(p.get("commands") or [])
        emit({"event": "connect", "deviceId": dev.get("id"), "auth": sorted(auth.keys()), "client": client,
              "caps": p.get("caps"), "commands": p.get("commands"), "permissions": p.get("permissions")})

        async def refuse(message, code, reason, close=1008):
            await self.send(ws, self.error(rid, "INVALID_REQUEST", message, {"code": code, "reason": reason}))
            await ws.close(close, message)
            return None

        if self.args.fail_code:
            return await refuse("forced failure", self.args.fail_code, "test")
        if self.refusal and self.refusal["times"] > 0:
            self.refusal["times"] -= 1
            err = self.refusal["error"]
            emit({"event": "refused", "error": err, "left": self.refusal["times"]})
            await self.send(ws, {"type": "res", "id": rid, "ok": False, "error": err})
            details = err.get("details") or {}
            if details.get("waitForResolution") and details.get("requestId"):
                await self.hold_for_decision(ws, details["requestId"])
                return None
            await ws.close(1008, err.get("message", "refused")[:100])
            return None
        try:
            pub = b64url_decode(dev["publicKey"])
            assert len(pub) == 32
            key = Ed25519PublicKey.from_public_bytes(pub)
        except Exception:
            return await refuse("device public key invalid", "DEVICE_AUTH_PUBLIC_KEY_INVALID", "device-public-key")
        if hashlib.sha256(pub).hexdigest() != dev["id"]:
            return await refuse("device identity mismatch", "DEVICE_AUTH_DEVICE_ID_MISMATCH", "device-id-mismatch")
        if dev.get("nonce", "").strip() != nonce:
            return await refuse("device nonce mismatch", "DEVICE_AUTH_NONCE_MISMATCH", "device-nonce-mismatch")
        if abs(dev["signedAt"] - time.time() * 1000) > 120000:
            return await refuse("device signature expired", "DEVICE_AUTH_SIGNATURE_EXPIRED", "device-signature-stale")
        token = auth.get("token") or auth.get("deviceToken") or auth.get("bootstrapToken") or ""
        sig = b64url_decode(dev["signature"])
        version = None
        builders = [("v2", payload_v2)] if self.args.reject_v3 else [("v3", payload_v3), ("v2", payload_v2)]
        for name, build in builders:
            try:
                key.verify(sig, build(dev["id"], client, p.get("role", ""), p.get("scopes", []), dev["signedAt"], token, nonce).encode())
                version = name
                break
            except InvalidSignature:
                pass
        if version is None:
            return await refuse("device signature invalid", "DEVICE_AUTH_SIGNATURE_INVALID", "device-signature")

        d = dev["id"]
        role = p.get("role", "node")
        if role not in ("node", "operator"):
            return await refuse("unknown role", "INVALID_REQUEST", "role")
        tkey = d if role == "node" else d + "|operator"
        issue_token = False
        if "deviceToken" in auth:
            # With --rotate-tokens the token issued just before the current one is still accepted:
            # a node stopped between our hello-ok and its own commit holds that one.
            previous = self.previous_tokens.get(tkey) if self.args.rotate_tokens else None
            if self.state.tokens.get(tkey) != auth["deviceToken"] and previous != auth["deviceToken"]:
                await self.send(ws, self.error(rid, "INVALID_REQUEST", "unauthorized: device token mismatch",
                                               {"code": "AUTH_DEVICE_TOKEN_MISMATCH", "canRetryWithDeviceToken": False,
                                                "recommendedNextStep": "update_auth_credentials"}))
                await ws.close(1008, "unauthorized")
                return None
        elif "bootstrapToken" in auth:
            if role != "node" or auth["bootstrapToken"] != self.args.bootstrap or self.args.bootstrap_used:
                await self.send(ws, self.error(rid, "INVALID_REQUEST", "unauthorized: bootstrap token invalid",
                                               {"code": "AUTH_BOOTSTRAP_TOKEN_INVALID"}))
                await ws.close(1008, "unauthorized")
                return None
            self.args.bootstrap_used = True
            self.state.paired[d] = {"publicKey": dev["publicKey"], "platform": client.get("platform"), "deviceFamily": client.get("deviceFamily"),
                                    "roles": ["node", "operator"] if self.args.bootstrap_operator or self.args.voice_node else ["node"]}
            issue_token = True
        elif self.args.require_token:
            if "token" not in auth:
                await self.send(ws, self.error(rid, "INVALID_REQUEST", "unauthorized: gateway token missing", {"code": "AUTH_TOKEN_MISSING"}))
                await ws.close(1008, "unauthorized")
                return None
            if auth["token"] != self.args.require_token:
                await self.send(ws, self.error(rid, "INVALID_REQUEST", "unauthorized: gateway token mismatch", {"code": "AUTH_TOKEN_MISMATCH"}))
                await ws.close(1008, "unauthorized")
                return None
            issue_token = True
        else:
            issue_token = True

        roles = self.state.paired.get(d, {}).get("roles", ["node"])
        auto = self.args.auto_approve if role == "node" else self.args.auto_approve_operator
        if d not in self.state.paired or role not in roles:
            if auto:
                entry = self.state.paired.get(d) or {"publicKey": dev["publicKey"], "platform": client.get("platform"),
                                                      "deviceFamily": client.get("deviceFamily"), "roles": []}
                entry["roles"] = sorted(set(entry.get("roles", ["node"]) + [role]))
                self.state.paired[d] = entry
            else:
                upgrade = d in self.state.paired
                req_id = next((r for r, dd in self.state.pending.items() if dd["deviceId"] == d and dd.get("role", "node") == role), None) \
                    or ("req-" + secrets.token_hex(6))
                self.state.pending[req_id] = {"deviceId": d, "publicKey": dev["publicKey"], "role": role,
                                              "platform": client.get("platform"), "deviceFamily": client.get("deviceFamily")}
                self.state.save()
                emit({"event": "pairing_requested", "requestId": req_id, "deviceId": d, "role": role})
                details = {"code": "PAIRING_REQUIRED", "reason": "role-upgrade" if upgrade else "not-paired", "requestId": req_id,
                           "remediationHint": "Approve this device from the pending pairing requests.",
                           "deviceId": d, "requestedRole": role, "requestedScopes": p.get("scopes", [])}
                if role == "node":
                    details.update({"recommendedNextStep": "wait_then_retry", "retryable": True, "pauseReconnect": False})
                # As a newest gateway: only for a client that says it listens (cap device-pairing-wait).
                if role == "node" and self.args.pairing_wait and "device-pairing-wait" in (p.get("caps") or []):
                    details.update({"waitForResolution": True, "pauseReconnect": True})
                    del details["recommendedNextStep"]
                if upgrade:
                    details["approvedRoles"] = roles
                message = "pairing required: device is asking for a higher role than currently approved" if upgrade \
                    else "pairing required: device is not approved yet"
                await self.send(ws, {"type": "res", "id": rid, "ok": False,
                                     "error": {"code": "NOT_PAIRED", "message": message, "details": details}})
                if details.get("waitForResolution"):
                    await self.hold_for_decision(ws, req_id)
                    return None
                await ws.close(1008, "pairing required: %s (requestId: %s)" % (details["reason"], req_id))
                return None
        if self.state.paired[d]["publicKey"] != dev["publicKey"]:
            return await refuse("device identity mismatch", "DEVICE_AUTH_DEVICE_ID_MISMATCH", "device-id-mismatch")

        auth_out = {"role": role, "scopes": p.get("scopes", []) if role == "operator" else []}
        if issue_token or tkey not in self.state.tokens or self.args.rotate_tokens:
            if tkey in self.state.tokens:
                self.previous_tokens[tkey] = self.state.tokens[tkey]
            self.state.tokens[tkey] = "devtok-" + secrets.token_urlsafe(18)
            auth_out["deviceToken"] = self.state.tokens[tkey]
            auth_out["issuedAtMs"] = int(time.time() * 1000)
        if "bootstrapToken" in auth and (self.args.bootstrap_operator or self.args.voice_node):
            self.state.tokens[d + "|operator"] = "optok-" + secrets.token_urlsafe(18)
            # openclaw qr --voice-node hands over read + talk only; a full setup code more.
            scopes = ["operator.read", "operator.talk"] if self.args.voice_node else \
                ["operator.approvals", "operator.read", "operator.talk.secrets", "operator.write"]
            self.token_scopes[d + "|operator"] = scopes
            auth_out["deviceTokens"] = [{"deviceToken": self.state.tokens[d + "|operator"], "role": "operator",
                                         "scopes": scopes, "issuedAtMs": int(time.time() * 1000)}]
        self.state.save()
        table = self.sessions if role == "node" else self.operators
        old = table.get(d)
        table[d] = ws
        if role == "operator":
            asked = p.get("scopes", [])
            granted = self.token_scopes.get(tkey)
            self.scopes_of[ws] = [x for x in asked if granted is None or x in granted]
        if old is not None and old is not ws:
            await old.close(1000, "replaced by a newer connection")
        hello = {"type": "hello-ok", "protocol": 4, "server": {"version": "test-gateway", "connId": secrets.token_hex(4)},
                 "features": {"methods": ["node.invoke.result", "node.event"], "events": ["tick", "node.invoke.request"]},
                 "snapshot": {"presence": [], "health": {}, "stateVersion": {"presence": 0, "health": 0}, "uptimeMs": 1,
                              "sessionDefaults": {"mainSessionKey": "main"}},
                 "auth": auth_out,
                 "policy": {"maxPayload": self.args.max_payload, "maxBufferedBytes": 52428800, "tickIntervalMs": self.args.tick_ms}}
        if self.args.canvas_host:
            hello["canvasHostUrl"] = self.args.canvas_host
        await self.send(ws, {"type": "res", "id": rid, "ok": True, "payload": hello})
        emit({"event": "hello", "deviceId": d, "role": role, "sigVersion": version, "auth": sorted(auth.keys()),
              "issuedToken": "deviceToken" in auth_out, "scopes": p.get("scopes", [])})
        return d

    async def hold_for_decision(self, ws, req_id):
        """Keeps a refused socket open until the operator decides (or the node closes it)."""
        self.waiting[req_id] = ws
        emit({"event": "waiting_for_decision", "requestId": req_id})
        try:
            await ws.wait_closed()
        finally:
            if self.waiting.get(req_id) is ws:
                del self.waiting[req_id]

    async def resolved(self, req_id, decision, device_id=None):
        """node.pair.resolved to every session, and to the socket waiting for this request."""
        ev = {"type": "event", "event": "node.pair.resolved",
              "payload": {"requestId": req_id, "decision": decision, "ts": int(time.time() * 1000)}}
        if device_id:
            ev["payload"]["nodeId"] = device_id
        for ws in list(self.sessions.values()) + list(self.operators.values()):
            try:
                await self.send(ws, ev)
            except websockets.ConnectionClosed:
                pass
        waiter = self.waiting.pop(req_id, None)
        if waiter is not None:
            try:
                await self.send(waiter, ev)
                await waiter.close(1008, "pairing %s" % decision)
            except websockets.ConnectionClosed:
                pass
        emit({"event": "pair_resolved_sent", "requestId": req_id, "decision": decision, "waiting": waiter is not None})

    async def http(self, path, headers):
        """GET /j/<code>: a one-time join URL's setup payload, once; the desktop attach socket's
        ticket check; anything else is the WebSocket."""
        refusal = self.desktop.check_ticket(path)
        if refusal is not None:
            return refusal
        if not path.startswith("/j/"):
            return None
        code = path[3:].split("?", 1)[0]
        payload = self.join_codes.pop(code, None)
        emit({"event": "join_fetch", "code": code, "found": payload is not None})
        if payload is None:
            body = b'{"error":"not_found"}'
            return (http.HTTPStatus.NOT_FOUND, [("Content-Type", "application/json"), ("Content-Length", str(len(body)))], body)
        body = json.dumps(payload).encode()
        return (http.HTTPStatus.OK, [("Content-Type", "application/json"), ("Content-Length", str(len(body)))], body)

    async def send_invoke(self, iid, command, params_json, timeout_ms):
        """A node.invoke.request to every node session, its progress tracked (the broker's invokes)."""
        for d, ws in list(self.sessions.items()):
            self.pending_invokes[iid] = True
            self.progress[iid] = {"next": 0, "count": 0, "bytes": 0, "heartbeats": 0, "gaps": 0, "ignoredAnswers": 0,
                                  "quiet": False, "ignoreAfter": None}
            await self.send(ws, {"type": "event", "event": "node.invoke.request",
                                 "payload": {"id": iid, "nodeId": d, "command": command, "paramsJSON": params_json, "timeoutMs": timeout_ms}})

    async def invoke_once(self, ws, device_id, command, n, params_json=None):
        iid = "bench-%d" % n
        fut = asyncio.get_running_loop().create_future()
        self.waiters[iid] = fut
        t0 = time.perf_counter()
        payload = {"id": iid, "nodeId": device_id, "command": command, "timeoutMs": 30000}
        if params_json is not None:
            payload["paramsJSON"] = params_json
        await self.send(ws, {"type": "event", "event": "node.invoke.request", "payload": payload})
        ok = await asyncio.wait_for(fut, 30)
        return (time.perf_counter() - t0) * 1000.0, ok

    async def bench(self, c):
        """Round trips measured at the gateway: event out -> node.invoke.result in."""
        device_id, ws = next(iter(self.sessions.items()))
        command = c.get("command", "device.info")
        params_json = c.get("paramsJSON")
        seq = []
        for i in range(c.get("n", 500)):
            ms, ok = await self.invoke_once(ws, device_id, command, i, params_json)
            seq.append(ms)
        seq.sort()
        conc, seconds = c.get("concurrency", 8), c.get("seconds", 5.0)
        done = 0
        failures = 0
        deadline = time.perf_counter() + seconds
        counter = [100000]

        async def worker():
            nonlocal done, failures
            while time.perf_counter() < deadline:
                counter[0] += 1
                _, ok = await self.invoke_once(ws, device_id, command, counter[0], params_json)
                done += 1
                failures += 0 if ok else 1

        t0 = time.perf_counter()
        await asyncio.gather(*[worker() for _ in range(conc)])
        elapsed = time.perf_counter() - t0
        pct = lambda q: seq[min(len(seq) - 1, int(q * len(seq)))]
        emit({"event": "bench", "command": command, "n": len(seq), "p50Ms": pct(0.50), "p99Ms": pct(0.99),
              "meanMs": sum(seq) / len(seq), "concurrency": conc, "invokesPerSecond": done / elapsed, "failures": failures})

    async def tick(self, ws):
        while True:
            await asyncio.sleep(self.args.tick_ms / 1000)
            await self.send(ws, {"type": "event", "event": "tick", "payload": {"ts": int(time.time() * 1000)}})

    async def frame(self, ws, device_id, raw, role="node"):
        self.counts["frames"] += 1
        try:
            frame = json.loads(raw)
        except ValueError:
            emit({"event": "schema_error", "frame": raw[:200], "errors": ["not JSON"]})
            return
        if self.validate(frame) or self.validate_newest(frame):
            await self.send(ws, self.error(frame.get("id", "?"), "INVALID_REQUEST", "invalid request frame"))
            return
        if frame["type"] != "req":
            return
        method, params, rid = frame["method"], frame.get("params") or {}, frame["id"]
        if role == "operator":
            await self.operator_frame(ws, method, params, rid)
            return
        if method == "node.invoke.result":
            self.counts["invoke_results"] += 1
            if params.get("nodeId") != device_id:
                await self.send(ws, self.error(rid, "INVALID_REQUEST", "nodeId mismatch"))
                return
            waiter = self.waiters.pop(params["id"], None)
            if waiter is not None:
                if not waiter.done():
                    waiter.set_result(params["ok"])
                await self.send(ws, {"type": "res", "id": rid, "ok": True, "payload": {"ok": True}})
                return
            known = self.pending_invokes.pop(params["id"], None) is not None
            st = self.progress.get(params["id"], {})
            emit({"event": "invoke_result", "id": params["id"], "ok": params["ok"],
                  "payload": json.loads(params["payloadJSON"]) if "payloadJSON" in params else params.get("payload"),
                  # Which field carried it: mcp.tools.call.v1 must use the structured payload (upstream).
                  "payloadField": "payloadJSON" if "payloadJSON" in params else ("payload" if "payload" in params else None),
                  "error": params.get("error"), "known": known,
                  "progress": {k: st[k] for k in ("count", "bytes", "heartbeats", "gaps", "next", "ignoredAnswers")} if st else None})
            await self.send(ws, {"type": "res", "id": rid, "ok": True, "payload": {"ok": True} if known else {"ok": True, "ignored": True}})
        elif method == "node.invoke.progress":
            await self.handle_progress(ws, device_id, rid, params)
        elif method == "node.event":
            payload = json.loads(params["payloadJSON"]) if "payloadJSON" in params else params.get("payload")
            emit({"event": "node_event", "name": params["event"], "payload": payload})
            answer = {"ok": True, "event": params["event"], "handled": self.event_answer["handled"]}
            if params["event"] == "node.host.stats" and self.event_answer["handled"]:
                answer["reason"] = "updated"
            elif self.event_answer.get("reason"):
                answer["reason"] = self.event_answer["reason"]
            errs = self.newest.errors("NodeEventResult", answer)
            if errs:
                emit({"event": "gateway_schema_error", "errors": errs})
            await self.send(ws, {"type": "res", "id": rid, "ok": True, "payload": answer})
        elif method == "node.pluginTools.update":
            await self.plugin_tools(ws, device_id, rid, params)
        elif method == "node.skills.update":
            # --skills-answer / {"cmd": "skills_answer"}: ok (as a newest gateway), unknown (an older
            # one), invalid (a refusal of the value), unavailable (a transient failure).
            mode = self.skills_answer
            emit({"event": "skills_update", "skills": params["skills"], "answer": mode})
            if mode == "unknown":
                await self.send(ws, self.error(rid, "INVALID_REQUEST", "unknown method: node.skills.update"))
            elif mode == "invalid":
                await self.send(ws, self.error(rid, "INVALID_REQUEST", "invalid node.skills.update params: refused by the test gateway"))
            elif mode == "unavailable":
                await self.send(ws, self.error(rid, "UNAVAILABLE", "skills store unavailable", retryable=True))
            else:
                await self.send(ws, {"type": "res", "id": rid, "ok": True, "payload": {"nodeId": device_id, "skills": params["skills"]}})
        elif method == "node.canvas.capability.refresh" and self.args.canvas_refresh_host:
            # Older gateways: a new scoped canvas URL (the token in it has a sliding 10 min TTL).
            emit({"event": "canvas_refresh"})
            await self.send(ws, {"type": "res", "id": rid, "ok": True,
                                 "payload": {"canvasCapability": self.args.canvas_refresh_host.rstrip("/").rsplit("/", 1)[-1],
                                             "canvasCapabilityExpiresAtMs": int(time.time() * 1000) + 600000,
                                             "canvasHostUrl": self.args.canvas_refresh_host}})
        else:
            await self.send(ws, self.error(rid, "INVALID_REQUEST", "unauthorized role: node"))

    async def operator_frame(self, ws, method, params, rid):
        """chat.send starts a run whose reply is broadcast to every operator session as chat
        events (after another session's, which the node must ignore); talk.speak answers as set;
        talk.catalog and the realtime relay's methods go to the relay (talk_relay.py)."""
        scopes = self.scopes_of.get(ws, [])
        if await self.relay.handle(ws, method, params, rid, scopes):
            return
        if method in ("chat.send", "talk.speak") and not {"operator.write", "operator.admin"} & set(scopes):
            await self.send(ws, self.error(rid, "INVALID_REQUEST", "missing scope: operator.write"))
            return
        if method == "chat.send":
            emit({"event": "chat_send", "params": params})
            run = params["idempotencyKey"]
            await self.send(ws, {"type": "res", "id": rid, "ok": True, "payload": {"runId": run, "status": "started"}})
            asyncio.ensure_future(self.reply(run, params["sessionKey"]))
        elif method == "talk.speak":
            emit({"event": "talk_speak", "params": params})
            await asyncio.sleep(self.speak.get("delayMs", 0) / 1000)  # a slow voice provider
            if "error" in self.speak:
                e = self.speak["error"]
                await self.send(ws, self.error(rid, "UNAVAILABLE", "talk.speak unavailable: %s" % e.get("reason"), e))
                return
            with open(self.speak["audioFile"], "rb") as f:
                audio = base64.b64encode(f.read()).decode()
            result = {"audioBase64": audio, "provider": "test"}
            for k in ("outputFormat", "mimeType", "fileExtension"):
                if self.speak.get(k):
                    result[k] = self.speak[k]
            await self.send(ws, {"type": "res", "id": rid, "ok": True, "payload": result})
        else:
            await self.send(ws, self.error(rid, "INVALID_REQUEST", "unknown method for this test gateway: %s" % method))

    async def reply(self, run, session_key):
        def chat(run_id, key, seq, state, text):
            return {"type": "event", "event": "chat", "payload": {
                "runId": run_id, "sessionKey": key, "seq": seq, "state": state,
                "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}}
        frames = [chat("other-run", "agent:other:main", 1, "final", "Not for this node."),
                  chat(run, session_key, 1, "delta", self.chat_reply[:9]),
                  chat(run, session_key, 2, "final", self.chat_reply)]
        for f in frames:
            await asyncio.sleep(0.1)
            for ws in list(self.operators.values()):
                try:
                    await self.send(ws, f)
                except websockets.ConnectionClosed:
                    pass

    async def command(self, line):
        c = json.loads(line)
        cmd = c["cmd"]
        if cmd in ("approve", "approve_all", "reject"):
            ids = list(self.state.pending) if cmd == "approve_all" else [c["requestId"]]
            for r in ids:
                req = self.state.pending.pop(r, None)
                asyncio.ensure_future(self.resolved(r, "rejected" if cmd == "reject" else "approved",
                                                    req["deviceId"] if req else None))
                if req and cmd != "reject":
                    entry = self.state.paired.get(req["deviceId"]) or {k: req[k] for k in ("publicKey", "platform", "deviceFamily")}
                    entry["roles"] = sorted(set(entry.get("roles", ["node"] if req["deviceId"] in self.state.paired else []) + [req.get("role", "node")]))
                    self.state.paired[req["deviceId"]] = entry
            self.state.save()
            emit({"event": "approved" if cmd != "reject" else "rejected", "requestIds": ids})
        elif cmd == "invoke":
            for d, ws in list(self.sessions.items()):
                self.pending_invokes[c["id"]] = True
                self.progress[c["id"]] = {"next": 0, "count": 0, "bytes": 0, "heartbeats": 0, "gaps": 0, "ignoredAnswers": 0,
                                          "quiet": bool(c.get("quietProgress")), "ignoreAfter": c.get("ignoreProgressAfter")}
                ev = {"id": c["id"], "nodeId": d, "command": c["command"]}
                if "paramsJSON" in c and c["paramsJSON"] is not None:
                    ev["paramsJSON"] = c["paramsJSON"]
                if "timeoutMs" in c:
                    ev["timeoutMs"] = c["timeoutMs"]
                await self.send(ws, {"type": "event", "event": "node.invoke.request", "payload": ev})
        elif cmd == "desktop_stream":
            await self.desktop.start(c, self.send_invoke)
        elif cmd == "desktop_close":
            await self.desktop.close(c)
        elif cmd == "cancel":
            for d, ws in list(self.sessions.items()):
                await self.send_checked(ws, "node.invoke.cancel", {"invokeId": c["id"], "nodeId": d}, "NodeInvokeCancelEvent")
        elif cmd == "input":
            for d, ws in list(self.sessions.items()):
                await self.send_checked(ws, "node.invoke.input", {"id": c["id"], "nodeId": d, "seq": c["seq"], "payloadJSON": c["payloadJSON"]},
                                        "NodeInvokeInputEvent")
            emit({"event": "input_sent", "id": c["id"], "seq": c["seq"]})
        elif cmd == "ignore_progress":
            self.progress[c["id"]]["ignoreAfter"] = c.get("after", 0)
            emit({"event": "ignore_set", "id": c["id"]})
        elif cmd == "event_answer":
            self.event_answer = {"handled": c["handled"], "reason": c.get("reason")}
            emit({"event": "event_answer_set"})
        elif cmd == "raw":
            for ws in list(self.sessions.values()):
                await ws.send(c["text"])
        elif cmd == "close":
            for ws in list(self.sessions.values()):
                await ws.close(c.get("code", 1000), "closed by test")
        elif cmd == "shutdown":
            for ws in list(self.sessions.values()):
                await self.send(ws, {"type": "event", "event": "shutdown", "payload": {"reason": "test", "restartExpectedMs": c.get("restartExpectedMs", 1000)}})
                await ws.close(1012, "service restart")
        elif cmd == "revoke_tokens":
            self.state.tokens.clear()
            self.state.save()
            emit({"event": "tokens_revoked"})
        elif cmd == "relay":
            self.relay.configure(c)
        elif cmd == "relay_close":
            await self.relay.close_all()
        elif cmd == "chat_reply":
            self.chat_reply = c["text"]
        elif cmd == "speak":
            self.speak = c
            emit({"event": "speak_set"})
        elif cmd == "bench":
            await self.bench(c)
        elif cmd == "refuse":
            self.refusal = None if c.get("clear") else {"error": c["error"], "times": c.get("times", 1)}
            emit({"event": "refuse_set"})
        elif cmd == "join_code":
            self.join_codes[c["code"]] = c["payload"]
            emit({"event": "join_code_set", "code": c["code"]})
        elif cmd == "pair_resolved":
            await self.resolved(c["requestId"], c.get("decision", "approved"))
        elif cmd == "skills_answer":
            self.skills_answer = c["mode"]
            emit({"event": "skills_answer_set", "mode": c["mode"]})
        elif cmd == "stats":
            emit({"event": "stats", **self.counts, "sessions": len(self.sessions)})


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--host", default="127.0.0.1", help="address to listen on (a test network namespace's veth)")
    ap.add_argument("--state")
    ap.add_argument("--schema", default=os.path.join(HERE, "protocol.schema.json"))
    ap.add_argument("--newest-schema", default=os.path.join(HERE, "newest-node-schemas.json"),
                    help="the 2026.8 node-facing schemas (progress, input, cancel, host stats, node.event answers)")
    ap.add_argument("--tick-ms", type=int, default=30000)
    ap.add_argument("--max-payload", type=int, default=25 * 1024 * 1024)
    ap.add_argument("--cert"); ap.add_argument("--key")
    ap.add_argument("--auto-approve", action="store_true")
    ap.add_argument("--auto-approve-operator", action="store_true", help="approve operator sessions silently (a loopback gateway)")
    ap.add_argument("--bootstrap-operator", action="store_true", help="a bootstrap also hands over an operator token")
    ap.add_argument("--voice-node", action="store_true", help="a bootstrap hands over an operator token with read + talk only "
                    "(openclaw qr --voice-node)")
    ap.add_argument("--rotate-tokens", action="store_true", help="issue a new device token at every hello")
    ap.add_argument("--reject-v3", action="store_true", help="verify only v2 signatures (an older gateway)")
    ap.add_argument("--require-token")
    ap.add_argument("--bootstrap")
    ap.add_argument("--fail-code")
    ap.add_argument("--silent", action="store_true", help="send no ticks")
    ap.add_argument("--oversize-before-challenge", type=int, default=0, help="send a frame of N bytes instead of the challenge")
    ap.add_argument("--event-unhandled", metavar="REASON", help="answer every node.event handled:false with this reason")
    ap.add_argument("--challenge-without-nonce", action="store_true", help="a broken gateway: connect.challenge has no nonce")
    ap.add_argument("--pairing-wait", action="store_true", help="keep a node's pairing refusal open for the decision (waitForResolution)")
    ap.add_argument("--plugin-tools-unknown", action="store_true", help="an older gateway: node.pluginTools.update is an unknown method")
    ap.add_argument("--skills-answer", default="ok", choices=["ok", "unknown", "invalid", "unavailable"],
                    help="how node.skills.update is answered (ok: {nodeId, skills}; unknown: an older gateway)")
    ap.add_argument("--canvas-host")
    ap.add_argument("--canvas-refresh-host", help="canvasHostUrl returned by node.canvas.capability.refresh")
    args = ap.parse_args()
    args.bootstrap_used = False
    gw = Gateway(args)
    ctx, fp = None, None
    if args.cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.cert, args.key)
        fp = hashlib.sha256(ssl.PEM_cert_to_DER_cert(open(args.cert).read())).hexdigest()
    async with websockets.serve(gw.handler, args.host, args.port, ssl=ctx, max_size=args.max_payload,
                                compression=None, ping_interval=None, reuse_address=True, process_request=gw.http) as server:
        emit({"event": "listening", "port": server.sockets[0].getsockname()[1], "fingerprint": fp})
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while True:
            line = await reader.readline()
            if not line:
                break
            if line.strip():
                try:
                    await gw.command(line.decode())
                except websockets.ConnectionClosed as e:
                    # The node may close at any moment (e.g. 1009 on the header of an oversized
                    # frame while we are still writing it); that ends the session, not the gateway.
                    emit({"event": "sendFailed", "reason": str(e)})


asyncio.run(main())
