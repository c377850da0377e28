results = []
def attempt(name, fn):
    try:
        fn()
        results.append(name + " LEAKED")
    except BaseException:
        results.append(name + " blocked")
def http_client():
    import http.client
    c = http.client.HTTPConnection("127.0.0.1", 8080, timeout=1)
    c.request("GET", "/healthz")
    c.getresponse()
def hostname():
    import socket
    name = socket.gethostname()
    if name and name != "localhost":
        raise SystemError("leak")
    raise OSError("no host name")
def udp():
    import socket
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"x", ("8.8.8.8", 53))
def ssl_context():
    import ssl
    ssl.create_default_context().wrap_socket(__import__("socket").socket(), server_hostname="example.com").connect(("example.com", 443))
for name, fn in [("http.client", http_client), ("hostname", hostname), ("udp", udp), ("ssl", ssl_context)]:
    attempt(name, fn)
print("\n".join(results))
