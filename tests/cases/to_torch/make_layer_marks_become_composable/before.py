from mindspore import nn


class ResNet(nn.Cell):
    def _make_layer(self, block, layer_num, channel):
        layers = []
        for _ in range(1, layer_num):
            resnet_block = block(channel, channel, stride=1)
            resnet_block.recompute()
            layers.append(resnet_block)
        return nn.SequentialCell(layers)
