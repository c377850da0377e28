names = {i: f"item-{i}" for i in range(1000)}
def double(x):
    return x * 2
total = double(21)
