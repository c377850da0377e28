class ApiError(Exception):
    def __init__(self, status, endpoint, detail=""):
        super().__init__(f"{endpoint} returned {status}: {detail}")
        self.status = status
        self.endpoint = endpoint
        self.detail = detail

    @property
    def retryable(self):
        return self.status >= 500 or self.status == 429

class NotFoundError(ApiError):
    pass

def call(endpoint):
    table = {"/users": (200, "ok"), "/orders": (503, "maintenance"),
             "/missing": (404, "no such route"), "/burst": (429, "rate limited")}
    status, detail = table[endpoint]
    if status == 404:
        raise NotFoundError(status, endpoint, detail)
    if status >= 400:
        raise ApiError(status, endpoint, detail)
    return detail

for ep in ["/users", "/orders", "/missing", "/burst"]:
    try:
        print(ep, "->", call(ep))
    except NotFoundError as e:
        print(ep, "-> not found:", e.detail)
    except ApiError as e:
        print(ep, f"-> {type(e).__name__} status={e.status} retryable={e.retryable} msg={e}")
