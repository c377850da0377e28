import asyncio, json

team = json.loads(await get_team_members({"department": "engineering"}))
expenses, budgets = await asyncio.gather(
    asyncio.gather(*[get_expenses({"employee_id": m["id"], "quarter": "Q3"}) for m in team]),
    asyncio.gather(*[get_custom_budget({"user_id": m["id"]}) for m in team]),
)
over = []
for member, items, budget in zip(team, expenses, budgets):
    travel = sum(e["amount"] for e in json.loads(items) if e["category"] == "travel" and e["status"] == "approved")
    limit = json.loads(budget)["budget"] or 5000
    if travel > limit:
        over.append({"id": member["id"], "name": member["name"], "travel": round(travel, 2), "budget": limit})
print(json.dumps(over))
