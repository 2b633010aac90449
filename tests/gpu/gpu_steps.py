# SPDX-License-Identifier: MIT
"""gpu_steps: what the GPU tests written in Python share (torch_check,
torch_broad, torch_models, py_frameworks; installed beside them, so a
script finds it in its own folder): a step whose result, or error, is
printed while the rest go on, rounding, and the verdict line."""
import sys

failed = []


def step(name, fn, then=None, skip_missing=False):
    """Print "name: result" of fn(), or "name: ERROR ..." and count it
    failed.  then() runs after fn() inside the same check (a synchronize:
    an asynchronous error is the step's).  skip_missing: an ImportError
    is "SKIP name: MODULE not installed", the same natively and through
    xgpu."""
    try:
        r = fn()
        if then:
            then()
        print(f"{name}: {r}", flush=True)
    except ImportError as e:
        if not skip_missing:
            print(f"{name}: ERROR ImportError: {str(e)[:160]}", flush=True)
            failed.append(name)
        else:
            print(f"SKIP {name}: {e.name} not installed", flush=True)
    except Exception as e:  # noqa: BLE001 (any failure is the answer)
        print(f"{name}: ERROR {type(e).__name__}: {str(e)[:160]}",
              flush=True)
        failed.append(name)


def r3(x):
    return round(float(x), 3)


def verdict(prog, bad=None):
    """ "PASS prog", or "FAIL prog: the failed steps" and exit 1; bad:
    the failed parts, when not the steps of this process"""
    bad = failed if bad is None else bad
    if bad:
        print(f"FAIL {prog}: {', '.join(bad)}", flush=True)
        sys.exit(1)
    print(f"PASS {prog}", flush=True)
