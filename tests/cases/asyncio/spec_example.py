# sluice: answers = {"get_team_members": "[{\"id\": \"E1\"}, {\"id\": \"E2\"}, {\"id\": \"E3\"}]", "get_expenses": ["[{\"amount\": 4000, \"category\": \"travel\", \"status\": \"approved\"}, {\"amount\": 1500.555, \"category\": \"travel\", \"status\": \"approved\"}]", "[{\"amount\": 9000, \"category\": \"travel\", \"status\": \"pending\"}]", "[{\"amount\": 6000, \"category\": \"travel\", \"status\": \"approved\"}, {\"amount\": 900, \"category\": \"meals\", \"status\": \"approved\"}]"]}
# sluice: calls = ["get_team_members", "get_expenses", "get_expenses", "get_expenses"]
# sluice: pending = [1, 3]
import asyncio, json

async def main():
    team = json.loads(await get_team_members({"department": "engineering"}))
    results = await asyncio.gather(*[get_expenses({"employee_id": m["id"], "quarter": "Q3"}) for m in team])
    totals = {m["id"]: sum(e["amount"] for e in json.loads(r) if e["category"] == "travel" and e["status"] == "approved")
              for m, r in zip(team, results)}
    print(json.dumps({k: round(v, 2) for k, v in totals.items() if v > 5000}))

asyncio.run(main())
