raw_rows = ["  Alice Smith |alice@EXAMPLE.com| admin ", "bob jones|BOB@example.com |  user",
            "\tCarol  Danvers|carol@example.com|ADMIN\n", "|missing@example.com|user"]
for row in raw_rows:
    name, email, role = (p.strip() for p in row.split("|"))
    name = " ".join(name.split()).title() or "(no name)"
    email = email.lower()
    role = role.upper()
    local, _, domain = email.partition("@")
    print(f"{name:16} {email:22} {role:5} local={local} domain={domain}")

print("zfill:", "42".zfill(5), "| center:", "[" + "hi".center(8, "*") + "]")
print("startswith tuple:", "report_2024.csv".startswith(("report", "summary")), "| removesuffix:", "report.csv".removesuffix(".csv"))
print("count/find:", "banana".count("an"), "banana".find("nan"), "banana".rfind("a"), "banana".find("x"))
