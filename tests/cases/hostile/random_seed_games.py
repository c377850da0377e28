import random, os
random.seed(42)
a = random.random()
random.seed(42)
print(a == random.random(), len(os.urandom(64)))
