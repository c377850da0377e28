"""The shortest agent loop: a model (scripted here, so it runs offline) writes Python that
joins two tools' data in Sluice; only the answer reaches the model's context.

    sluice serve &            # in the repository: cargo run -- serve
    python examples/agent.py  # SLUICE_BASE_URL / SLUICE_API_KEY if not the defaults

With a real model, pass `anthropic.Anthropic()` instead of `ScriptedModel()`.
"""

from __future__ import annotations

import json
import time
from typing import Any

from anthropic.types import Message

from sluice_client import CodeExecutionAgent, Sluice, python_tool

ORDERS = [{"order": n, "customer": f"C{n % 40:02d}", "total": round(10 + (n * 37) % 490, 2)} for n in range(2000)]
CUSTOMERS = {f"C{n:02d}": {"name": f"Customer {n}", "region": ["north", "south", "east", "west"][n % 4]} for n in range(40)}


def get_orders(page: int) -> str:
    """One page (500) of March's orders, as JSON."""
    return json.dumps(ORDERS[page * 500 : (page + 1) * 500])


def get_customer(customer_id: str) -> str:
    """A customer's name and region, as JSON."""
    return json.dumps(CUSTOMERS[customer_id])


CODE = """
import asyncio, json
pages = await asyncio.gather(*[get_orders(page=p) for p in range(4)])
spent = {}
for order in (o for page in pages for o in json.loads(page)):
    spent[order["customer"]] = spent.get(order["customer"], 0) + order["total"]
top = sorted(spent, key=spent.get, reverse=True)[:3]
people = await asyncio.gather(*[get_customer(customer_id=c) for c in top])
for c, person in zip(top, people):
    print(json.loads(person)["name"], round(spent[c], 2))
"""


class ScriptedModel:
    """Stands in for `anthropic.Anthropic()`: answers with the SDK's own `Message` objects,
    first a call of execute_python, then a summary of what it printed."""

    def __init__(self) -> None:
        self.messages = self
        self.turn = 0

    def create(self, **request: Any) -> Message:
        self.turn += 1
        base = {"id": f"msg_{self.turn}", "type": "message", "role": "assistant", "model": request["model"],
                "usage": {"input_tokens": 0, "output_tokens": 0}}
        if self.turn == 1:
            block = {"type": "tool_use", "id": "toolu_1", "name": "execute_python", "input": {"code": CODE}}
            return Message.model_validate({**base, "content": [block], "stop_reason": "tool_use"})
        printed = request["messages"][-1]["content"][0]["content"]
        text = "The top spenders in March:\n" + printed
        return Message.model_validate({**base, "content": [{"type": "text", "text": text}], "stop_reason": "end_turn"})


def tokens(sluice: Sluice, execution_ids: set[str], container: str) -> tuple[int, int]:
    """(tokens of tool results that stayed inside, tokens returned), as the audit trail counts
    them (just after an execution ends; a moment is allowed for it)."""
    for _ in range(50):
        rows = [r for r in sluice.list_executions(container=container) if r.id in execution_ids]
        if rows and all(r.tool_result_tokens is not None for r in rows):
            return sum(r.tool_result_tokens or 0 for r in rows), sum(r.returned_tokens or 0 for r in rows)
        time.sleep(0.1)
    return 0, 0


def main() -> None:
    with Sluice() as sluice:
        agent = CodeExecutionAgent(ScriptedModel(), sluice, model="scripted", tools=[python_tool(get_orders), python_tool(get_customer)])
        result = agent.run("Which three customers spent the most in March, and how much?")
        print(result.text)
        print(f"tool results kept in the sandbox: {result.tool_result_bytes} bytes; returned to the model: {result.returned_bytes} bytes")
        if agent.container:
            inside, returned = tokens(sluice, {e.id for e in result.executions}, agent.container)
            print(f"tokens that stayed inside: {inside}; tokens the model read: {returned}")


if __name__ == "__main__":
    main()
