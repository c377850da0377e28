from enum import Enum

class Status(Enum):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"

    @property
    def is_terminal(self) -> bool:
        return self in (Status.DONE, Status.FAILED)

jobs = [
    {"id": "j1", "status": "done"},
    {"id": "j2", "status": "running"},
    {"id": "j3", "status": "failed"},
    {"id": "j4", "status": "pending"},
    {"id": "j5", "status": "done"},
]
counts = {s: 0 for s in Status}
for job in jobs:
    st = Status(job["status"])
    counts[st] += 1
    print(f"{job['id']}: {st.name:<8} terminal={st.is_terminal}")
print({s.value: n for s, n in counts.items()})
print(Status["RUNNING"], repr(Status.DONE), Status.FAILED.value)
try:
    Status("archived")
except ValueError as e:
    print("ValueError:", e)
