class Decoder(PreTrainedModel):
    def forward(self, h):
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                h = self._gradient_checkpointing_func(layer, h)
            else:
                h = layer(h)
        return h
