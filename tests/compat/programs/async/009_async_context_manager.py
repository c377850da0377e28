import asyncio
from contextlib import asynccontextmanager

log = []

class FakeConnection:
    def __init__(self, dsn):
        self.dsn, self.open = dsn, False

    async def __aenter__(self):
        await asyncio.sleep(0)
        self.open = True
        log.append(f"connect {self.dsn}")
        return self

    async def __aexit__(self, exc_type, exc, tb):
        self.open = False
        log.append(f"disconnect {self.dsn} (error={exc_type.__name__ if exc_type else None})")

    async def query(self, sql):
        await asyncio.sleep(0.005)
        return [{"sql": sql, "rows": 3}]

@asynccontextmanager
async def transaction(conn):
    log.append("BEGIN")
    try:
        yield conn
        log.append("COMMIT")
    except Exception:
        log.append("ROLLBACK")
        raise

async def main():
    async with FakeConnection("db://primary") as conn:
        async with transaction(conn):
            print(await conn.query("SELECT * FROM users"))
        try:
            async with transaction(conn):
                raise RuntimeError("constraint failed")
        except RuntimeError as e:
            print("caught:", e)
    print("\n".join(log + [f"still open: {conn.open}"]))

asyncio.run(main())
