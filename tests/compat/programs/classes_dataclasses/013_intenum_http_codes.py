from enum import IntEnum

class HttpStatus(IntEnum):
    OK = 200
    CREATED = 201
    BAD_REQUEST = 400
    NOT_FOUND = 404
    SERVER_ERROR = 500

responses = [200, 404, 201, 500, 200, 400, 404, 200]
by_code = {}
for code in responses:
    status = HttpStatus(code)
    by_code[status] = by_code.get(status, 0) + 1

for status in sorted(by_code):
    kind = "client error" if 400 <= status < 500 else "server error" if status >= 500 else "success"
    print(f"{status.value} {status.name:<13} x{by_code[status]}  ({kind})")

print(HttpStatus.OK == 200, HttpStatus.NOT_FOUND + 1, int(HttpStatus.CREATED))
print(max(by_code).name, [s.name for s in HttpStatus if s < 400])
