# sluice: cpython = true
# An int's text as str() and f-strings make it (one digit, 64-bit edges, beyond 64 bits, negative
# numbers, bool and int subclasses), and f-strings joined from ASCII pieces beside pieces that are not.
class Meters(int):
    def __str__(self):
        return f"{int(self)} m"

    def __format__(self, spec):
        return f"<{int(self)}>"

values = [0, 7, -7, 10, -10, 99, 2**31, 2**63 - 1, -(2**63), 2**63, -(2**63) - 1, 10**30, -(10**30)]
for value in values:
    print(str(value), f"{value}", f"n={value}!", len(str(value)), str(value) == repr(value))
print(str(True), f"{False}", f"{True}{1}", str(Meters(5)), f"{Meters(5)}", f"m{Meters(6)}")
digits = [str(d) for d in range(10)] + [f"{d}" for d in range(10)]
print("".join(digits), [str(d) == f"{d}" == repr(d) for d in (0, 9)])
print(f"{'é'}{1}", f"a{'ß'}b{2}", f"{'日本'}{-3}", f"\U0001F600{4}", len(f"\U0001F600{4}"))
sku = [f"SKU{i % 97}" for i in range(200)]
print(sku[:3], sku[-1], len(set(sku)), sum(len(s) for s in sku))
print(f"{''}{''}" == "", f"{''}{'x'}", f"{'ab'}{''}{'cd'}", f"{1}{2}{3}{4}{5}", f"{-0}")
joined = f"{'a' * 3}{123}"
print(joined, joined.isascii(), f"{'é'}{123}".isascii(), hash(joined) == hash("aaa123"), {joined: 1}["aaa123"])
print(str(-1).isdigit(), f"{5}".isdigit(), f"{2**64}".upper(), f"{12}".zfill(5), f"{7}" + "x")
