import sqlite3
import re

def email_domain(email):
    if email is None:
        return None
    m = re.search(r"@([\w.-]+)$", email)
    return m.group(1).lower() if m else None

def slugify(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")

conn = sqlite3.connect(":memory:")
conn.create_function("email_domain", 1, email_domain)
conn.create_function("slugify", 1, slugify, deterministic=True)
conn.execute("CREATE TABLE contacts (name TEXT, email TEXT, company TEXT)")
conn.executemany("INSERT INTO contacts VALUES (?, ?, ?)", [
    ("Ann", "ann@Acme.com", "Acme Corp."),
    ("Bo", "bo@globex.io", "Globex & Sons"),
    ("Cid", "cid@acme.com", "ACME corp"),
    ("Dee", None, "Independent"),
])
for domain, n in conn.execute(
        "SELECT email_domain(email) AS d, COUNT(*) FROM contacts GROUP BY d ORDER BY d"):
    print(domain, n)
print(conn.execute("SELECT DISTINCT slugify(company) FROM contacts ORDER BY 1").fetchall())
conn.close()
