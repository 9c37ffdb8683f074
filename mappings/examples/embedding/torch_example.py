"""nn.Embedding: num_embeddings and embedding_dim are vocab_size and embedding_size; the weight is embedding_table."""
import numpy as np
from torch import nn


class Example(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.fc = nn.Linear(4, 2)

    def forward(self, ids):
        return self.fc(self.embed(ids))


INPUTS = [np.array([[1, 0, 3, 9], [0, 2, 2, 7]], dtype=np.int64)]
