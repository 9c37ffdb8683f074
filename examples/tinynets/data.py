"""Synthetic, seeded batches for the example models: images, feature vectors and padded token sequences.

Every batch comes with a regression target of the model's output shape, so one loss (mean squared error) serves
all models.
"""
import torch


def _generator(seed):
    g = torch.Generator()
    g.manual_seed(seed)
    return g


def image_batch(batch_size=4, channels=3, size=16, num_outputs=10, seed=0):
    g = _generator(seed)
    images = torch.randn(batch_size, channels, size, size, generator=g)
    target = torch.randn(batch_size, num_outputs, generator=g)
    return (images,), target


def feature_batch(batch_size=4, num_features=12, num_outputs=2, seed=0):
    g = _generator(seed)
    features = torch.randn(batch_size, num_features, generator=g)
    target = torch.randn(batch_size, num_outputs, generator=g)
    return (features,), target


def token_batch(batch_size=4, seq_length=12, vocab_size=50, num_outputs=3, seed=0):
    """Token ids with right padding (id 0): the i-th sequence keeps seq_length - 2 * i tokens."""
    g = _generator(seed)
    input_ids = torch.randint(1, vocab_size, (batch_size, seq_length), generator=g)
    attention_mask = torch.ones(batch_size, seq_length)
    for i in range(batch_size):
        keep = max(1, seq_length - 2 * i)
        input_ids[i, keep:] = 0
        attention_mask[i, keep:] = 0.0
    position_ids = torch.arange(seq_length).repeat(batch_size, 1)
    target = torch.randn(batch_size, num_outputs, generator=g)
    return (input_ids, position_ids, attention_mask), target
