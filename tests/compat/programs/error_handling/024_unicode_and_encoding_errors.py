samples = [b"caf\xc3\xa9", b"\xff\xfeabc", b"plain ascii", b"na\xefve"]

for raw in samples:
    try:
        text = raw.decode("utf-8")
        print(f"utf-8 ok: {text!r}")
    except UnicodeDecodeError as e:
        print(f"{type(e).__name__}: byte {raw[e.start]:#04x} at {e.start} ({e.reason})")
        print(f"   replaced: {raw.decode('utf-8', errors='replace')!r}")
        print(f"   latin-1:  {raw.decode('latin-1')!r}")

try:
    "naïve café".encode("ascii")
except UnicodeEncodeError as e:
    print("encode error:", e.reason, e.start, e.end)
print("ignored:", "naïve café".encode("ascii", errors="ignore"))
print("xml refs:", "naïve".encode("ascii", errors="xmlcharrefreplace"))
