"""A tiny DenseNet with memory-efficient dense layers (the torchvision recipe).

Each dense layer's bottleneck (concat -> BN -> ReLU -> 1x1 conv) runs under checkpoint, through a closure built by
a factory and called on the splatted list of all previous feature maps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint as cp


def _bn_function_factory(norm, relu, conv):
    def bn_function(*inputs):
        concated_features = torch.cat(inputs, 1)
        bottleneck_output = conv(relu(norm(concated_features)))
        return bottleneck_output

    return bn_function


class _DenseLayer(nn.Module):
    def __init__(self, num_input_features, growth_rate, bn_size, drop_rate, memory_efficient=False):
        super().__init__()
        self.norm1 = nn.BatchNorm2d(num_input_features)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(num_input_features, bn_size * growth_rate, kernel_size=1, stride=1, bias=False)
        self.norm2 = nn.BatchNorm2d(bn_size * growth_rate)
        self.relu2 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(bn_size * growth_rate, growth_rate, kernel_size=3, stride=1, padding=1, bias=False)
        self.drop_rate = drop_rate
        self.memory_efficient = memory_efficient

    def forward(self, *prev_features):
        bn_function = _bn_function_factory(self.norm1, self.relu1, self.conv1)
        if self.memory_efficient and any(prev_feature.requires_grad for prev_feature in prev_features):
            bottleneck_output = cp.checkpoint(bn_function, *prev_features)
        else:
            bottleneck_output = bn_function(*prev_features)
        new_features = self.conv2(self.relu2(self.norm2(bottleneck_output)))
        if self.drop_rate > 0:
            new_features = F.dropout(new_features, p=self.drop_rate, training=self.training)
        return new_features


class _DenseBlock(nn.Module):
    def __init__(self, num_layers, num_input_features, bn_size, growth_rate, drop_rate, memory_efficient=False):
        super().__init__()
        self.layers = nn.ModuleList(
            [
                _DenseLayer(
                    num_input_features + i * growth_rate,
                    growth_rate=growth_rate,
                    bn_size=bn_size,
                    drop_rate=drop_rate,
                    memory_efficient=memory_efficient,
                )
                for i in range(num_layers)
            ]
        )

    def forward(self, init_features):
        features = [init_features]
        for layer in self.layers:
            new_features = layer(*features)
            features.append(new_features)
        return torch.cat(features, 1)


class _Transition(nn.Module):
    def __init__(self, num_input_features, num_output_features):
        super().__init__()
        self.norm = nn.BatchNorm2d(num_input_features)
        self.relu = nn.ReLU(inplace=True)
        self.conv = nn.Conv2d(num_input_features, num_output_features, kernel_size=1, stride=1, bias=False)
        self.pool = nn.AvgPool2d(kernel_size=2, stride=2)

    def forward(self, x):
        return self.pool(self.conv(self.relu(self.norm(x))))


class TinyDenseNet(nn.Module):
    """Two dense blocks of three layers, growth rate 8: about 25k parameters."""

    def __init__(self, growth_rate=8, block_config=(3, 3), num_init_features=16, bn_size=2, drop_rate=0.0,
                 num_classes=10, memory_efficient=False):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, num_init_features, kernel_size=3, stride=1, padding=1, bias=False),
            nn.BatchNorm2d(num_init_features),
            nn.ReLU(inplace=True),
        )
        blocks = []
        num_features = num_init_features
        for i, num_layers in enumerate(block_config):
            blocks.append(
                _DenseBlock(num_layers, num_features, bn_size, growth_rate, drop_rate, memory_efficient=memory_efficient)
            )
            num_features = num_features + num_layers * growth_rate
            if i != len(block_config) - 1:
                blocks.append(_Transition(num_features, num_features // 2))
                num_features = num_features // 2
        self.blocks = nn.Sequential(*blocks)
        self.norm5 = nn.BatchNorm2d(num_features)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.classifier = nn.Linear(num_features, num_classes)

    def forward(self, x):
        features = self.blocks(self.stem(x))
        out = F.relu(self.norm5(features))
        out = torch.flatten(self.pool(out), 1)
        return self.classifier(out)
