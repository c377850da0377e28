import json
import sqlite3

conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE api_calls (id INTEGER PRIMARY KEY, tool TEXT, request TEXT, response TEXT)")
calls = [
    {"tool": "search", "request": {"q": "sqlite window"}, "response": {"hits": 12, "top": "docs"}},
    {"tool": "weather", "request": {"city": "Oslo"}, "response": {"temp_c": -4, "sky": "snow"}},
    {"tool": "search", "request": {"q": "asyncio"}, "response": {"hits": 0}},
]
conn.executemany(
    "INSERT INTO api_calls (tool, request, response) VALUES (?, ?, ?)",
    [(c["tool"], json.dumps(c["request"]), json.dumps(c["response"], sort_keys=True)) for c in calls],
)

for cid, tool, req, resp in conn.execute("SELECT id, tool, request, response FROM api_calls ORDER BY id"):
    req, resp = json.loads(req), json.loads(resp)
    print(cid, tool, req, "->", resp)

raw = conn.execute("SELECT response FROM api_calls WHERE tool = ? ORDER BY id", ("search",)).fetchall()
hits = [json.loads(r[0]).get("hits", 0) for r in raw]
print("search hits:", hits, "stored text:", raw[0][0])
conn.close()
