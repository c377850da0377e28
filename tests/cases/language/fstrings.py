# sluice: cpython = true
name, amount, ratio = "Ada", 1234567.891, 0.4567
print(f"{name:>6}|{name:<6}|{name:^7}|")
print(f"{amount:,.2f} {ratio:.1%} {255:#x} {255:08b} {3.14159:e}")
print(f"{name!r} {name!s} {len(name)=}")
items = {"a": 1}
print(f"{items['a'] + 1} {'nested ' + f'{1 + 1}'}")
width = 10
print(f"[{'x':{width}}]")
