from mindspore import ops


def report(losses, step, lr, tokens):
    loss = ops.stack(losses).mean()
    print(f"step {step}: loss {float(loss):.4f}, lr {float(lr):.2e}, share {float(loss / 10):.1%}, tokens {tokens:,}, {loss!r:>10}")
    print(f"{float(loss):.3f} {step:5d} {'done':>6}")
