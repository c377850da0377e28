import math

ids = [1024, 999983, 1000000, 65537, 123456789]
def is_prime(n):
    if n < 2:
        return False
    for p in range(2, math.isqrt(n) + 1):
        if n % p == 0:
            return False
    return True
for n in ids:
    print(f"{n:>10} isqrt={math.isqrt(n):>6} prime={is_prime(n)} bits={n.bit_length()}")
print("pow mod:", pow(3, 200, 1_000_000_007), "inverse:", pow(17, -1, 3120))
print("big:", 2 ** 100, "digits in 100!:", len(str(math.factorial(100))))
print(divmod(10**20 + 7, 97))
