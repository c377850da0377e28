from functools import lru_cache

@lru_cache(maxsize=None)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

print("fib(80):", fib(80))
print(fib.cache_info())

@lru_cache(maxsize=2)
def lookup(user_id):
    print(f"  fetching user {user_id}")
    return {"id": user_id, "name": f"user{user_id}"}

for uid in [1, 2, 1, 3, 1, 2]:
    lookup(uid)
print(lookup.cache_info())
lookup.cache_clear()
print("after clear:", lookup.cache_info())
