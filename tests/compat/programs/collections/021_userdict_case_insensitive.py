from collections import UserDict

class Headers(UserDict):
    def __setitem__(self, key, value):
        super().__setitem__(key.lower(), value)

    def __getitem__(self, key):
        return super().__getitem__(key.lower())

    def __contains__(self, key):
        return key.lower() in self.data

h = Headers({"Content-Type": "application/json", "X-Request-ID": "abc123"})
h["content-length"] = "42"
print(h["CONTENT-TYPE"], "X-Request-Id" in h, h.get("Accept", "*/*"))
for k in sorted(h):
    print(f"{k}: {h[k]}")
