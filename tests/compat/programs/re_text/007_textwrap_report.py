import textwrap

summary = ("The nightly ETL job processed 1,204,551 rows from three upstream sources. "
           "Two partitions were skipped due to schema drift in the orders table, "
           "and the dedupe stage removed 3,902 duplicate customer records.")
print(textwrap.fill(summary, width=50))
print()
print(textwrap.fill(summary, width=60, initial_indent="  - ", subsequent_indent="    "))
print()
print(textwrap.shorten(summary, width=70, placeholder=" [...]"))
block = """
    def handler(event):
        return {"ok": True}
"""
print(textwrap.dedent(block).strip())
print(textwrap.indent("line one\n\nline two", "> "))
