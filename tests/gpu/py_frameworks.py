#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""py_frameworks: the GPU frameworks besides PyTorch that a user's
program may reach the driver through, for comparison of a native run
with one through xgpu (outputs must be equal): CuPy (element-wise and
reduction kernels, cuBLAS, cuFFT, cuSOLVER, cuRAND, sorting, a kernel
compiled at run time by NVRTC, streams, pinned memory, a CUDA graph
captured from a stream), JAX (XLA: jit, grad, vmap, scan, a cuDNN
convolution), Numba (kernels it compiles through NVVM, shared memory and
atomics) and Triton (a kernel it compiles, launched on PyTorch tensors).
Each framework runs in a process of its own (a crash loses only its
part); one missing here prints SKIP for it, natively and through xgpu
alike.  Values rounded; prints PASS py_frameworks last when every step
of every framework present ran."""
import os
import subprocess
import sys

# JAX takes 75% of the GPU's memory at its start by default; a share is
# enough here, and leaves room for the harness's other programs
os.environ.setdefault("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.2")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from gpu_steps import failed, r3, step, verdict  # noqa: E402


def part_cupy():
    import cupy as cp
    import numpy as np

    def elementwise():
        a = cp.arange(1 << 20, dtype=cp.float32)
        return r3((a * 2 + 1).sum() / 1e6)

    def custom_kernels():
        k = cp.ElementwiseKernel("float32 x, float32 y", "float32 z",
                                 "z = x * y + 1.0f", "xgpu_fma")
        red = cp.ReductionKernel("float32 x", "float32 y", "x * x",
                                 "a + b", "y = a", "0", "xgpu_sumsq")
        a = cp.linspace(0, 1, 4096, dtype=cp.float32)
        return (r3(k(a, a).sum()), r3(red(a)))

    def blas_rand():
        cp.random.seed(7)
        x = cp.random.rand(256, 256, dtype=cp.float32)
        return r3((x @ x).sum() / 1e3)

    def fft():
        x = cp.cos(cp.arange(4096, dtype=cp.float64) * 0.01)
        f = cp.fft.rfft(x)
        return (r3(cp.abs(f).max()), r3(cp.fft.irfft(f)[:8].sum()))

    def solver():
        rng = np.random.default_rng(3)
        a = rng.random((64, 64)) + np.eye(64) * 64
        b = rng.random(64)
        x = cp.linalg.solve(cp.asarray(a), cp.asarray(b))
        q, r = cp.linalg.qr(cp.asarray(a))
        return (r3(x.sum()), r3(cp.abs(cp.diag(r)).sum()))

    def sort():
        rng = np.random.default_rng(5)
        v = cp.asarray(rng.integers(0, 1 << 30, 1 << 20))
        s = cp.sort(v)
        return (bool((s[1:] >= s[:-1]).all()), int(s[0]), int(s[-1]),
                int(cp.argsort(v)[0]))

    def raw_kernel():
        src = r'''
        extern "C" __global__ void sq(const float *x, float *y, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) y[i] = x[i] * x[i];
        }'''
        k = cp.RawKernel(src, "sq")
        x = cp.arange(1000, dtype=cp.float32)
        y = cp.empty_like(x)
        k((4,), (256,), (x, y, cp.int32(1000)))
        return r3(y.sum() / 1e6)

    def streams_pinned():
        s = cp.cuda.Stream(non_blocking=True)
        n = 1 << 20
        mem = cp.cuda.alloc_pinned_memory(n * 4)
        h = np.frombuffer(mem, np.float32, n)
        h[:] = np.arange(n, dtype=np.float32)
        with s:
            d = cp.empty(n, cp.float32)
            d.set(h, stream=s)
            d *= 3
            d.get(stream=s, out=h)
        s.synchronize()
        e = cp.cuda.Event()
        e.record(s)
        e.synchronize()
        return r3(h[:1000].sum())

    def graph():
        s = cp.cuda.Stream(non_blocking=True)
        a = cp.ones(1 << 16, cp.float32)
        with s:
            a += 0  # warm the kernel up before the capture
            s.begin_capture()
            for _ in range(3):
                a *= 2
                a += 1
            g = s.end_capture()
            g.launch(s)
            g.launch(s)
        s.synchronize()
        return r3(a[:4].sum())

    def memory():
        pool = cp.get_default_memory_pool()
        x = cp.zeros(8 << 20, cp.uint8)
        used = pool.used_bytes() >= 8 << 20
        free, total = cp.cuda.runtime.memGetInfo()
        del x
        return (used, total > 0, free <= total)

    for name, fn in [("elementwise", elementwise),
                     ("custom_kernels", custom_kernels),
                     ("blas_rand", blas_rand), ("fft", fft),
                     ("solver", solver), ("sort", sort),
                     ("raw_kernel", raw_kernel),
                     ("streams_pinned", streams_pinned),
                     ("graph", graph), ("memory", memory)]:
        step("cupy " + name, fn)


def part_jax():
    import jax
    import jax.numpy as jnp
    from jax import lax

    key = jax.random.PRNGKey(0)
    a = jax.random.normal(key, (256, 256), dtype=jnp.float32)

    def device():
        return jax.devices()[0].platform

    def jit_matmul():
        f = jax.jit(lambda x: jnp.tanh(x @ x.T).sum())
        return r3(f(a))

    def grad():
        w = jax.random.normal(jax.random.PRNGKey(1), (256, 16))

        def loss(w):
            return jnp.mean(jnp.tanh(a @ w) ** 2)
        return r3(jnp.abs(jax.grad(loss)(w)).sum())

    def vmap_scan():
        v = jax.vmap(lambda r: jnp.dot(r, r))(a)
        c, ys = lax.scan(lambda c, x: (c + x, c), 0.0, v)
        return (r3(c), r3(ys[-1]))

    def conv():
        x = jax.random.normal(jax.random.PRNGKey(2), (2, 3, 32, 32))
        k = jax.random.normal(jax.random.PRNGKey(3), (8, 3, 3, 3))
        y = lax.conv_general_dilated(x, k, (1, 1), "SAME")
        return (tuple(y.shape), r3(jnp.abs(y).sum() / 1e3))

    for name, fn in [("device", device), ("jit_matmul", jit_matmul),
                     ("grad", grad), ("vmap_scan", vmap_scan),
                     ("conv", conv)]:
        step("jax " + name, fn)


def part_numba():
    import numpy as np
    # the Numba of some installations still calls np.row_stack, which
    # NumPy 2.4 removed (native runs failed there with AttributeError)
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack
    from numba import cuda

    @cuda.jit
    def add(x, y, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = x[i] + y[i]

    @cuda.jit
    def block_sum(x, out):
        s = cuda.shared.array(256, dtype=np.float32)
        i = cuda.grid(1)
        t = cuda.threadIdx.x
        s[t] = x[i] if i < x.size else 0.0
        cuda.syncthreads()
        step = 128
        while step > 0:
            if t < step:
                s[t] += s[t + step]
            cuda.syncthreads()
            step //= 2
        if t == 0:
            cuda.atomic.add(out, 0, s[0])

    def kernel():
        n = 100000
        x = cuda.to_device(np.arange(n, dtype=np.float32))
        y = cuda.to_device(np.ones(n, dtype=np.float32))
        out = cuda.device_array(n, dtype=np.float32)
        add[(n + 255) // 256, 256](x, y, out)
        return r3(out.copy_to_host().sum() / 1e6)

    def shared_atomic():
        n = 1 << 16
        x = cuda.to_device(np.full(n, 0.5, dtype=np.float32))
        out = cuda.to_device(np.zeros(1, dtype=np.float32))
        block_sum[n // 256, 256](x, out)
        cuda.synchronize()
        return r3(out.copy_to_host()[0])

    def device():
        d = cuda.get_current_device()
        return (d.compute_capability, cuda.is_available())

    for name, fn in [("device", device), ("kernel", kernel),
                     ("shared_atomic", shared_atomic)]:
        step("numba " + name, fn)


def part_triton():
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out + offs, tl.load(x + offs, mask=m) +
                 tl.load(y + offs, mask=m), mask=m)

    @triton.jit
    def softmax_kernel(x, out, ncols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        m = offs < ncols
        v = tl.load(x + row * ncols + offs, mask=m, other=-float("inf"))
        v = v - tl.max(v, axis=0)
        e = tl.exp(v)
        tl.store(out + row * ncols + offs, e / tl.sum(e, axis=0), mask=m)

    def add():
        n = 98432
        x = torch.arange(n, device="cuda", dtype=torch.float32)
        y = torch.ones(n, device="cuda")
        out = torch.empty_like(x)
        add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
        return r3(out.sum().item() / 1e6)

    def softmax():
        torch.manual_seed(0)
        x = torch.randn(64, 200, device="cuda")
        out = torch.empty_like(x)
        softmax_kernel[(64,)](x, out, 200, BLOCK=256)
        ref = torch.softmax(x, dim=1)
        return (bool(torch.allclose(out, ref, atol=1e-5)),
                r3(out[0, :5].sum().item()))

    for name, fn in [("add", add), ("softmax", softmax)]:
        step("triton " + name, fn)


PARTS = {"cupy": ("cupy", part_cupy), "jax": ("jax", part_jax),
         "numba": ("numba.cuda", part_numba),
         "triton": ("triton", part_triton)}


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--part":
        PARTS[sys.argv[2]][1]()
        sys.exit(1 if failed else 0)
    bad = []
    for name, (module, _) in PARTS.items():
        probe = subprocess.run([sys.executable, "-c", f"import {module}"],
                               capture_output=True)
        if probe.returncode:
            print(f"SKIP {name}: not installed for {sys.executable}",
                  flush=True)
            continue
        r = subprocess.run([sys.executable, __file__, "--part", name],
                           stdout=subprocess.PIPE, text=True, timeout=600)
        sys.stdout.write(r.stdout)
        sys.stdout.flush()
        if r.returncode:
            bad.append(name)
            print(f"{name}: exit status {r.returncode}", flush=True)
    verdict("py_frameworks", bad)


if __name__ == "__main__":
    main()
