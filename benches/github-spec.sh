#!/bin/sh
# Fetches GitHub's REST API description (npm package @octokit/openapi, ~29 MB tarball, 13 MB
# api.github.com.json, OpenAPI 3.0.3, ~800 paths) into benches/data/ for benches/openapi.rs and
# tests/it/openapi/realworld.rs. The spec is never committed (benches/data/.gitignore).
# Usage: sh benches/github-spec.sh [version]   (needs npm; default version below)
set -eu
version="${1:-23.0.2}"
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/data/api.github.com.json"
if [ -s "$out" ]; then
    echo "already present: $out"
    exit 0
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "@octokit/openapi@$version" >/dev/null)
tar -xzf "$tmp"/octokit-openapi-*.tgz -C "$tmp" package/generated/api.github.com.json
mkdir -p "$here/data"
mv "$tmp/package/generated/api.github.com.json" "$out"
echo "wrote $out ($(wc -c <"$out") bytes)"
