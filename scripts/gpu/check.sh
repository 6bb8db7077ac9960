#!/usr/bin/env bash
# The GPU check in one command (scripts/gpu/README.md): on a GPU machine with Python 3.12, torch
# and transformers but no node, no network and no editable install, it unpacks what
# `make gpu-check-prep` packed into .gpu-check/ (node, the env server bundle with sharp, the
# jsonschema wheels, the micro demo's tasks) and runs scripts/gpu/check.py, which writes every
# stage's result to $OUT/results.jsonl as it finishes.
#
#   scripts/gpu/check.sh                 the GPU run (about 6 minutes on one H200)
#   scripts/gpu/check.sh --cpu-dry-run   the same stages at tiny sizes on this machine's CPU
#
#   OUT      where results come back (default runs/gpu-check); at most 8 files, none in subfolders
#   PYTHON   the interpreter (default python3; the dry run here uses .venv/bin/python)
#   CARRY    the packed folder (default .gpu-check)
set -uo pipefail
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$REPO"
OUT="${OUT:-$REPO/runs/gpu-check}"
PYTHON="${PYTHON:-python3}"
CARRY="${CARRY:-$REPO/.gpu-check}"
SCRATCH="${TMPDIR:-/tmp}/vistool-gpu-check"
mkdir -p "$OUT" "$SCRATCH"
LOG="$OUT/check.log"
exec > >(tee -a "$LOG") 2>&1
echo "[check] $(date -u +%FT%TZ) repo $REPO, out $OUT, python $("$PYTHON" --version 2>&1)"

if [ ! -f "$CARRY/node.xz" ] || [ ! -f "$CARRY/server-bundle.tar.xz" ]; then
  echo "[check] $CARRY is missing or incomplete: run \`make gpu-check-prep\` first and carry .gpu-check"
  exit 2
fi

# Python packages the GPU image lacks (jsonschema and its dependencies), installed aside.
if ! "$PYTHON" -c "import jsonschema, referencing" 2>/dev/null; then
  "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$SCRATCH/site" "$CARRY"/wheels/*.whl \
    || { echo "[check] installing the carried wheels failed"; exit 2; }
  export PYTHONPATH="$SCRATCH/site${PYTHONPATH:+:$PYTHONPATH}"
fi

# node, and the env server bundle with sharp's native module, unpacked with Python (the image may
# have no xz). The bundle goes where the trainer looks for it: dist/ and node_modules/ of the repo.
"$PYTHON" - "$CARRY" "$SCRATCH" "$REPO" <<'PY' || { echo "[check] unpacking node or the server bundle failed"; exit 2; }
import lzma, os, shutil, sys, tarfile
from pathlib import Path
carry, scratch, repo = map(Path, sys.argv[1:4])
node = scratch / "node" / "bin" / "node"
if not node.exists():
    node.parent.mkdir(parents=True, exist_ok=True)
    with lzma.open(carry / "node.xz") as source, open(node, "wb") as target:
        shutil.copyfileobj(source, target)
    node.chmod(0o755)
if not (repo / "dist" / "cli.js").exists() or not (repo / "node_modules" / "sharp").exists():
    with tarfile.open(carry / "server-bundle.tar.xz") as tar:
        tar.extractall(repo, filter="tar")
PY
NODE="$SCRATCH/node/bin/node"
export PATH="$SCRATCH/node/bin:$PATH"
echo "[check] node $("$NODE" --version)"

export PYTHONUNBUFFERED=1 MALLOC_MMAP_THRESHOLD_=65536
"$PYTHON" scripts/gpu/check.py --out "$OUT" --node "$NODE" --carry "$CARRY" "$@"
status=$?
echo "[check] exit $status"
exit $status
