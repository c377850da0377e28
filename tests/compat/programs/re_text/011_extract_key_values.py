import re

line = 'level=error ts=2024-06-01T10:00:00Z msg="disk almost full" disk=/dev/sda1 used_pct=97.5 retry=false'
pairs = re.findall(r'(\w+)=("[^"]*"|\S+)', line)
record = {}
for k, v in pairs:
    v = v.strip('"')
    if re.fullmatch(r"-?\d+", v):
        v = int(v)
    elif re.fullmatch(r"-?\d+\.\d+", v):
        v = float(v)
    elif v in ("true", "false"):
        v = v == "true"
    record[k] = v
for k, v in record.items():
    print(f"{k:9} {type(v).__name__:5} {v!r}")
