"""MONAI's networks built from the original package (torch) and from its translation (MindSpore), compared with
recompat's compare() in eval and train mode. Run as a script by tests/test_monai.py (a process of its own: both
packages are named monai):

    python tests/monai_networks.py [--graph] TRANSLATED_ROOT OUT.json [NETWORK ...]

TRANSLATED_ROOT holds the translated copy of the package (TRANSLATED_ROOT/monai); OUT.json gets, per network and
mode, "pass", "fail: ..." or "error: ..."; the NETWORKs named (keys of NETWORKS), or all of them.
With --graph: per network, whether the translation's gradient compiles in GRAPH mode ("error": why not), the
operators it recomputes ("recomputed") and, where the torch original reruns modules in backward (its
checkpointing), those modules ("regions") and the regions with none of the recomputed operators ("unrecomputed").
"""
from __future__ import annotations

import contextlib
import functools
import json
import os
import sys

os.environ.setdefault("GLOG_v", "3")

# small 2-D configurations (the list); each builds in a second or two
NETWORKS = {
    "BasicUNet": ("BasicUNet", dict(spatial_dims=2, in_channels=1, out_channels=2, features=(4, 4, 8, 8, 16, 4)),
                  (2, 1, 32, 32)),
    "UNet": ("UNet", dict(spatial_dims=2, in_channels=1, out_channels=2, channels=(4, 8, 16), strides=(2, 2),
                          num_res_units=1), (2, 1, 16, 16)),
    "CheckpointUNet": ("unet.CheckpointUNet", dict(spatial_dims=2, in_channels=1, out_channels=2, channels=(4, 8, 16),
                                              strides=(2, 2), num_res_units=1), (2, 1, 16, 16)),   # checkpointed
    "SegResNet": ("SegResNet", dict(spatial_dims=2, init_filters=8, in_channels=1, out_channels=2,
                                    blocks_down=(1, 1), blocks_up=(1,)), (2, 1, 16, 16)),
    "DenseNet121": ("DenseNet121", dict(spatial_dims=2, in_channels=1, out_channels=2), (2, 1, 64, 64)),
    "ResNet": ("resnet10", dict(spatial_dims=2, n_input_channels=1, num_classes=2), (2, 1, 32, 32)),
    "ViT": ("ViT", dict(in_channels=1, img_size=(16, 16), patch_size=(4, 4), hidden_size=32, mlp_dim=64, num_layers=2,
                        num_heads=4, spatial_dims=2), (2, 1, 16, 16)),
    "UNETR": ("UNETR", dict(in_channels=1, out_channels=2, img_size=(32, 32), feature_size=4, hidden_size=32,
                            mlp_dim=64, num_heads=4, spatial_dims=2), (2, 1, 32, 32)),
    "AutoEncoder": ("AutoEncoder", dict(spatial_dims=2, in_channels=1, out_channels=1, channels=(4, 8),
                                        strides=(2, 2)), (2, 1, 16, 16)),
    "DynUNet": ("DynUNet", dict(spatial_dims=2, in_channels=1, out_channels=2, kernel_size=[3, 3, 3],
                                strides=[1, 2, 2], upsample_kernel_size=[2, 2]), (2, 1, 16, 16)),
    "AttentionUnet": ("AttentionUnet", dict(spatial_dims=2, in_channels=1, out_channels=2, channels=(4, 8, 16),
                                            strides=(2, 2)), (2, 1, 16, 16)),
    # more of monai.networks.nets, as they translate
    "BasicUNetPlusPlus": ("BasicUNetPlusPlus", dict(spatial_dims=2, in_channels=1, out_channels=2,
                                                    features=(4, 4, 8, 8, 16, 4)), (2, 1, 32, 32)),
    "HighResNet": ("HighResNet", dict(spatial_dims=2, in_channels=1, out_channels=2), (2, 1, 16, 16)),
    "MedNeXt": ("MedNeXt", dict(spatial_dims=2, init_filters=4, in_channels=1, out_channels=2), (1, 1, 32, 32)),
    "Classifier": ("Classifier", dict(in_shape=(1, 16, 16), classes=2, channels=(4, 8), strides=(2, 2)),
                   (2, 1, 16, 16)),
    "Regressor": ("Regressor", dict(in_shape=(1, 16, 16), out_shape=(2,), channels=(4, 8), strides=(2, 2)),
                  (2, 1, 16, 16)),
    "Generator": ("Generator", dict(latent_shape=(8,), start_shape=(4, 4, 4), channels=(4, 2), strides=(2, 2)),
                  (2, 8)),
    "FullyConnectedNet": ("FullyConnectedNet", dict(in_channels=4, out_channels=2, hidden_channels=(8, 8)), (2, 4)),
    "Discriminator": ("Discriminator", dict(in_shape=(1, 16, 16), channels=(4, 8), strides=(2, 2)),
                      (2, 1, 16, 16)),
    "SegResNetDS": ("SegResNetDS", dict(spatial_dims=2, init_filters=8, in_channels=1, out_channels=2,
                                        blocks_down=(1, 1, 1)), (2, 1, 16, 16)),
    "LocalNet": ("LocalNet", dict(spatial_dims=2, in_channels=1, num_channel_initial=4, extract_levels=(0, 1, 2),
                                  out_channels=2), (2, 1, 16, 16)),
    "GlobalNet": ("GlobalNet", dict(image_size=(16, 16), spatial_dims=2, in_channels=1, num_channel_initial=4,
                                    depth=2), (2, 1, 16, 16)),
    "EfficientNetBN": ("EfficientNetBN", dict(model_name="efficientnet-b0", pretrained=False, spatial_dims=2,
                                              in_channels=1, num_classes=2), (4, 1, 64, 64)),
    "VNet": ("VNet", dict(spatial_dims=2, in_channels=1, out_channels=2), (2, 1, 32, 32)),
    "ViTAutoEnc": ("ViTAutoEnc", dict(in_channels=1, img_size=(16, 16), patch_size=(4, 4), hidden_size=32,
                                      mlp_dim=64, num_layers=2, num_heads=4, spatial_dims=2), (2, 1, 16, 16)),
    "RegUNet": ("RegUNet", dict(spatial_dims=2, in_channels=1, num_channel_initial=4, depth=2, out_channels=2),
                (2, 1, 16, 16)),
    # Critic(Classifier(Regressor)), Regressor from another file: a model only the tree tells about
    "Critic": ("Critic", dict(in_shape=(1, 16, 16), channels=(4, 8), strides=(2, 2)), (2, 1, 16, 16)),
    "DenseNet169": ("DenseNet169", dict(spatial_dims=2, in_channels=1, out_channels=2), (2, 1, 64, 64)),
    "SEResNet50": ("SEResNet50", dict(spatial_dims=2, in_channels=1, num_classes=2, layers=(1, 1, 1, 1)),
                   (2, 1, 64, 64)),
    "SegResNetVAE": ("SegResNetVAE", dict(input_image_size=(16, 16), spatial_dims=2, init_filters=8, in_channels=1,
                                          out_channels=2, blocks_down=(1, 1), blocks_up=(1,)), (2, 1, 16, 16)),
    # checkpointed under its use_checkpoint flag (`if self.use_checkpoint: checkpoint(self.encoder, x)`)
    "AutoencoderKL": ("AutoencoderKL", dict(spatial_dims=2, in_channels=1, out_channels=1, channels=(4, 4),
                                            latent_channels=2, num_res_blocks=1, norm_num_groups=2,
                                            attention_levels=(False, False), with_encoder_nonlocal_attn=False,
                                            with_decoder_nonlocal_attn=False, use_checkpoint=True), (1, 1, 16, 16)),
}


def _monai_modules() -> dict:
    return {k: m for k, m in sys.modules.items() if k == "monai" or k.startswith("monai.")}


@contextlib.contextmanager
def _importing(modules: dict):
    """`import monai...` gives these modules meanwhile: a factory that imports when it is called (MONAI's
    activation factories) gets the package whose network is being built."""
    before = _monai_modules()
    for name in before:
        del sys.modules[name]
    sys.modules.update(modules)
    try:
        yield
    finally:
        for name in _monai_modules():
            del sys.modules[name]
        sys.modules.update(before)


def _both(root: str):
    """(the translated nets module, its monai modules, the original nets module)."""
    sys.path.insert(0, root)
    import monai.networks.nets as ported          # the translation
    translated = _monai_modules()
    for name in translated:
        del sys.modules[name]
    sys.path.remove(root)
    import monai.networks.nets as original
    assert ported is not original
    return ported, translated, original


def _networks(only: tuple):
    """(name, how to build it from a nets module, its input) of each network asked for (all where none is)."""
    import numpy as np

    for network, (factory, kwargs, shape) in NETWORKS.items():
        if not only or network in only:
            build = lambda nets, factory=factory, kwargs=kwargs: functools.reduce(   # noqa: E731
                getattr, factory.split("."), nets)(**kwargs)
            yield network, build, np.random.default_rng(0).standard_normal(shape).astype(np.float32)


def _write(out: str, results: dict) -> int:
    with open(out, "w", encoding="utf-8") as f:
        json.dump(results, f, indent=1)
    return 0


def graph(root: str, out: str, *only: str) -> int:
    ported, translated, original = _both(root)
    import mindspore as ms
    import torch

    from recompat.compat import recomputed_ops, torch_recomputed_modules
    from recompat.compat.graph_recompute import unrecomputed

    results = {}
    for network, build, x in _networks(only):
        torch.manual_seed(0)
        regions = torch_recomputed_modules(build(original).train(), torch.tensor(x, requires_grad=True))
        results[network] = found = {"regions": regions} if regions else {}
        try:
            with _importing(translated):
                m = build(ported)
                m.set_train(True)
                ops = recomputed_ops(m, ms.Tensor(x))
            found["recomputed"] = len(ops)
            if regions:
                found["unrecomputed"] = unrecomputed(ops, regions)
        except Exception as exc:   # noqa: BLE001 - every network's own result is the point
            cause = exc.__cause__ or exc    # MindSpore's message: its first line that says something
            first = next((line for line in str(cause).splitlines() if line.strip(" -")), "")
            found["error"] = f"{type(exc).__name__}: {first[:200]}"
    return _write(out, results)


def main(root: str, out: str, *only: str) -> int:
    ported, translated, original = _both(root)

    import torch

    from recompat.compat import compare

    results = {}
    for network, build, x in _networks(only):
        for training in (False, True):
            key = f"{network}-{'train' if training else 'eval'}"
            try:
                torch.manual_seed(0)
                t = build(original).train(training)
                with _importing(translated):
                    m = build(ported)
                    m.set_train(training)
                    report = compare(t, m, [x])
                results[key] = "pass" if report.passed else "fail: " + str(report).splitlines()[-1]
            except Exception as exc:   # noqa: BLE001 - every network's own result is the point
                results[key] = f"error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return _write(out, results)


if __name__ == "__main__":
    sys.exit(graph(*sys.argv[2:]) if sys.argv[1:2] == ["--graph"] else main(*sys.argv[1:]))
