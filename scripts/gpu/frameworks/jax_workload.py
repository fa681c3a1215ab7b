"""A small real JAX workload for `cusafe run` (see torch_workload.py). JAX reaches the
driver directly (cuMemAlloc and friends through its own loader)."""
import jax
import jax.numpy as jnp
import numpy as np

key = jax.random.PRNGKey(0)
k1, k2, k3, k4 = jax.random.split(key, 4)
a = jax.random.normal(k1, (1024, 1024))
b = jax.random.normal(k2, (1024, 1024))
print("matmul", f"{float(jnp.sum((a @ b).astype(jnp.float32))):.6e}")

x = jax.random.normal(k3, (8, 3, 64, 64))
w = jax.random.normal(k4, (16, 3, 3, 3))
y = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME")
print("conv", f"{float(jnp.sum(y)):.6e}")

def loss_fn(params, xs, ys):
    h = jnp.tanh(xs @ params["w1"])
    return jnp.mean((h @ params["w2"] - ys) ** 2)

params = {"w1": jax.random.normal(k1, (32, 64)) * 0.1, "w2": jax.random.normal(k2, (64, 1)) * 0.1}
xs = jax.random.normal(k3, (256, 32))
ys = jax.random.normal(k4, (256, 1))
grad = jax.jit(jax.grad(loss_fn))
for _ in range(50):
    g = grad(params, xs, ys)
    params = jax.tree_util.tree_map(lambda p, d: p - 0.05 * d, params, g)
print("train", f"{float(loss_fn(params, xs, ys)):.4e}")

# Host arrays put on the device: one allocation each, no compilation per shape.
live, total = [], 0
for i in range(2000):
    n = 1 + (i * 7919) % 100003
    t = jax.device_put(np.full((n,), i % 251, dtype=np.uint8))
    live.append(t)
    if len(live) > 64:
        total += int(np.asarray(live.pop(0))[-1])
print("allocs", total)
