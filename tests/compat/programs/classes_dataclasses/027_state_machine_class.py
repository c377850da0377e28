from enum import Enum, auto

class State(Enum):
    DRAFT = auto()
    REVIEW = auto()
    APPROVED = auto()
    PUBLISHED = auto()
    REJECTED = auto()

TRANSITIONS = {
    State.DRAFT: {"submit": State.REVIEW},
    State.REVIEW: {"approve": State.APPROVED, "reject": State.REJECTED},
    State.APPROVED: {"publish": State.PUBLISHED},
    State.REJECTED: {"revise": State.DRAFT},
}

class Article:
    def __init__(self, title):
        self.title = title
        self.state = State.DRAFT
        self.log = []

    def fire(self, action):
        nxt = TRANSITIONS.get(self.state, {}).get(action)
        if nxt is None:
            self.log.append(f"!! {action} not allowed in {self.state.name}")
            return False
        self.log.append(f"{self.state.name} --{action}--> {nxt.name}")
        self.state = nxt
        return True

a = Article("Release notes")
for action in ["submit", "reject", "publish", "revise", "submit", "approve", "publish"]:
    a.fire(action)
print("\n".join(a.log))
print("final:", a.state.name)
