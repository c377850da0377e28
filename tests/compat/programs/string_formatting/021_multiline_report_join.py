stats = {
    "rows_read": 104_233,
    "rows_written": 103_998,
    "rows_rejected": 235,
    "duration_s": 41.237,
}

lines = [
    "ETL run summary",
    "===============",
    f"Read:     {stats['rows_read']:>10,}",
    f"Written:  {stats['rows_written']:>10,}",
    f"Rejected: {stats['rows_rejected']:>10,} ({stats['rows_rejected'] / stats['rows_read']:.3%})",
    f"Duration: {stats['duration_s']:>10.2f}s",
    f"Rate:     {stats['rows_read'] / stats['duration_s']:>10,.0f} rows/s",
]
report = "\n".join(lines)
print(report)
print(f"Report length: {len(report)} chars, {report.count(chr(10)) + 1} lines")
