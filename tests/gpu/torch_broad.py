#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""torch_broad: the parts of PyTorch that torch_check leaves out, each
through the library a user's program reaches it by, for comparison of a
native run with one through xgpu (outputs must be equal): cuSOLVER
(Cholesky, LU solve, QR, SVD, symmetric eigenvalues, inverse, least
squares), cuSPARSE (COO and CSR times dense), the three scaled-dot-product
attention kernels (flash, memory-efficient, math), automatic mixed
precision with a gradient scaler, cuDNN's recurrent layers (LSTM, GRU)
and its 3D convolution, transposed convolution and batch norm in
training, cuDNN's autotuner (benchmark mode), CTC loss, random sampling
(multinomial, randperm, bernoulli), operations that synchronise on a
size found on the GPU (nonzero, unique, masked_select), scatter and
index operations, streams with priorities and events, pinned memory
copied both ways without blocking, the device's properties and memory
figures as the program sees them, and a kernel compiled at run time by
the jiterator (NVRTC).  Values rounded; prints PASS torch_broad last
when every step ran."""
import os

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402

import gpu_steps  # noqa: E402
from gpu_steps import r3, step  # noqa: E402,F401


def gen(seed):
    return torch.Generator(device="cuda").manual_seed(seed)


def spd(n, seed):
    a = torch.randn(n, n, device="cuda", dtype=torch.float64,
                    generator=gen(seed))
    return a @ a.t() + n * torch.eye(n, device="cuda", dtype=torch.float64)


def linalg():
    a = spd(64, 1)
    b = torch.randn(64, 3, device="cuda", dtype=torch.float64,
                    generator=gen(2))
    lo = torch.linalg.cholesky(a)
    x = torch.linalg.solve(a, b)
    q, r = torch.linalg.qr(a)
    s = torch.linalg.svdvals(a)
    w = torch.linalg.eigvalsh(a)
    inv = torch.linalg.inv(a)
    ls = torch.linalg.lstsq(a[:, :32], b).solution
    return [r3(lo.diagonal().sum()), r3((a @ x - b).abs().max() * 1e9),
            r3((q @ r - a).abs().max() * 1e9), r3(s[0]), r3(s[-1]),
            r3(w[0]), r3(w[-1]), r3((inv @ a).diagonal().sum()),
            r3(ls.abs().sum())]


def sparse():
    g = gen(3)
    d = torch.randn(256, 256, device="cuda", generator=g)
    d = d * (torch.rand(256, 256, device="cuda", generator=g) < 0.05)
    x = torch.randn(256, 16, device="cuda", generator=g)
    coo = d.to_sparse()
    csr = d.to_sparse_csr()
    return [int(coo._nnz()), r3(torch.sparse.mm(coo, x).abs().sum()),
            r3((csr @ x).abs().sum()), r3((d @ x).abs().sum())]


def attention():
    from torch.nn.attention import SDPBackend, sdpa_kernel
    g = gen(4)
    q, k, v = (torch.randn(2, 4, 128, 64, device="cuda", dtype=torch.float16,
                           generator=g) for _ in range(3))
    out = []
    for be in (SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
               SDPBackend.MATH):
        with sdpa_kernel(be):
            y = torch.nn.functional.scaled_dot_product_attention(
                q, k, v, is_causal=True)
        out.append(r3(y.float().abs().mean()))
    return out


def amp():
    torch.manual_seed(5)
    m = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.GELU(),
                            torch.nn.Linear(256, 10)).cuda()
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    g = gen(6)
    x = torch.randn(64, 128, device="cuda", generator=g)
    y = torch.randint(0, 10, (64,), device="cuda", generator=g)
    losses = []
    for _ in range(10):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(m(x), y,
                                                     label_smoothing=0.1)
        opt.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    return [r3(losses[0]), r3(losses[-1]), scaler.get_scale()]


def rnn():
    torch.manual_seed(7)
    lstm = torch.nn.LSTM(32, 64, num_layers=2, batch_first=True).cuda()
    gru = torch.nn.GRU(32, 64, batch_first=True).cuda()
    x = torch.randn(4, 20, 32, device="cuda", generator=gen(8))
    y1, (h, _) = lstm(x)
    y2, _ = gru(x)
    (y1.sum() + y2.sum()).backward()
    return [r3(y1.abs().mean()), r3(h.abs().mean()), r3(y2.abs().mean()),
            r3(lstm.weight_ih_l0.grad.abs().mean() * 1e3)]


def cudnn_conv():
    torch.manual_seed(9)
    torch.backends.cudnn.benchmark = True
    try:
        c3 = torch.nn.Conv3d(2, 4, 3, padding=1).cuda()
        ct = torch.nn.ConvTranspose2d(3, 6, 4, stride=2, padding=1).cuda()
        bn = torch.nn.BatchNorm2d(6).cuda().train()
        g = gen(10)
        v = torch.randn(2, 2, 8, 16, 16, device="cuda", generator=g)
        x = torch.randn(4, 3, 16, 16, device="cuda", generator=g)
        z = bn(ct(x))
        z.square().mean().backward()
        return [r3(c3(v).abs().mean()), r3(z.abs().mean()),
                r3(bn.running_mean.abs().sum()),
                r3(ct.weight.grad.abs().mean() * 1e3)]
    finally:
        torch.backends.cudnn.benchmark = False


def ctc():
    g = gen(11)
    logp = torch.randn(30, 2, 6, device="cuda",
                       generator=g).log_softmax(2).requires_grad_()
    tgt = torch.tensor([[1, 2, 3, 2], [4, 4, 1, 5]], device="cuda")
    loss = torch.nn.functional.ctc_loss(
        logp, tgt, torch.tensor([30, 25]), torch.tensor([4, 3]))
    loss.backward()
    return [r3(loss), r3(logp.grad.abs().sum())]


def random_ops():
    g = gen(12)
    p = torch.rand(8, 50, device="cuda", generator=g)
    m = torch.multinomial(p, 5, generator=g)
    perm = torch.randperm(1000, device="cuda", generator=g)
    b = torch.bernoulli(torch.full((4096,), 0.25, device="cuda"),
                        generator=g)
    return [int(m.sum()), int(perm[:10].sum()), int(b.sum())]


def sync_sized():
    g = gen(13)
    x = torch.randint(0, 50, (100000,), device="cuda", generator=g)
    nz = torch.nonzero(x > 45)
    u, c = torch.unique(x, return_counts=True)
    ms = torch.masked_select(x, x < 3)
    return [int(nz.shape[0]), int(u.shape[0]), int(c.max()),
            int(ms.sum())]


def scatter_index():
    g = gen(14)
    idx = torch.randint(0, 100, (10000,), device="cuda", generator=g)
    ones = torch.ones(10000, device="cuda", dtype=torch.int64)
    sc = torch.zeros(100, device="cuda", dtype=torch.int64)
    sc.scatter_add_(0, idx, ones)
    ia = torch.zeros(100, device="cuda", dtype=torch.int64)
    ia.index_add_(0, idx, ones)
    x = torch.randn(1 << 16, device="cuda", generator=g)
    v, i = torch.topk(x, 5)
    return [int(sc.max()), int((sc == ia).all()), r3(v[0]), int(i[0]),
            r3(torch.cumsum(x, 0)[-1])]


def streams_events():
    lo, hi = torch.cuda.Stream(priority=0), torch.cuda.Stream(priority=-1)
    e0, e1 = (torch.cuda.Event(enable_timing=True) for _ in range(2))
    a = torch.randn(1024, 1024, device="cuda", generator=gen(15))
    e0.record()
    with torch.cuda.stream(lo):
        b = a @ a
    with torch.cuda.stream(hi):
        c = a.t() @ a
    torch.cuda.current_stream().wait_stream(lo)
    torch.cuda.current_stream().wait_stream(hi)
    e1.record()
    e1.synchronize()
    return [r3(b.trace() - c.trace()), e0.elapsed_time(e1) > 0,
            hi.priority < lo.priority]


def pinned():
    src = torch.arange(1 << 20, dtype=torch.float32).pin_memory()
    dst = torch.empty_like(src).pin_memory()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        d = src.to("cuda", non_blocking=True)
        d.mul_(3)
        dst.copy_(d, non_blocking=True)
    s.synchronize()
    return [src.is_pinned(), r3(dst.sum() / 1e12), r3(dst[-1])]


def device_facts():
    p = torch.cuda.get_device_properties(0)
    free, total = torch.cuda.mem_get_info()
    x = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")
    used = torch.cuda.memory_allocated()
    del x
    torch.cuda.empty_cache()
    return [p.major, p.minor, p.multi_processor_count,
            0 < free <= total, used >= 64 << 20,
            torch.cuda.memory_allocated() < used]


def jiterator():
    code = "template <typename T> T fma3(T x, T y) { return x * y + T(3); }"
    fn = torch.cuda.jiterator._create_jit_fn(code)
    x = torch.arange(8, device="cuda", dtype=torch.float32)
    return [r3(v) for v in fn(x, x).tolist()]


def main():
    torch.use_deterministic_algorithms(True, warn_only=True)
    step("device", lambda: torch.cuda.get_device_name(0).split()[0])
    step("cuSOLVER cholesky solve qr svd eigh inv lstsq", linalg)
    step("cuSPARSE coo csr x dense", sparse)
    step("sdpa flash efficient math", attention)
    step("autocast fp16 + GradScaler, loss first last, scale", amp)
    step("LSTM GRU forward backward", rnn)
    step("cudnn benchmark conv3d convtranspose batchnorm", cudnn_conv)
    step("ctc loss and grad", ctc)
    step("multinomial randperm bernoulli", random_ops)
    step("nonzero unique masked_select", sync_sized)
    step("scatter_add index_add topk cumsum", scatter_index)
    step("stream priorities, events", streams_events)
    step("pinned non-blocking copies both ways", pinned)
    step("device properties, memory figures", device_facts)
    step("jiterator (NVRTC)", jiterator)
    gpu_steps.verdict("torch_broad")


if __name__ == "__main__":
    main()
