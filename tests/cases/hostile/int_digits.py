try:
    int("9" * 100_000)
except ValueError as e:
    print("limited:", "digits" in str(e))
