from typing import TypedDict, NotRequired

class Customer(TypedDict):
    id: int
    name: str
    email: NotRequired[str]

class Invoice(TypedDict):
    number: str
    customer: Customer
    amount: float

def render(inv: Invoice) -> str:
    email = inv["customer"].get("email", "n/a")
    return f"{inv['number']}: {inv['customer']['name']} <{email}> ${inv['amount']:,.2f}"

invoices: list[Invoice] = [
    {"number": "INV-001", "customer": {"id": 1, "name": "Acme", "email": "ap@acme.test"}, "amount": 1200.0},
    {"number": "INV-002", "customer": {"id": 2, "name": "Beta"}, "amount": 87.5},
]
for inv in invoices:
    print(render(inv))
print(sorted(Invoice.__annotations__), type(invoices[0]).__name__)
print(sorted(Customer.__required_keys__), sorted(Customer.__optional_keys__))
