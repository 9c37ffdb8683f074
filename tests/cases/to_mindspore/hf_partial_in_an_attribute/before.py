import functools

from torch.utils.checkpoint import checkpoint


class Model(PreTrainedModel):
    def gradient_checkpointing_enable(self, gradient_checkpointing_kwargs=None):
        gradient_checkpointing_kwargs = gradient_checkpointing_kwargs or {"use_reentrant": True}
        self._gradient_checkpointing_func = functools.partial(checkpoint, **gradient_checkpointing_kwargs)

    def forward(self, hidden, mask):
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                hidden = self._gradient_checkpointing_func(layer.__call__, hidden, mask)
            else:
                hidden = layer(hidden, mask)
        return hidden
