import asyncio, json, sluice

# Reads run freely: they change nothing.
team = json.loads(await get_team_members({"department": "engineering"}))
expenses = await asyncio.gather(*[get_expenses({"employee_id": m["id"], "quarter": "Q3"}) for m in team])
budgets = await asyncio.gather(*[get_custom_budget({"user_id": m["id"]}) for m in team])
over = []
for member, items, budget in zip(team, expenses, budgets):
    travel = sum(e["amount"] for e in json.loads(items) if e["category"] == "travel" and e["status"] == "approved")
    if travel > (json.loads(budget)["budget"] or 5000):
        over.append(member["id"])
sluice.count("over_budget", len(over))

# The one write: the script pauses here until a person approves or denies it.
try:
    receipt = json.loads(await hold_reimbursements({"employee_ids": over, "quarter": "Q3", "reason": "travel over budget"}))
    print(f"held the Q3 reimbursements of {', '.join(over)}: {receipt['hold_id']}")
except sluice.ToolDeniedError as denied:
    print(f"nothing held ({denied.code}): {denied}")
