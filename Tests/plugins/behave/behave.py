#!/usr/bin/python3
"""A purpose-built bad plugin for the plugin host's tests. Its behaviour comes from argv[1]:
  ok        answers behave.echo with its params
  crash     exits with code 3 when invoked
  hang      never answers invokes
  garbage   prints junk lines (before and after hello) but answers correctly
  hugeline  prints a 40 MB line without a newline-terminated message, then answers
  slowstart sleeps 2 s before saying hello
  nohello   never says hello
  event     answers and also emits a node event
  flood     after hello, writes events and log lines as fast as it can, forever (and answers)
  crashloop says hello, then exits with code 4 at once, every time it is started
  ticker    after hello, emits behave.tick {n} every 50 ms (a steady event stream) and answers
  env       answers with the names in its environment and its working directory
"""
import json, os, sys, threading, time

mode = sys.argv[1]


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        if mode == "nohello":
            continue
        if mode == "slowstart":
            time.sleep(2)
        if mode == "garbage":
            print("this is not JSON", flush=True)
            print('{"type": 5}', flush=True)
        sys.stderr.write("behave plugin started in mode %s\n" % mode)
        sys.stderr.flush()
        send({"type": "hello", "protocol": 1})
        send({"type": "log", "level": "info", "message": "hello from behave"})
        if mode == "crashloop":
            sys.exit(4)
        if mode in ("flood", "ticker"):
            lock = threading.Lock()
            _send = send

            def send(obj):
                with lock:
                    _send(obj)

            def stream():
                n = 0
                while True:
                    n += 1
                    send({"type": "event", "event": "behave.tick", "payload": {"n": n}})
                    if mode == "flood":
                        send({"type": "log", "level": "info", "message": "flood %d" % n})
                    else:
                        time.sleep(0.05)
            threading.Thread(target=stream, daemon=True).start()
    elif msg["type"] == "invoke":
        if mode == "crash":
            sys.exit(3)
        if mode == "hang":
            continue
        if mode == "garbage":
            print("[[[ garbage", flush=True)
        if mode == "hugeline":
            sys.stdout.write("x" * (40 * 1024 * 1024) + "\n")
            sys.stdout.flush()
        if mode == "event":
            send({"type": "event", "event": "behave.happened", "payload": {"n": 1}})
        payload = {"mode": mode, "params": msg["params"]}
        if mode == "env":
            payload["environ"] = sorted(os.environ.keys())
            payload["cwd"] = os.getcwd()
        send({"type": "result", "id": msg["id"], "ok": True, "payload": payload})
    elif msg["type"] == "cancel":
        pass
