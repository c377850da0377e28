# sluice: limits = {"memory_bytes": 536870912}
# An f-string of 30 pieces (joined by BUILD_STRING; more are joined by str.join) that repeat one
# large string: 72 MiB each add up past the largest allocation a 32-bit guest can ask for, 144 MiB
# each past a 32-bit length altogether. Either is a MemoryError the script can catch, and the
# interpreter and its variables carry on (the sum once overflowed and stopped the guest).
kept = "still here"
for mib in (72, 144):
    s = "x" * (mib << 20)
    source = 'f"' + "{s}" * 30 + '"'
    try:
        eval(source)
        print(mib, "made")
    except MemoryError:
        print(mib, "MemoryError")
    del s
print(kept, f"{kept}{30}")
