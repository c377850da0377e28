import json

class Employee:
    raise_pct = 0.03

    def __init__(self, name: str, dept: str, salary: int):
        self.name, self.dept, self.salary = name, dept, salary

    @classmethod
    def from_csv_line(cls, line: str) -> "Employee":
        name, dept, salary = (p.strip() for p in line.split(","))
        return cls(name, dept, int(salary))

    @classmethod
    def from_json(cls, text: str) -> "Employee":
        return cls(**json.loads(text))

    @staticmethod
    def is_valid_dept(dept: str) -> bool:
        return dept in {"eng", "sales", "ops"}

    def give_raise(self) -> None:
        self.salary = int(self.salary * (1 + self.raise_pct))

    def __repr__(self):
        return f"Employee({self.name!r}, {self.dept!r}, {self.salary})"

staff = [
    Employee.from_csv_line("Ana, eng, 120000"),
    Employee.from_csv_line("Ben , sales, 80000"),
    Employee.from_json('{"name": "Cy", "dept": "legal", "salary": 95000}'),
]
Employee.raise_pct = 0.05
for e in staff:
    e.give_raise()
    print(e, "valid dept" if Employee.is_valid_dept(e.dept) else "UNKNOWN dept")
