"""A small real CuPy workload for `cusafe run` (see torch_workload.py)."""
import cupy as cp
import cupyx.scipy.ndimage as ndi

rs = cp.random.RandomState(0)
a = rs.standard_normal((1024, 1024), dtype=cp.float32)
b = rs.standard_normal((1024, 1024), dtype=cp.float32)
print("matmul", f"{float((a @ b).astype(cp.float64).sum()):.6e}")

img = rs.standard_normal((256, 256), dtype=cp.float32)
k = rs.standard_normal((5, 5), dtype=cp.float32)
print("conv", f"{float(ndi.convolve(img, k).astype(cp.float64).sum()):.6e}")

# 50 steps of logistic regression by hand.
x = rs.standard_normal((512, 64), dtype=cp.float32)
y = (rs.standard_normal(512) > 0).astype(cp.float32)
w = cp.zeros(64, dtype=cp.float32)
for _ in range(50):
    p = 1 / (1 + cp.exp(-(x @ w)))
    w -= 0.1 * (x.T @ (p - y)) / 512
loss = -cp.mean(y * cp.log(p + 1e-7) + (1 - y) * cp.log(1 - p + 1e-7))
print("train", f"{float(loss):.4e}")

live, total = [], 0
for i in range(2000):
    n = 1 + (i * 7919) % 100003
    t = cp.full((n,), i % 251, dtype=cp.uint8)
    live.append(t)
    if len(live) > 64:
        total += int(live.pop(0)[-1])
print("allocs", total)
cp.cuda.Device().synchronize()
