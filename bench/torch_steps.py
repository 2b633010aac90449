#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""torch_steps: PyTorch training steps per second, for run-bench.sh.

Two models, each trained with AdamW on fixed synthetic data:
  mlp          a small 3-layer MLP, batch 64: each step is dozens of tiny
               kernels, so the rate is bound by launches (the driver path)
  transformer  a transformer encoder block (d_model 1024, 16 heads,
               feed-forward 4096, batch 64 x 512 tokens, bf16 autocast):
               bound by the GPU's tensor cores (with a batch of 16 a
               step's GPU time on an H200 was about what Python spends
               issuing its few hundred operations, so the rate followed
               the host CPU and varied by a third between runs)

Each warms up (allocator, cuBLAS, kernels loaded), then runs timed steps
for about SECONDS (default 5, env XGPU_TORCH_STEPS_SECONDS) and prints
  TORCH <model> steps_per_s <value>
On a machine without PyTorch it prints "SKIP torch_steps: ..." and exits 0.
"""
import os
import sys
import time

try:
    import torch
except ImportError:
    print("SKIP torch_steps: no PyTorch for python3 here")
    sys.exit(0)

SECONDS = float(os.environ.get("XGPU_TORCH_STEPS_SECONDS", "5"))


def rate(step, warmup=20):
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    n = 0
    t0 = time.perf_counter()
    while True:
        for _ in range(10):
            step()
        n += 10
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        if dt >= SECONDS:
            return n / dt


def trainer(model, x, y, autocast=False):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            loss = torch.nn.functional.mse_loss(model(x).float(), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return step


def mlp():
    torch.manual_seed(1)
    m = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(),
                            torch.nn.Linear(256, 256), torch.nn.ReLU(),
                            torch.nn.Linear(256, 256)).cuda()
    x = torch.randn(64, 256, device="cuda")
    return trainer(m, x, x.flip(1))


def transformer():
    torch.manual_seed(2)
    m = torch.nn.TransformerEncoderLayer(d_model=1024, nhead=16,
                                         dim_feedforward=4096, dropout=0.0,
                                         batch_first=True).cuda()
    x = torch.randn(64, 512, 1024, device="cuda")
    return trainer(m, x, x.flip(2), autocast=True)


for name, make in (("mlp", mlp), ("transformer", transformer)):
    print(f"TORCH {name} steps_per_s {rate(make()):.2f}", flush=True)
