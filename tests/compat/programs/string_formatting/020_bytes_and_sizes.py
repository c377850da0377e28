def human_size(n):
    units = ["B", "KB", "MB", "GB", "TB"]
    size = float(n)
    for unit in units:
        if size < 1024 or unit == units[-1]:
            return f"{size:.1f} {unit}" if unit != "B" else f"{int(size)} B"
        size /= 1024

files = [
    ("report.pdf", 2_483_112),
    ("photo.jpg", 845_221),
    ("dataset.parquet", 7_340_032_000),
    ("notes.txt", 512),
]
for name, size in sorted(files, key=lambda f: f[1], reverse=True):
    print(f"{name:<18}{human_size(size):>10}{size:>16,} bytes")
total = sum(s for _, s in files)
print(f"{'TOTAL':<18}{human_size(total):>10}")
