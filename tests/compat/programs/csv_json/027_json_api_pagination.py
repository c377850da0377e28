import json

pages = [
    '{"page": 1, "next": 2, "results": [{"id": 1, "ok": true}, {"id": 2, "ok": false}]}',
    '{"page": 2, "next": 3, "results": [{"id": 3, "ok": true}]}',
    '{"page": 3, "next": null, "results": [{"id": 4, "ok": true}, {"id": 5, "ok": true}]}',
]

def fetch(n):
    return json.loads(pages[n - 1])

collected, page = [], 1
while page is not None:
    body = fetch(page)
    collected.extend(body["results"])
    print(f"page {body['page']}: {len(body['results'])} results")
    page = body["next"]

ok_ids = [r["id"] for r in collected if r["ok"]]
print("total:", len(collected), "ok:", ok_ids)
print(json.dumps({"summary": {"total": len(collected), "failed": len(collected) - len(ok_ids)}}))
