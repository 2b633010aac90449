#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""torch_models: whole models trained the way users train them, for
comparison of a native run with one through xgpu (outputs must be
equal): a torchvision ResNet-18 in channels-last with bfloat16 autocast,
a Hugging Face GPT-2 (small, built from a config: nothing downloaded)
with AdamW, a DataLoader with pinned memory and worker processes,
torch.compile's "reduce-overhead" mode (Inductor's kernels replayed as
CUDA graphs) and a CUDA graph captured by hand and replayed.  Seeds
fixed, deterministic algorithms asked for, losses rounded; a library
missing here prints SKIP for its step, natively and through xgpu alike.
Prints PASS torch_models last when every step ran."""
import os

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402

import gpu_steps  # noqa: E402
from gpu_steps import r3  # noqa: E402


def seed():
    torch.manual_seed(0)
    torch.cuda.manual_seed_all(0)


def resnet():
    import torchvision

    seed()
    m = torchvision.models.resnet18(num_classes=10).cuda()
    m = m.to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(16, 3, 64, 64, device="cuda").to(
        memory_format=torch.channels_last)
    y = torch.randint(0, 10, (16,), device="cuda")
    losses = []
    for _ in range(3):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(m(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(round(loss.item(), 2))
    return losses


def gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    seed()
    cfg = GPT2Config(vocab_size=1000, n_positions=128, n_embd=128,
                     n_layer=2, n_head=4)
    m = GPT2LMHeadModel(cfg).cuda()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
    ids = torch.randint(0, 1000, (4, 64), device="cuda")
    losses = []
    for _ in range(3):
        out = m(input_ids=ids, labels=ids)
        opt.zero_grad()
        out.loss.backward()
        opt.step()
        losses.append(round(out.loss.item(), 2))
    return losses


class Squares(torch.utils.data.Dataset):
    def __len__(self):
        return 256

    def __getitem__(self, i):
        x = torch.full((32,), float(i % 17) / 17)
        return x, x.pow(2).sum()


def loader():
    seed()
    m = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(),
                            torch.nn.Linear(64, 1)).cuda()
    opt = torch.optim.SGD(m.parameters(), lr=0.01)
    dl = torch.utils.data.DataLoader(Squares(), batch_size=32,
                                     num_workers=2, pin_memory=True)
    total = 0.0
    for x, y in dl:
        x = x.cuda(non_blocking=True)
        y = y.cuda(non_blocking=True)
        loss = torch.nn.functional.mse_loss(m(x).squeeze(1), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    return round(total, 2)


def compiled():
    seed()
    m = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(),
                            torch.nn.Linear(512, 256)).cuda()
    f = torch.compile(m, mode="reduce-overhead")
    x = torch.randn(64, 256, device="cuda")
    outs = []
    with torch.no_grad():
        for i in range(6):
            outs.append(r3(f(x * (i + 1)).abs().sum() / 1e3))
    return outs


def graph():
    seed()
    m = torch.nn.Linear(128, 128).cuda()
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    x = torch.randn(32, 128, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):      # warm-up before the capture
            opt.zero_grad(set_to_none=True)
            m(x).pow(2).mean().backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g):
        loss = m(x).pow(2).mean()
        loss.backward()
        opt.step()
    vals = []
    for _ in range(4):
        g.replay()
        vals.append(r3(loss.item()))
    return vals


def main():
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.benchmark = False
    for name, fn in [("resnet18_bf16_channels_last", resnet),
                     ("gpt2_adamw", gpt2), ("dataloader_pinned", loader),
                     ("compile_reduce_overhead", compiled),
                     ("cuda_graph_train_step", graph)]:
        gpu_steps.step(name, fn, skip_missing=True)
    gpu_steps.verdict("torch_models")


if __name__ == "__main__":
    main()
