import sys
try:
    input("name? ")
except EOFError:
    print("\nEOFError: stdin is always empty")
print(repr(sys.stdin.read()))
