# How the scripts/bench-* measurements print their rows: a markdown table for a person, or with
# --json one {"name","node","other","ratio"} object per line for scripts/bench.py to fold in.
import json


def emit(rows, as_json, title):
    """rows: (name, node, other, ratio) tuples; a ratio of "-" is a note, not a ratio."""
    if as_json:
        for name, node, other, ratio in rows:
            print(json.dumps({"name": name, "node": node, "other": other, "ratio": ratio + (" (other/node)" if ratio != "-" else "")}))
        return
    print(title)
    print()
    print("| measure | openclaw-node | reference | ratio (reference / node) |")
    print("|---|---|---|---|")
    for r in rows:
        print("| %s | %s | %s | %s |" % r)
