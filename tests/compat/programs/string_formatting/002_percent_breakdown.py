counts = {"success": 842, "timeout": 37, "error": 121}
total = sum(counts.values())

print(f"Total requests: {total:,}")
for status, n in sorted(counts.items(), key=lambda kv: -kv[1]):
    share = n / total
    bar = "#" * round(share * 40)
    print(f"  {status:<8} {n:>5} {share:>7.2%} {bar}")

error_rate = (counts["timeout"] + counts["error"]) / total
print(f"Error rate: {error_rate:.1%}")
print(f"Success rate (4 dp): {counts['success'] / total:.4f}")
