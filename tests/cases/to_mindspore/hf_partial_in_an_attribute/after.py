import functools

import mindspore


def recompute_partial(function, *bound, **options):
    """functools.partial for recompute (added by recompat): MindSpore's GRAPH mode
    cannot call a functools.partial object in construct, it compiles this closure.
    Keywords given at the call override the bound ones, as with functools.partial.
    """
    def call(*args, **kwargs):
        return function(*bound, *args, **{**options, **kwargs})
    return call


class Model(PreTrainedModel):
    def gradient_checkpointing_enable(self, gradient_checkpointing_kwargs=None):
        gradient_checkpointing_kwargs = gradient_checkpointing_kwargs or {"use_reentrant": True}
        self._gradient_checkpointing_func = recompute_partial(mindspore.recompute, **gradient_checkpointing_kwargs)

    def forward(self, hidden, mask):
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                hidden = self._gradient_checkpointing_func(layer, hidden, mask)
            else:
                hidden = layer(hidden, mask)
        return hidden
