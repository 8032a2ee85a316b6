#!/usr/bin/env bash
# Makes resources/models/kjv-llama as committed, in one command: train.py's two phases (copying
# drills with layer 0, head 0 guided to the previous token, then KJV text; about 25 minutes on one
# core), then analyse_heads.py's scores beside the KJV GPT-2's. Writes the loss curves beside this
# script. Needs Debian's bible-kjv, python3-torch, python3-regex and libopenblas0-pthread.
#   nice -n 10 training/kjv_llama/train.sh [OUT]    (OUT defaults to resources/models/kjv-llama)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$root/resources/models/kjv-llama}
phase1=$(mktemp -d)
trap 'rm -rf "$phase1"' EXIT
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
/usr/bin/python3 "$here/train.py" --out "$phase1" --layers 2 --copy-form tile --copy-periods 8 48 \
    --copy-steps 1000 --guide-steps 1000 --steps 0 --loss-csv "$here/loss.csv"
/usr/bin/python3 "$here/train.py" --out "$out" --init "$phase1" --layers 2 --copy-steps 0 \
    --steps 3000 --loss-csv "$here/loss_phase2.csv"
/usr/bin/python3 "$here/analyse_heads.py" "$out" --gpt2 "$root/resources/models/kjv-gpt2"
