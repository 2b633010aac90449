#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""torch_check: PyTorch on the GPU as a user runs it, for comparison of a
native run with one through xgpu (outputs must be equal).  Matmul in fp32,
fp16 and bf16, a transposed GEMM and a Linear's backward first thing in
the process (cuBLASLt loads its kernels then), conv2d, FFT, sort, training
loops of an MLP and of a transformer block with AdamW, a DataLoader with
worker processes and pinned memory, a CUDA graph captured and replayed,
the expandable-segments and cudaMallocAsync allocators (the driver's
virtual memory API, stream-ordered allocation), an fp8 GEMM, a tensor
shared with a spawned process (CUDA IPC), and torch.compile (Triton; skipped with XGPU_TORCH_COMPILE=0).  Deterministic algorithms only, values
rounded; prints PASS torch_check last when every step ran."""
import os
import sys

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402

import gpu_steps  # noqa: E402


def step(name, fn):
    # a step's failure is reported, the rest go on; its asynchronous
    # errors are its own
    gpu_steps.step(name, fn, then=lambda: torch.cuda.synchronize())


def r4(t):
    return round(float(t), 4)


def matmuls():
    g = torch.Generator(device="cuda").manual_seed(1)
    a = torch.randn(512, 512, device="cuda", generator=g)
    out = []
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        x = a.to(dt)
        out.append(r4((x @ x).float().abs().mean()))
    return out


def first_gemms():
    # must run before any other GEMM: x @ x.t() and a Linear's backward
    # are where cuBLASLt first loads kernel libraries of its own
    g = torch.Generator(device="cuda").manual_seed(9)
    x = torch.randn(64, 128, device="cuda", generator=g)
    t = r4((x @ x.t()).abs().mean())
    torch.manual_seed(9)
    lin = torch.nn.Linear(128, 64).cuda()
    lin(x).sum().backward()
    return [t, r4(lin.weight.grad.abs().mean())]


def conv():
    g = torch.Generator(device="cuda").manual_seed(2)
    x = torch.randn(4, 3, 64, 64, device="cuda", generator=g)
    w = torch.randn(16, 3, 3, 3, device="cuda", generator=g)
    return r4(torch.nn.functional.conv2d(x, w, padding=1).abs().mean())


def fft():
    g = torch.Generator(device="cuda").manual_seed(3)
    x = torch.randn(8, 4096, device="cuda", generator=g)
    return [r4(torch.fft.fft(x).abs().mean()),
            r4(torch.fft.irfft(torch.fft.rfft(x), n=4096).sub(x).abs().max())]


def sort():
    g = torch.Generator(device="cuda").manual_seed(4)
    x = torch.randn(1 << 20, device="cuda", generator=g)
    s, i = torch.sort(x)
    return [r4(s[0]), r4(s[-1]), int(i[0])]


def train(model, make_batch, steps=20):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(steps):
        x, y = make_batch()
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return [r4(losses[0]), r4(losses[-1])]


def mlp():
    torch.manual_seed(5)
    m = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                            torch.nn.Linear(512, 256)).cuda()
    g = torch.Generator(device="cuda").manual_seed(6)
    x = torch.randn(128, 256, device="cuda", generator=g)
    return train(m, lambda: (x, x.flip(1)))


def transformer():
    torch.manual_seed(7)
    m = torch.nn.TransformerEncoderLayer(d_model=128, nhead=4,
                                         dim_feedforward=256, dropout=0.0,
                                         batch_first=True).cuda()
    g = torch.Generator(device="cuda").manual_seed(8)
    x = torch.randn(8, 64, 128, device="cuda", generator=g)
    return train(m, lambda: (x, x.flip(2)), steps=10)


def cuda_graph():
    # capture a small step once, replay it with new inputs
    g = torch.Generator(device="cuda").manual_seed(10)
    w = torch.randn(64, 64, device="cuda", generator=g)
    x = torch.zeros(32, 64, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):          # warm up outside the capture
            y = torch.relu(x @ w) + 1
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = torch.relu(x @ w) + 1
    out = []
    for i in range(3):
        x.copy_(torch.full((32, 64), float(i), device="cuda"))
        graph.replay()
        out.append(r4(y.mean()))
    return out


def expandable():
    # the allocator on the driver's virtual memory API: a process of its own
    # (the setting is read when CUDA starts)
    import subprocess
    code = ("import torch; g = torch.Generator(device='cuda').manual_seed(12);"
            "x = [torch.randn(1 << k, device='cuda', generator=g) "
            "for k in range(10, 24)];"
            "del x[3:7]; y = torch.randn(1 << 22, device='cuda', generator=g);"
            "print(round(float(sum(t.sum() for t in x) + y.sum()), 2))")
    env = dict(os.environ,
               PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True")
    out = subprocess.run([sys.executable, "-c", code], env=env,
                         capture_output=True, text=True, timeout=300)
    if out.returncode:
        raise RuntimeError(out.stderr.strip().splitlines()[-1])
    return out.stdout.strip()


def fp8_gemm():
    # an fp8 (e4m3) tensor-core GEMM through cuBLASLt, scaled to bf16
    g = torch.Generator(device="cuda").manual_seed(13)
    a = torch.randn(64, 128, device="cuda", generator=g)
    b = torch.randn(96, 128, device="cuda", generator=g)
    one = torch.tensor(1.0, device="cuda")
    y = torch._scaled_mm(a.to(torch.float8_e4m3fn),
                         b.to(torch.float8_e4m3fn).t(), scale_a=one,
                         scale_b=one, out_dtype=torch.bfloat16)
    return r4(y.float().abs().mean())


def _child_doubles(q_in, q_out):
    # a process of its own: gets a tensor of the parent's GPU memory (CUDA
    # IPC), doubles it in place, answers its sum
    t = q_in.get()
    t.mul_(2)
    torch.cuda.synchronize()
    q_out.put(float(t.sum()))


def multiprocessing_ipc():
    import torch.multiprocessing as mp
    ctx = mp.get_context("spawn")
    q_in, q_out = ctx.Queue(), ctx.Queue()
    t = torch.arange(1024, dtype=torch.float32, device="cuda")
    p = ctx.Process(target=_child_doubles, args=(q_in, q_out))
    p.start()
    q_in.put(t)
    child_sum = q_out.get(timeout=120)
    p.join(timeout=120)
    if p.exitcode != 0:
        raise RuntimeError(f"child exited with {p.exitcode}")
    return [child_sum, r4(t.sum())]


def malloc_async():
    # the allocator on stream-ordered allocation (cudaMallocAsync): a
    # process of its own, as for expandable segments
    import subprocess
    code = ("import torch; g = torch.Generator(device='cuda').manual_seed(14);"
            "x = [torch.randn(1 << k, device='cuda', generator=g) "
            "for k in range(10, 22)];"
            "del x[2:5]; y = torch.randn(1 << 20, device='cuda', generator=g);"
            "print(torch.cuda.get_allocator_backend(), "
            "round(float(sum(t.sum() for t in x) + y.sum()), 2))")
    env = dict(os.environ,
               PYTORCH_CUDA_ALLOC_CONF="backend:cudaMallocAsync")
    out = subprocess.run([sys.executable, "-c", code], env=env,
                         capture_output=True, text=True, timeout=300)
    if out.returncode:
        raise RuntimeError(out.stderr.strip().splitlines()[-1])
    return out.stdout.strip()


def compiled():
    f = torch.compile(lambda a: (a.sin() * 2 + a.cos()).sum())
    g = torch.Generator(device="cuda").manual_seed(11)
    return r4(f(torch.randn(4096, device="cuda", generator=g)))


class Squares(torch.utils.data.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return torch.full((1024,), float(i * i))


def loader():
    dl = torch.utils.data.DataLoader(Squares(), batch_size=8, num_workers=2,
                                     pin_memory=True)
    total = 0.0
    for b in dl:
        total += b.cuda(non_blocking=True).sum().item()
    return total


def main():
    torch.use_deterministic_algorithms(True)
    step("device", lambda: torch.cuda.get_device_name(0).split()[0])
    step("x @ x.t(), Linear backward", first_gemms)
    step("matmul fp32 fp16 bf16", matmuls)
    step("conv2d", conv)
    step("fft", fft)
    step("sort", sort)
    step("mlp AdamW loss first last", mlp)
    step("transformer block AdamW loss first last", transformer)
    step("dataloader workers pin_memory", loader)
    step("cuda graph capture, replay x3", cuda_graph)
    step("expandable_segments allocator", expandable)
    step("cudaMallocAsync allocator", malloc_async)
    step("fp8 e4m3 GEMM (cuBLASLt)", fp8_gemm)
    step("multiprocessing CUDA IPC, child doubles", multiprocessing_ipc)
    if os.environ.get("XGPU_TORCH_COMPILE", "1") != "0":
        step("torch.compile (Triton)", compiled)
    gpu_steps.verdict("torch_check")


# a spawned child (multiprocessing_ipc) imports this file: only the
# program itself runs the steps
if __name__ == "__main__":
    main()
