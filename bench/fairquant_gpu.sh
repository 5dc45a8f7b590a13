#!/usr/bin/env bash
# FairQuant bench on a GPU machine (issue 33), ~7 minutes: Table II's 29 networks with the engine's decided
# refinement (--method decided) on the GPU and on the CPU with 16 threads, each network for the same few seconds,
# then a partition budget run on both devices with the same batch: the same partitions, whose counts should agree
# (they can differ where a bound lies within float rounding of a margin or of a counting bin edge; both are sound).
# The counting inside partitions runs in numpy on the host on either device. Writes JSON and markdown to $OUT.
#
#   OUT=/some/dir bash bench/fairquant_gpu.sh          (from the repository root; needs torch with CUDA, numpy,
#                                                       pandas, pyarrow; no other wheel: fairaudit is imported from
#                                                       the checkout, the networks from $MODELS)
set -euo pipefail
OUT=${OUT:?set OUT to the folder the results go to}
MODELS=${MODELS:-/work/shared/benchmarks/fairquant/models}
SECONDS_EACH=${SECONDS_EACH:-5}
PY=${PY:-python}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > "$OUT/gpu.txt" || true
B=(bench/fairquant.py --models "$MODELS" --method decided --time-limit "$SECONDS_EACH")
# 1. the same seconds per network on each device (29 × 5 s × 2 ≈ 5 min)
$PY "${B[@]}" --device cuda --json "$OUT/decided_cuda.json" | tee "$OUT/decided_cuda.txt"
OMP_NUM_THREADS=16 $PY "${B[@]}" --device cpu --threads 16 --json "$OUT/decided_cpu16.json" | tee "$OUT/decided_cpu16.txt"
$PY bench/fairquant.py --compare "$OUT/decided_cuda.json" "$OUT/decided_cpu16.json" > "$OUT/decided_cuda_vs_cpu16.md"
# 2. the same partitions on each device (same batch): the counts should agree
S=(bench/fairquant.py --models "$MODELS" --method decided --time-limit 60 --max-partitions 300000 --batch 16384
   --only GC-1 AC-3 AC-5 compas-3)
$PY "${S[@]}" --device cuda --json "$OUT/same_cuda.json" | tee "$OUT/same_cuda.txt"
OMP_NUM_THREADS=16 $PY "${S[@]}" --device cpu --threads 16 --json "$OUT/same_cpu16.json" | tee "$OUT/same_cpu16.txt"
$PY bench/fairquant.py --compare "$OUT/same_cuda.json" "$OUT/same_cpu16.json" > "$OUT/same_cuda_vs_cpu16.md"
cat "$OUT/decided_cuda_vs_cpu16.md" "$OUT/same_cuda_vs_cpu16.md"
