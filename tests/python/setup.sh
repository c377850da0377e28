#!/usr/bin/env bash
# Installs the real Python and MCP parts the tests and `cargo bench --bench mcp` use, into
# target/python-test-env (or $SLUICE_TEST_PYTHON_ENV): a Python venv with the official `mcp`
# and `anthropic` SDKs, pytest, mypy, the frameworks the client integrates with (FastMCP,
# Pydantic AI, smolagents, LangChain), Sluice's own client (clients/python) and the reference
# server mcp-server-time (PyPI), mcp-server-sqlite in a
# venv of its own, and @modelcontextprotocol/server-memory (npm). Needs python3 (3.10+) with
# venv, and node 18+. Playwright drives Debian's Chromium (`apt-get install chromium`) for the
# audit viewer's tests; its own browser downloads are not used. opentelemetry-proto decodes what
# Sluice sends over OTLP (tests/otlp/receiver.py).
set -euo pipefail
cd "$(dirname "$0")/../.."
env_dir="${SLUICE_TEST_PYTHON_ENV:-target/python-test-env}"
mkdir -p "$env_dir"
if [ ! -x "$env_dir/venv/bin/python" ]; then
    python3 -m venv "$env_dir/venv"
fi
"$env_dir/venv/bin/pip" install --quiet --disable-pip-version-check mcp anthropic mcp-server-time pytest mypy \
    fastmcp pydantic-ai-slim smolagents langchain-core playwright opentelemetry-proto
# The Python client, built and installed as a user would (its tests run against the source).
"$env_dir/venv/bin/pip" install --quiet --disable-pip-version-check ./clients/python
# mcp-server-sqlite (archived upstream, its last release 2025.4.25) predates the mcp 2 SDK's
# server API: it gets a venv of its own with the 1.x SDK it was written for.
if [ ! -x "$env_dir/sqlite-venv/bin/python" ]; then
    python3 -m venv "$env_dir/sqlite-venv"
fi
"$env_dir/sqlite-venv/bin/pip" install --quiet --disable-pip-version-check mcp-server-sqlite 'mcp<2'
npm install --silent --no-audit --no-fund --prefix "$env_dir/node" @modelcontextprotocol/server-memory
echo "Python and MCP test parts in $env_dir"
