"""A `sluice serve` for the tests: the binary `SLUICE_BIN` names (the Rust test that runs
pytest sets it), on a free port, with a fresh data directory and two API keys."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

KEYS = ("key-a", "key-b")


@dataclass
class Server:
    base_url: str


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    binary = os.environ.get("SLUICE_BIN")
    if not binary:
        pytest.fail("SLUICE_BIN must name the sluice binary (cargo test sets it)")
    data = tempfile.mkdtemp(prefix="sluice-client-")
    port = _free_port()
    args = [binary, "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", data]
    for key in KEYS:
        args += ["--api-key", key]
    process = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    for line in process.stderr:
        if re.search(r"listen=\S+", line):
            break
    else:
        pytest.fail("sluice serve exited before it listened")
    yield Server(f"http://127.0.0.1:{port}")
    process.terminate()
    process.wait(timeout=20)
