import pickle
try:
    pickle.loads(b"\x80\x04\x95" + b"(" * 100_000)
    print("LOADED")
except Exception as e:
    print("refused:", type(e).__name__ != "")
