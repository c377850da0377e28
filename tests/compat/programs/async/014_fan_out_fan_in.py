import asyncio

async def fetch_user(uid):
    await asyncio.sleep(0.005)
    return {"id": uid, "name": f"user{uid}", "team": "red" if uid % 2 else "blue"}

async def fetch_orders(uid):
    await asyncio.sleep(0.008)
    return [{"uid": uid, "amount": uid * 10 + k} for k in range(uid % 3 + 1)]

async def enrich(uid):
    user, orders = await asyncio.gather(fetch_user(uid), fetch_orders(uid))
    return {**user, "orders": len(orders), "spent": sum(o["amount"] for o in orders)}

async def main():
    profiles = await asyncio.gather(*(enrich(u) for u in range(1, 7)))
    by_team = {}
    for p in profiles:
        by_team.setdefault(p["team"], []).append(p)
    for team in sorted(by_team):
        members = by_team[team]
        print(f"{team}: {[m['name'] for m in members]} spent={sum(m['spent'] for m in members)}")
    top = max(profiles, key=lambda p: p["spent"])
    print("top spender:", top["name"], top["spent"])

asyncio.run(main())
