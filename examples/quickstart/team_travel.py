# Which engineers spent more than 5,000 on approved travel in Q3?
# Run with: cargo run -- run examples/quickstart/team_travel.py --answers examples/quickstart/answers.json
import asyncio, json

async def main():
    team = json.loads(await get_team_members({"department": "engineering"}))
    results = await asyncio.gather(*[get_expenses({"employee_id": m["id"], "quarter": "Q3"}) for m in team])
    totals = {m["id"]: sum(e["amount"] for e in json.loads(r) if e["category"] == "travel" and e["status"] == "approved")
              for m, r in zip(team, results)}
    print(json.dumps({k: round(v, 2) for k, v in totals.items() if v > 5000}))

asyncio.run(main())
