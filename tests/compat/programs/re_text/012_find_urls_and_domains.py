import re
from urllib.parse import urlparse

text = """See https://docs.python.org/3/library/re.html and http://example.com/path?q=1&x=y.
Mirror: https://sub.example.com:8443/download. Not a url: htp://bad, www.nolink.org"""
urls = re.findall(r"https?://[^\s,]+?(?=[.,]?(?:\s|$))", text)
for u in urls:
    p = urlparse(u)
    print(f"{p.scheme:5} {p.hostname:20} port={p.port} path={p.path!r} query={p.query!r}")
domains = sorted({re.sub(r"^(?:www\.|sub\.)", "", urlparse(u).hostname) for u in urls})
print("domains:", domains)
