# sluice: stdout_contains = ["compiled"]
source = "x = 1\n" * 200_000
exec(compile(source, "big", "exec"))
print("compiled", x)
