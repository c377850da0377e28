import csv
import io

api_result = {
    "data": [
        {"id": "u1", "profile": {"first": "Ana", "last": "Lopez"}, "stats": {"posts": 12, "likes": 340}},
        {"id": "u2", "profile": {"first": "Raj", "last": "Patel"}, "stats": {"posts": 3, "likes": 15}},
        {"id": "u3", "profile": {"first": "Kim", "last": "Ng"}, "stats": {"posts": 0, "likes": 0}},
    ]
}
buf = io.StringIO()
w = csv.writer(buf, lineterminator="\n")
w.writerow(["id", "full_name", "posts", "likes", "likes_per_post"])
for u in api_result["data"]:
    s = u["stats"]
    ratio = f"{s['likes'] / s['posts']:.1f}" if s["posts"] else ""
    w.writerow([u["id"], f"{u['profile']['first']} {u['profile']['last']}", s["posts"], s["likes"], ratio])
print(buf.getvalue().rstrip())
