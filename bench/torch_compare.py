#!/usr/bin/env python3
"""Times the same attention algorithms in PyTorch and in Attention Lab, in one run.

Not run by CI. Needs Debian's python3-torch (with libopenblas0-pthread, so that PyTorch's
matrix products use OpenBLAS and not the reference BLAS) and a built Attention Lab:

    apt-get install python3-torch libopenblas0-pthread
    /usr/bin/python3 bench/torch_compare.py --app build/app/attention-lab

Float32, d = d_v = 64, m = 256, the same number of threads for both (default 2). Each timing
is the median of --reps runs after one warm-up run. The PyTorch versions are the algorithms
Attention Lab runs, written the way a PyTorch user would write them:

- favor-positive: Performer's FAVOR+ positive features (stabilised exponentials, orthogonal W),
  then phi(Q) (phi(K)^T V) / phi(Q) (phi(K)^T 1);
- causal elu+1, chunked: the chunked matrix-product form (a masked chunk x chunk block inside
  each chunk, prefix sums of the chunk states between chunks), fully batched, no Python loop;
- causal elu+1, cumsum: S_i = cumsum_j phi(k_j) v_j^T as an L x C x d_v tensor, the usual CPU
  fallback of linear-attention code;
- causal FAVOR+ (positive), chunked, as elu+1.
"""

import argparse
import csv
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch

CHUNK = 48


def median_seconds(function, reps):
    function()  # warm-up
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def orthogonal_projection(m, d, generator):
    blocks = []
    for _ in range(math.ceil(m / d)):
        q, r = torch.linalg.qr(torch.randn(d, d, generator=generator))
        q = q * torch.sign(torch.diagonal(r))
        blocks.append(q.T)
    w = torch.cat(blocks)[:m]
    norms = torch.randn(m, d, generator=generator).norm(dim=1, keepdim=True)
    return w * norms


def favor_features(x, w_scaled, is_query):
    """m^-1/2 exp(W x' - |x'|^2 / 2), stabilised: per row for queries, globally for keys."""
    u = x @ w_scaled.T
    half_norm = 0.5 * (x * x).sum(dim=-1, keepdim=True) * SCALE
    if is_query:
        shift = u.max(dim=-1, keepdim=True).values
    else:
        shift = u.max()
    return torch.exp(u - half_norm - shift) / math.sqrt(w_scaled.shape[0])


def favor_noncausal(q, k, v, w_scaled):
    phi_q = favor_features(q, w_scaled, True)
    phi_k = favor_features(k, w_scaled, False)
    kv = phi_k.T @ v
    z = phi_k.sum(dim=0)
    return (phi_q @ kv) / (phi_q @ z).unsqueeze(-1)


def elu_features(x):
    return torch.nn.functional.elu(x) + 1


def chunked_causal(phi_q, phi_k, v):
    """o_i = phi(q_i)^T S_i / phi(q_i)^T z_i by chunks, all chunks at once (batched)."""
    length, features = phi_q.shape
    pad = (-length) % CHUNK
    if pad:
        phi_q = torch.nn.functional.pad(phi_q, (0, 0, 0, pad))
        phi_k = torch.nn.functional.pad(phi_k, (0, 0, 0, pad))
        v = torch.nn.functional.pad(v, (0, 0, 0, pad))
    chunks = phi_q.shape[0] // CHUNK
    fq = phi_q.view(chunks, CHUNK, features)
    fk = phi_k.view(chunks, CHUNK, features)
    vv = v.view(chunks, CHUNK, -1)
    v1 = torch.cat([vv, torch.ones(chunks, CHUNK, 1)], dim=-1)  # values and the normaliser
    inner = torch.tril(fq @ fk.transpose(1, 2))
    own = fk.transpose(1, 2) @ v1  # each chunk's own key sums
    before = torch.cumsum(own, dim=0) - own  # the state before each chunk
    out = inner @ v1 + fq @ before
    out = out.view(-1, out.shape[-1])[:length]
    return out[:, :-1] / out[:, -1:]


def cumsum_causal(phi_q, phi_k, v):
    s = torch.cumsum(phi_k.unsqueeze(-1) * v.unsqueeze(-2), dim=0)  # L x C x d_v
    z = torch.cumsum(phi_k, dim=0)
    numerator = torch.einsum("lc,lcv->lv", phi_q, s)
    return numerator / (phi_q * z).sum(dim=-1, keepdim=True)


def attention_lab(app, method, length, threads, reps, d, m):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "sweep.csv")
        subprocess.run(
            [app, "bench", "--methods", method, "--lengths", str(length), "--d", str(d),
             "--features", str(m), "--threads", str(threads), "--reps", str(reps),
             "--out", path],
            check=True, capture_output=True)
        with open(path) as file:
            lines = [line for line in file if not line.startswith("#")]
    return float(next(csv.DictReader(lines))["seconds_median"])


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--app", default="build/app/attention-lab")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--length", type=int, default=16384)
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    d, m, length = 64, 256, args.length
    global SCALE
    SCALE = 1 / math.sqrt(d)
    generator = torch.Generator().manual_seed(0)
    q = torch.randn(length, d, generator=generator) * d ** 0.25 / math.sqrt(d)
    k = torch.randn(length, d, generator=generator) * d ** 0.25 / math.sqrt(d)
    v = torch.randn(length, d, generator=generator) / math.sqrt(d)
    w_scaled = orthogonal_projection(m, d, generator) * math.sqrt(SCALE)

    n = 2048
    a, b = torch.randn(n, n), torch.randn(n, n)
    sgemm = 2 * n ** 3 / median_seconds(lambda: a @ b, args.reps) / 1e9
    print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"sgemm {sgemm:.0f} GFLOP/s; L = {length}, d = {d}, m = {m}, float32")

    with torch.no_grad():
        cases = [
            ("FAVOR+ positive", "favor-positive",
             lambda: favor_noncausal(q, k, v, w_scaled)),
            ("FAVOR+ positive, causal, chunked", "favor-positive:causal",
             lambda: chunked_causal(favor_features(q, w_scaled, True),
                                    favor_features(k, w_scaled, False), v)),
            ("elu+1, causal, chunked", "elu:causal",
             lambda: chunked_causal(elu_features(q), elu_features(k), v)),
            ("elu+1, causal, cumsum", "elu:causal",
             lambda: cumsum_causal(elu_features(q), elu_features(k), v)),
        ]
        print(f"{'algorithm':36} {'PyTorch':>10} {'Attention Lab':>14} {'speed-up':>9}")
        for name, method, function in cases:
            torch_seconds = median_seconds(function, args.reps)
            lab_seconds = attention_lab(args.app, method, length, args.threads, args.reps, d, m)
            print(f"{name:36} {torch_seconds * 1e3:8.2f} ms {lab_seconds * 1e3:11.2f} ms "
                  f"{torch_seconds / lab_seconds:8.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
