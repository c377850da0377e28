from enum import Enum, auto, unique

@unique
class Channel(Enum):
    EMAIL = auto()
    SMS = auto()
    PUSH = auto()
    WEBHOOK = auto()

class Region(str, Enum):
    US = "us-east-1"
    EU = "eu-west-1"

prefs = {"alice": ["EMAIL", "PUSH"], "bob": ["SMS"], "cleo": ["WEBHOOK", "EMAIL", "SMS"]}
for user, names in prefs.items():
    chans = sorted((Channel[n] for n in names), key=lambda c: c.value)
    print(f"{user}: {[c.name.lower() for c in chans]} values={[c.value for c in chans]}")

print(list(Channel.__members__))
print(Region.EU.value, Region("us-east-1").name, Region.US == "us-east-1")
print(len(Channel), Channel.PUSH in Channel)
