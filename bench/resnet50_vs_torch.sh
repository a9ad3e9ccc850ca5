#!/usr/bin/env bash
# Decides issue 4's goal: a ResNet-50 training step at batch 8 on the CPU,
# opscope (oneDNN, blocked layouts end to end) vs PyTorch (Debian's
# python3-torch with torchvision.models.resnet50(), SGD with momentum, fp32),
# same machine, same run, same thread count. Goal: ours <= 0.8x PyTorch's time.
# Inference is reported too. Usage: bench/resnet50_vs_torch.sh [THREADS] [ITERS] [OPSCOPE]
set -euo pipefail
cd "$(dirname "$0")/.."
threads=${1:-$(nproc)}
iters=${2:-10}
opscope=${3:-build/release/opscope}
python=/usr/bin/python3
if ! "$python" -c 'import torch, torchvision' 2>/dev/null; then
  echo "resnet50_vs_torch: needs Debian's python3-torch and python3-torchvision" \
       "(scripts/install-deps --bench installs them)" >&2
  exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for mode in train infer; do
  "$opscope" bench resnet50 --mode "$mode" --batch 8 --threads "$threads" --warmup 3 \
    --iters "$iters" --format json > "$tmp/ours-$mode.json"
done
"$python" bench/resnet50_torch.py --batch 8 --threads "$threads" --warmup 3 --iters "$iters" \
  > "$tmp/torch.json"
"$python" - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
torch = json.load(open(f"{tmp}/torch.json"))
ours = {m: next(r for r in json.load(open(f"{tmp}/ours-{m}.json"))["results"]
                if r["section"] == "resnet50") for m in ("train", "infer")}
print(f"ResNet-50 batch 8, fp32, {torch['threads']} threads, same machine, one run each "
      f"(medians of the measured iterations)")
print(f"  parameters: opscope {ours['train']['parameters']:,}, torch {torch['parameters']:,}")
t, o = torch["train_step_ms"], ours["train"]["iteration_ms"]
print(f"  training step: opscope {o:8.1f} ms  (forward {ours['train']['forward_ms']:.1f}, "
      f"backward {ours['train']['backward_ms']:.1f}, optimizer {ours['train']['optimizer_ms']:.1f})")
print(f"                 torch   {t:8.1f} ms  (torch {torch['torch']})")
print(f"  ratio opscope / torch, training: {o / t:.2f} (goal <= 0.80): "
      f"{'met' if o / t <= 0.8 else 'NOT MET'}")
ti, oi = torch["infer_ms"], ours["infer"]["iteration_ms"]
print(f"  inference:     opscope {oi:8.1f} ms, torch {ti:8.1f} ms, ratio {oi / ti:.2f}")
PY
