import torch


def report(losses, step, lr, tokens):
    loss = torch.stack(losses).mean()
    print(f"step {step}: loss {loss:.4f}, lr {lr:.2e}, share {loss / 10:.1%}, tokens {tokens:,}, {loss!r:>10}")
    print(f"{float(loss):.3f} {step:5d} {'done':>6}")
