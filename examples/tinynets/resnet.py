"""A tiny ResNet whose stages are built by `_make_layer` and checkpointed block by block (Swin-style flag)."""
import torch
import torch.nn as nn
import torch.utils.checkpoint as checkpoint


def conv3x3(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        return self.relu(out + identity)


class TinyResNet(nn.Module):
    def __init__(self, layers=(2, 2), widths=(16, 32), num_classes=10, use_checkpoint=False):
        super().__init__()
        self.use_checkpoint = use_checkpoint
        self.inplanes = widths[0]
        self.stem = nn.Sequential(
            conv3x3(3, self.inplanes),
            nn.BatchNorm2d(self.inplanes),
            nn.ReLU(inplace=True),
        )
        self.layer1 = self._make_layer(widths[0], layers[0])
        self.layer2 = self._make_layer(widths[1], layers[1], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(widths[1] * BasicBlock.expansion, num_classes)

    def _make_layer(self, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes * BasicBlock.expansion:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes * BasicBlock.expansion, kernel_size=1, stride=stride, bias=False),
                nn.BatchNorm2d(planes * BasicBlock.expansion),
            )
        layers = [BasicBlock(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * BasicBlock.expansion
        for _ in range(1, blocks):
            layers.append(BasicBlock(self.inplanes, planes))
        return nn.Sequential(*layers)

    def _forward_stage(self, stage, x):
        for blk in stage:
            if self.use_checkpoint:
                x = checkpoint.checkpoint(blk, x, use_reentrant=False)
            else:
                x = blk(x)
        return x

    def forward(self, x):
        x = self.stem(x)
        x = self._forward_stage(self.layer1, x)
        x = self._forward_stage(self.layer2, x)
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)
