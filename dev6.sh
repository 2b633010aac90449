#!/bin/bash
set -u
O=$OUT; mkdir -p $O
XGPU_PROG_TIMEOUT=150 timeout 280 tests/gpu/run-gpu-tests.sh --xgpu-lib build/lib --backend build/bin/xen-gpubackd --bin gpubin/gpu --out $O/g torch_check capmark graphs graphupd graphnodes cappage streams memops_mt memops hostfn managed cublas_sgemm thrust_sort libs broad2 broad2_ptds mempool vmm greenctx printf_dev > $O/gpu.txt 2>&1
echo "rc=$?" >> $O/gpu.txt
grep -E "^(PASS|FAIL|SKIP)|passed|rc=" $O/gpu.txt
cd $O && tar czf g.tgz g && rm -rf g
