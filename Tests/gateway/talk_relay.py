"""The realtime Talk relay of the test gateway (talk.session.* on an operator session), played
honestly: what the node streams up is decoded with pocketsphinx (the words must be heard), a
reply of known samples goes down in 960-byte chunks in a burst as the gateway sends them, and
everything the node does is reported on stdout for the test to check.

Commands (stdin, via the gateway):
  {"cmd": "relay", "ready": "yes"|"never"|"error", "replyFile": path (PCM16 24 kHz), "catalogReady": b,
   "tool": null|"consult"|"forced"|"control", "clearAfterMs": n|null, "denyScope": b, "consultAnswer": s}
  {"cmd": "relay_close"} (the gateway closes every relay session: close {reason: completed})
Reports: relay_create {params}, relay_append {bytes, timestamp, rms, t, playingReply}, relay_turn {text},
  relay_reply {turnId, bytes, t}, relay_mark_ack {markName, t, playbackEnd}, relay_cancel {params, status, t},
  relay_toolcall {params}, relay_tool_result {params}, relay_steer {params}, relay_close {params, t},
  relay_error {method, message} (a frame that breaks the contract).
"""
import asyncio, base64, binascii, json, math, os, re, secrets, struct, subprocess, tempfile, time

RATE = 24000
CREATE_KEYS = {"sessionKey", "mode", "transport", "brain", "provider", "model", "voice", "language",
               "vadThreshold", "silenceDurationMs", "prefixPaddingMs", "reasoningEffort", "spawnedBy", "ttlMs"}
CLOSED = {
    "talk.session.appendAudio": ({"sessionId", "audioBase64"}, {"timestamp"}),
    "talk.session.cancelOutput": ({"sessionId"}, {"turnId", "reason"}),
    "talk.session.acknowledgeMark": ({"sessionId", "markName"}, set()),
    "talk.session.submitToolResult": ({"sessionId", "callId", "result"}, {"options"}),
    "talk.session.steer": ({"sessionId", "text"}, {"sessionKey", "mode"}),
    "talk.session.close": ({"sessionId"}, set()),
    "talk.client.toolCall": ({"sessionKey", "callId", "name", "relaySessionId"}, {"args", "voiceSessionId"}),
}


def rms(pcm):
    n = len(pcm) // 2
    if n == 0:
        return 0.0
    s = struct.unpack("<%dh" % n, pcm[:2 * n])
    return math.sqrt(sum(x * x for x in s) / n)


def decode(pcm24):
    """pocketsphinx_continuous on what the node sent, resampled to its 16 kHz by ffmpeg."""
    with tempfile.TemporaryDirectory() as d:
        raw, wav = os.path.join(d, "in.raw"), os.path.join(d, "in.wav")
        with open(raw, "wb") as f:
            f.write(pcm24)
        subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "s16le", "-ar", str(RATE), "-ac", "1", "-i", raw,
                        "-ar", "16000", "-ac", "1", "-y", wav], check=True)
        r = subprocess.run(["pocketsphinx_continuous", "-infile", wav, "-logfn", "/dev/null"], capture_output=True, text=True)
        return " ".join(line.strip() for line in r.stdout.splitlines() if line.strip())


class Session:
    def __init__(self, ws, key):
        self.id = "relay-" + secrets.token_hex(6)
        self.ws, self.key = ws, key
        self.last_ts = None
        self.turn = 0
        self.user = bytearray()      # the user turn being heard
        self.speech_ms = 0
        self.silence_ms = 0
        self.reply_until = 0.0       # monotonic time the reply's playback would end
        self.replying = False
        self.current_turn = None
        self.cancelled = set()
        self.tool_waits = {}         # callId -> future of the submitted result
        self.closed = False


class Relay:
    def __init__(self, gateway, emit):
        self.gw, self.emit = gateway, emit
        self.config = {"ready": "yes", "replyFile": None, "catalogReady": True, "tool": None, "clearAfterMs": None,
                       "denyScope": False, "consultAnswer": "forty two"}
        self.sessions = {}
        self.runs = {}               # runId -> (ws, session key) of a consult

    def configure(self, c):
        for k in self.config:
            if k in c:
                self.config[k] = c[k]

    async def event(self, s, payload, talk_event=None):
        payload = dict(payload, relaySessionId=s.id)
        if talk_event:
            payload["talkEvent"] = dict(talk_event, sessionId=s.id, mode="realtime", transport="gateway-relay",
                                        brain="agent-consult", provider="fake", timestamp="2026-12-05T00:00:00Z")
        await self.gw.send(s.ws, {"type": "event", "event": "talk.event", "payload": payload})

    def bad(self, method, message):
        self.emit({"event": "relay_error", "method": method, "message": message})

    async def handle(self, ws, method, params, rid, scopes):
        """True when `method` is the relay's (answered here)."""
        ok = lambda payload: self.gw.send(ws, {"type": "res", "id": rid, "ok": True, "payload": payload})
        err = lambda code, msg: self.gw.send(ws, self.gw.error(rid, code, msg))
        if method == "talk.catalog":
            ready = bool(self.config["catalogReady"])
            await ok({"realtime": {"ready": ready, "provider": "fake" if ready else None}, "activeProvider": "fake",
                      "providers": [{"id": "fake", "label": "Fake", "configured": ready, "modes": ["realtime"],
                                     "brains": ["agent-consult"], "supportsBargeIn": True, "supportsToolCalls": True}]})
            return True
        if not (method.startswith("talk.session.") or method.startswith("talk.client.")):
            return False
        if not ({"operator.talk", "operator.write", "operator.admin"} & set(scopes)) or self.config["denyScope"]:
            await err("INVALID_REQUEST", "missing scope: operator.talk")
            return True
        if method == "talk.session.create":
            extra = set(params) - CREATE_KEYS
            if extra or ("language" in params and not re.fullmatch(r"[a-z]{2}", str(params["language"]))):
                self.bad(method, "closed schema: %s" % sorted(extra or ["language"]))
                await err("INVALID_REQUEST", "invalid talk.session.create params")
                return True
            if (params.get("mode"), params.get("transport"), params.get("brain")) != ("realtime", "gateway-relay", "agent-consult"):
                self.bad(method, "not realtime/gateway-relay/agent-consult: %s" % params)
            s = Session(ws, params.get("sessionKey", "main"))
            self.sessions[s.id] = s
            self.emit({"event": "relay_create", "params": params, "id": s.id})
            await ok({"sessionId": s.id, "voiceSessionId": s.id, "relaySessionId": s.id, "provider": "fake",
                      "transport": "gateway-relay", "mode": "realtime", "brain": "agent-consult",
                      "audio": {"inputEncoding": "pcm16", "inputSampleRateHz": RATE, "outputEncoding": "pcm16", "outputSampleRateHz": RATE},
                      "expiresAt": int(time.time()) + 1800})
            asyncio.ensure_future(self.start(s))
            return True
        required, optional = CLOSED.get(method, (None, None))
        if required is None:
            await err("INVALID_REQUEST", "unknown talk method: %s" % method)
            return True
        if not required <= set(params) or set(params) - required - optional:
            self.bad(method, "closed schema: got %s" % sorted(params))
            await err("INVALID_REQUEST", "invalid %s params" % method)
            return True
        sid = params.get("relaySessionId") if method == "talk.client.toolCall" else params["sessionId"]
        s = self.sessions.get(sid)
        if s is None or s.ws is not ws:
            await err("INVALID_REQUEST", "Talk session is not owned by this connection")
            return True
        if method == "talk.session.appendAudio":
            await self.append(s, params, ok, err)
        elif method == "talk.session.acknowledgeMark":
            self.emit({"event": "relay_mark_ack", "markName": params["markName"], "t": time.monotonic(), "playbackEnd": s.reply_until})
            # As OpenAI's bridge: a turn is cancellable (truncated) while its marks are pending.
            if params["markName"] == "m-%s" % s.current_turn:
                s.replying = False
            await ok({"ok": True})
        elif method == "talk.session.cancelOutput":
            turn = params.get("turnId")
            status = "applied" if s.replying and (turn is None or turn == s.current_turn) else ("stale" if s.replying else "idle")
            self.emit({"event": "relay_cancel", "params": params, "status": status, "t": time.monotonic()})
            await ok({"ok": True, "status": status, "turnId": s.current_turn})
            if status == "applied":
                s.cancelled.add(s.current_turn)
                s.replying = False
                await asyncio.sleep(0.05)
                await self.event(s, {"type": "clear", "reason": params.get("reason", "output-cancelled")},
                                 {"type": "turn.cancelled", "turnId": s.current_turn, "seq": 90})
        elif method == "talk.session.submitToolResult":
            self.emit({"event": "relay_tool_result", "params": params})
            await ok({"ok": True})
            w = s.tool_waits.get(params["callId"])
            if w and not w.done() and not (params.get("options") or {}).get("willContinue"):
                w.set_result(params["result"])
        elif method == "talk.session.steer":
            self.emit({"event": "relay_steer", "params": params})
            await ok({"ok": True, "mode": params.get("mode", "steer"), "sessionKey": s.key, "active": False,
                      "message": "Nothing is running.", "speak": True, "show": True, "suppress": False})
        elif method == "talk.client.toolCall":
            self.emit({"event": "relay_toolcall", "params": params})
            run = "run-" + secrets.token_hex(4)
            await ok({"runId": run, "idempotencyKey": run})
            asyncio.ensure_future(self.consult_answer(ws, run, params["sessionKey"]))
        elif method == "talk.session.close":
            self.emit({"event": "relay_close", "params": params, "t": time.monotonic()})
            await ok({"ok": True})
            await self.close(s, "completed")
        return True

    async def start(self, s):
        await asyncio.sleep(0.2)
        mode = self.config["ready"]
        if mode == "yes":
            await self.event(s, {"type": "ready"}, {"type": "session.ready", "seq": 1})
        elif mode == "error":
            await self.event(s, {"type": "error", "message": "fake provider: connect failed", "phase": "connect",
                                 "code": "realtime_unavailable"}, {"type": "session.error", "seq": 1, "final": True})
            await self.close(s, "error")

    async def append(self, s, params, ok, err):
        b64 = params["audioBase64"]
        try:
            pcm = base64.b64decode(b64.replace("-", "+").replace("_", "/"), validate=True)
        except (binascii.Error, ValueError):
            self.bad("talk.session.appendAudio", "not base64")
            return await err("INVALID_REQUEST", "invalid base64")
        ts = params.get("timestamp")
        if len(b64) > 524288 or len(pcm) % 2:
            self.bad("talk.session.appendAudio", "frame of %d base64 chars, %d bytes" % (len(b64), len(pcm)))
        if ts is not None and (not isinstance(ts, int) and not (isinstance(ts, float) and ts.is_integer())):
            self.bad("talk.session.appendAudio", "timestamp %r is not an integer" % ts)
        if ts is not None and s.last_ts is not None and ts < s.last_ts:
            self.bad("talk.session.appendAudio", "timestamp went back: %r after %r" % (ts, s.last_ts))
        s.last_ts = ts if ts is not None else s.last_ts
        now = time.monotonic()
        self.emit({"event": "relay_append", "bytes": len(pcm), "timestamp": ts, "rms": rms(pcm), "t": now,
                   "playingReply": now < s.reply_until})
        await ok({"ok": True})
        # A trivial energy VAD in 20 ms steps: speech, then 500 ms of silence, ends the user's turn.
        for i in range(0, len(pcm) - 959, 960):
            part = pcm[i:i + 960]
            if rms(part) > 800:
                s.speech_ms += 20
                s.silence_ms = 0
            elif s.speech_ms:
                s.silence_ms += 20
            if s.speech_ms or s.user:
                s.user += part
            if s.speech_ms >= 200 and s.silence_ms >= 500:
                heard = bytes(s.user)
                s.user, s.speech_ms, s.silence_ms = bytearray(), 0, 0
                asyncio.ensure_future(self.user_turn(s, heard))
            elif not s.speech_ms and s.silence_ms == 0 and len(s.user) > 0 and s.speech_ms == 0:
                s.user = bytearray()

    async def user_turn(self, s, heard):
        text = await asyncio.get_running_loop().run_in_executor(None, decode, heard)
        self.emit({"event": "relay_turn", "text": text})
        s.turn += 1
        turn = "turn-%d" % s.turn
        s.current_turn = turn
        await self.event(s, {"type": "inputAudio", "byteLength": 0, "futureField": 1}, {"type": "turn.started", "turnId": turn, "seq": 2})
        await self.event(s, {"type": "transcript", "role": "user", "text": text, "final": True},
                         {"type": "transcript.done", "turnId": turn, "seq": 3, "final": True})
        await self.event(s, {"type": "somethingNew", "detail": "an event type from a newer gateway"})
        tool = self.config["tool"]
        if tool:
            call = "call-%d" % s.turn
            wait = asyncio.get_running_loop().create_future()
            s.tool_waits[call] = wait
            name = "openclaw_agent_control" if tool == "control" else "openclaw_agent_consult"
            args = {"text": "status", "mode": "status"} if tool == "control" else {"question": text}
            await self.event(s, {"type": "toolCall", "itemId": "item-1", "callId": call, "name": name, "args": args,
                                 "forced": tool == "forced"}, {"type": "tool.call", "turnId": turn, "seq": 4, "callId": call})
            try:
                await asyncio.wait_for(wait, 30)
            except asyncio.TimeoutError:
                self.bad("toolCall", "no tool result within 30 s")
                return
        await self.reply(s, turn)

    async def reply(self, s, turn):
        path = self.config["replyFile"]
        pcm = open(path, "rb").read() if path else b"\0\0" * RATE
        s.replying = True
        await self.event(s, {"type": "responseStarted", "turnId": turn})
        start = time.monotonic()
        s.reply_until = start + len(pcm) / 2 / RATE
        self.emit({"event": "relay_reply", "turnId": turn, "bytes": len(pcm), "t": start})
        for seq, i in enumerate(range(0, len(pcm), 960)):
            if not s.replying or s.closed:
                break
            await self.event(s, {"type": "audio", "audioBase64": base64.b64encode(pcm[i:i + 960]).decode(), "itemId": "item-2",
                                 "outputGeneration": 1},
                             {"type": "output.audio.delta", "turnId": turn, "seq": 10 + seq, "payload": {"byteLength": 960}})
        if s.replying and not s.closed:
            await self.event(s, {"type": "mark", "markName": "m-%s" % turn},
                             {"type": "output.audio.done", "turnId": turn, "seq": 80, "final": True, "payload": {"markName": "m-%s" % turn}})
            for part in ("The robot ", "will go forward."):
                await self.event(s, {"type": "transcript", "role": "assistant", "text": part, "final": False})
            await self.event(s, {"type": "transcript", "role": "assistant", "text": "The robot will go forward.", "final": True})
            await self.event(s, {"type": "audioDone", "status": "completed"}, {"type": "turn.ended", "turnId": turn, "seq": 85})
        after = self.config["clearAfterMs"]
        if after is not None and s.replying:
            await asyncio.sleep(after / 1000)
            self.emit({"event": "relay_server_clear", "t": time.monotonic()})
            s.replying = False
            await self.event(s, {"type": "clear", "reason": "barge-in"}, {"type": "turn.cancelled", "turnId": turn, "seq": 88})

    async def consult_answer(self, ws, run, key):
        await asyncio.sleep(0.3)
        await self.gw.send(ws, {"type": "event", "event": "chat", "payload": {
            "runId": run, "sessionKey": key, "seq": 1, "state": "final",
            "message": {"role": "assistant", "content": [{"type": "text", "text": self.config["consultAnswer"]}]}}})

    async def close(self, s, reason):
        if s.closed:
            return
        s.closed = True
        try:
            await self.event(s, {"type": "close", "reason": reason}, {"type": "session.closed", "seq": 99, "final": True,
                                                                     "payload": {"reason": reason}})
        except Exception:
            pass

    async def close_all(self):
        for s in list(self.sessions.values()):
            await self.close(s, "completed")

    def dropped(self, ws):
        """The owning socket is gone: its relays close (disposition detach)."""
        for s in self.sessions.values():
            if s.ws is ws:
                s.closed = True
