import os, sys
print(dict(os.environ), os.getenv("HOME"), os.getenv("PATH"), sys.argv[1:] if len(sys.argv) > 1 else [])
try:
    os.putenv("X", "1")
except Exception as e:
    print("putenv", type(e).__name__)
else:
    print("putenv ok (sandbox-local)")
print(os.getenv("DATABASE_URL"))
