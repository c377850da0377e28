from collections import OrderedDict

class LRU:
    def __init__(self, cap):
        self.cap, self.data = cap, OrderedDict()

    def get(self, key):
        if key not in self.data:
            return None
        self.data.move_to_end(key)
        return self.data[key]

    def put(self, key, value):
        self.data[key] = value
        self.data.move_to_end(key)
        if len(self.data) > self.cap:
            evicted, _ = self.data.popitem(last=False)
            print("evict", evicted)

cache = LRU(3)
for k in ["a", "b", "c"]:
    cache.put(k, k.upper())
cache.get("a")
cache.put("d", "D")
cache.put("e", "E")
print("get b:", cache.get("b"), "| get a:", cache.get("a"))
print("order:", list(cache.data))
