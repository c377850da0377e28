results = []

def attempt(name, fn):
    try:
        fn()
        results.append(f"{name}: LEAKED")
    except BaseException as e:
        results.append(f"{name}: blocked")

def sock():
    import socket
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.connect(("127.0.0.1", 5432))

def dns():
    import socket
    socket.getaddrinfo("example.com", 80)

def subprocess_run():
    import subprocess
    subprocess.run(["ls", "/"], check=True)

def os_system():
    import os
    if os.system("ls /") != 0:
        raise OSError("failed")

def fork():
    import os
    os.fork()

def urllib_get():
    import urllib.request
    urllib.request.urlopen("http://127.0.0.1:5432/")

def ctypes_load():
    import ctypes
    ctypes.CDLL(None)

def loop_connection():
    import asyncio
    asyncio.get_event_loop().run_until_complete(asyncio.open_connection("127.0.0.1", 5432))

for name, fn in [("socket", sock), ("dns", dns), ("subprocess", subprocess_run), ("os.system", os_system),
                 ("fork", fork), ("urllib", urllib_get), ("ctypes", ctypes_load), ("asyncio connection", loop_connection)]:
    attempt(name, fn)
print("\n".join(results))
