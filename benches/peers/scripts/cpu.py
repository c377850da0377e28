print(sum(i * i for i in range(1000000)))
