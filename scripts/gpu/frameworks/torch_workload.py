"""A small real PyTorch workload for `cusafe run`: matmul, conv, 50 training steps and
2000 allocations of odd sizes. Prints one deterministic line per part, so a run under
cusafe can be compared with a plain run line by line."""
import os
import torch

torch.manual_seed(0)
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False
dev = "cuda"

a = torch.randn(1024, 1024, device=dev)
b = torch.randn(1024, 1024, device=dev)
print("matmul", f"{(a @ b).double().sum().item():.6e}")

x = torch.randn(8, 3, 64, 64, device=dev)
w = torch.randn(16, 3, 3, 3, device=dev)
y = torch.nn.functional.conv2d(x, w, padding=1)
print("conv", f"{y.double().sum().item():.6e}")

model = torch.nn.Sequential(
    torch.nn.Conv2d(3, 8, 3, padding=1),
    torch.nn.ReLU(),
    torch.nn.Flatten(),
    torch.nn.Linear(8 * 32 * 32, 10),
).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
data = torch.randn(32, 3, 32, 32, device=dev)
target = torch.randint(0, 10, (32,), device=dev)
for _ in range(50):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(data), target)
    loss.backward()
    opt.step()
print("train", f"{loss.item():.4e}")

live, total = [], 0
for i in range(2000):
    n = 1 + (i * 7919) % 100003
    t = torch.full((n,), i % 251, dtype=torch.uint8, device=dev)
    live.append(t)
    if len(live) > 64:
        total += int(live.pop(0)[-1].item())
print("allocs", total)
torch.cuda.synchronize()
print("backend", os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "native"))
