#!/usr/bin/env python3
"""Generate the real-model zoo under samples/zoo/ (issue 10).

    python3 scripts/gen_zoo.py OUTDIR [--only=NAME,NAME]

Thirteen models from torchvision and transformers, built from config objects with seeded random
weights (nothing is downloaded), narrowed so that the whole zoo stays a few MB. Each is exported by
`torch.export.export` with dynamic batch (and sequence, where the model allows one); `resnet` uses
`Dim.AUTO` for its batch, so its range is `[2, int_oo]`.

For each model NAME it writes
  NAME.pt2               torch.export.save() of the exported program
  NAME.b{0,1}.in{i}.npy  inputs at two legal bindings of the dynamic dims
  NAME.b{0,1}.out{i}.npy PyTorch's eager outputs for them
  NAME.expect.json       torch version, schema version, symbols and ranges (null = int_oo),
                         the two bindings, every guard of `guards_code` as torch evaluates it on
                         the real inputs of each binding, every tensor's shape/strides at each
                         binding (sympy), and the op multisets of the exported graph (`none`),
                         of `ep.run_decompositions()` (`core`) and of
                         `ep.run_decompositions(select_decomp_table())` (`inductor`), each with
                         its nodes `[target, original node]` (from `from_node`) for node-level diffs.
The writing is scripts/corpus_expect.py's, shared with gen_corpus.py. Nothing from this script
is hard-coded into tests/zoo.rs: it reads these files.
"""
import json
import os
import random
import sys
import traceback

import torch
import torch.nn as nn
from torch.export import Dim

from corpus_expect import save_export, schema_version

OUT = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else "samples/zoo"
os.makedirs(OUT, exist_ok=True)


# --------------------------------------------------------------------------- models


def tv_resnet():
    from torchvision.models.resnet import BasicBlock, ResNet

    class NarrowResNet(ResNet):
        """torchvision's ResNet with every stage 8x narrower (64..512 → 8..64 channels)."""

        def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
            return super()._make_layer(block, planes // 8, blocks, stride, dilate)

    m = NarrowResNet(BasicBlock, [1, 1, 1, 1], num_classes=10)
    m.fc = nn.Linear(64, 10)
    return m


def tv_mobilenet():
    from torchvision.models import mobilenet_v3_small

    return mobilenet_v3_small(num_classes=10, width_mult=0.25)


def tv_squeezenet():
    from torchvision.models import squeezenet1_1

    m = squeezenet1_1(num_classes=10)
    # The first two Fire stages only (conv, maxpool ceil_mode, Fire, Fire, maxpool, Fire, Fire):
    # the full net's 0.7 M weights would be a third of the zoo's size budget.
    m.features = m.features[:9]
    m.classifier[1] = nn.Conv2d(256, 10, kernel_size=1)
    return m


def tv_shufflenet():
    from torchvision.models.shufflenetv2 import ShuffleNetV2

    return ShuffleNetV2([2, 2, 2], [8, 16, 32, 64, 128], num_classes=10)


def tv_efficientnet():
    from torchvision.models.efficientnet import EfficientNet, _efficientnet_conf

    settings, last = _efficientnet_conf("efficientnet_b0", width_mult=0.25, depth_mult=0.25)
    return EfficientNet(settings, dropout=0.2, num_classes=10, last_channel=last)


def tv_vit():
    from torchvision.models.vision_transformer import VisionTransformer

    return VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64, num_classes=10)


def tv_swin():
    from torchvision.models.swin_transformer import SwinTransformer

    return SwinTransformer(
        patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 4], window_size=[4, 4], num_classes=10
    )


class HFEncoder(nn.Module):
    """A transformers model called with keyword arguments, returning `last_hidden_state`."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).last_hidden_state


class HFNoCache(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


class HFLogits(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits


class WhisperEnc(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_features):
        return self.model(input_features=input_features).last_hidden_state


TINY = dict(vocab_size=96, max_position_embeddings=64)


def hf_bert():
    from transformers import BertConfig, BertModel

    cfg = BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, **TINY)
    return HFNoCache(BertModel(cfg, add_pooling_layer=False))


def hf_gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(n_embd=32, n_layer=2, n_head=2, n_positions=64, vocab_size=96)
    return HFLogits(GPT2LMHeadModel(cfg))


def hf_llama():
    from transformers import LlamaConfig, LlamaModel

    cfg = LlamaConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, **TINY
    )
    return HFEncoder(LlamaModel(cfg))


def hf_qwen2():
    from transformers import Qwen2Config, Qwen2Model

    cfg = Qwen2Config(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, **TINY
    )
    return HFEncoder(Qwen2Model(cfg))


def hf_t5():
    from transformers import T5Config, T5EncoderModel

    cfg = T5Config(d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4, vocab_size=96)
    return HFNoCache(T5EncoderModel(cfg))


def hf_whisper():
    from transformers import WhisperConfig
    from transformers.models.whisper.modeling_whisper import WhisperEncoder

    cfg = WhisperConfig(
        d_model=32, encoder_layers=2, encoder_attention_heads=2, encoder_ffn_dim=64, num_mel_bins=8,
        max_source_positions=16, decoder_layers=1, decoder_attention_heads=2, decoder_ffn_dim=64, vocab_size=96,
    )
    return WhisperEnc(WhisperEncoder(cfg))


def image(b, hw=32):
    return (torch.randn(b, 3, hw, hw),)


def tokens(b, s, pad):
    ids = torch.randint(0, 96, (b, s), dtype=torch.long)
    mask = torch.ones(b, s, dtype=torch.long)
    mask[0, s - pad :] = 0  # right padding of the first sequence: a real boolean attention mask
    return (ids, mask)


def image_dyn(auto=False):
    b = Dim.AUTO if auto else Dim("batch", min=1, max=64)
    return {"x": {0: b}}


def token_dyn(seq_max=32):
    return {"input_ids": {0: Dim("batch", min=1, max=16), 1: Dim("seq", min=2, max=seq_max)},
            "attention_mask": {0: Dim("batch", min=1, max=16), 1: Dim("seq", min=2, max=seq_max)}}


def models():
    """(name, source, builder, inputs(binding index), dynamic_shapes)."""
    yield "resnet", "torchvision ResNet (BasicBlock [1,1,1,1], widths 8..64)", tv_resnet, lambda i: image([2, 3][i]), image_dyn(auto=True)
    yield "mobilenet_v3_small", "torchvision mobilenet_v3_small(width_mult=0.25)", tv_mobilenet, lambda i: image([1, 3][i]), image_dyn()
    yield "squeezenet1_1", "torchvision squeezenet1_1 (first 9 feature modules)", tv_squeezenet, lambda i: image([1, 2][i]), image_dyn()
    yield "shufflenet_v2", "torchvision ShuffleNetV2([2,2,2], [8,16,32,64,128])", tv_shufflenet, lambda i: image([1, 3][i]), image_dyn()
    yield "efficientnet_b0", "torchvision EfficientNet-B0 (width 0.25, depth 0.25)", tv_efficientnet, lambda i: image([1, 2][i]), image_dyn()
    yield "vit", "torchvision VisionTransformer (32px, patch 8, 2 layers, dim 32)", tv_vit, lambda i: image([1, 3][i]), image_dyn()
    yield "swin", "torchvision SwinTransformer (embed 16, depths [2,2], window 4)", tv_swin, lambda i: image([1, 2][i]), image_dyn()
    yield "bert", "transformers BertModel (2 layers, dim 32)", hf_bert, lambda i: tokens([2, 3][i], [7, 12][i], 2), token_dyn()
    yield "gpt2", "transformers GPT2LMHeadModel (2 layers, dim 32)", hf_gpt2, lambda i: tokens([2, 3][i], [7, 12][i], 2), token_dyn()
    yield "llama", "transformers LlamaModel (GQA 4/2 heads, RoPE, 2 layers)", hf_llama, lambda i: tokens([2, 3][i], [7, 12][i], 2), token_dyn()
    yield "qwen2", "transformers Qwen2Model (GQA 4/2 heads, 2 layers)", hf_qwen2, lambda i: tokens([2, 3][i], [7, 12][i], 2), token_dyn()
    yield "t5_encoder", "transformers T5EncoderModel (2 layers, dim 32)", hf_t5, lambda i: tokens([2, 3][i], [7, 12][i], 2), token_dyn()
    # Whisper's encoder checks that the mel length is exactly 2 * max_source_positions: batch only.
    yield "whisper_encoder", "transformers WhisperEncoder (2 layers, dim 32, 8 mel bins)", hf_whisper, \
        lambda i: (torch.randn([1, 3][i], 8, 32),), {"input_features": {0: Dim("batch", min=1, max=16)}}


# --------------------------------------------------------------------------- export


def export_one(name, source, build, inputs, dyn):
    torch.manual_seed(0)
    random.seed(0)
    model = build().eval()
    args0, args1 = inputs(0), inputs(1)
    note = None
    with torch.no_grad():
        # Traced at the second binding: a size of 1 in the example would be specialised (0/1 rule).
        try:
            ep = torch.export.export(model, args1, dynamic_shapes=dyn)
        except Exception as e:
            if "Constraints violated" not in str(e):
                raise
            # torch 2.11 cannot prove some guards of its own (llama: `min(8*s, 16*s) == 8*s`)
            # inside a named Dim's range; Dim.AUTO lets export keep them as guards instead.
            note = "Dim.AUTO after: " + str(e).splitlines()[0] + " " + next(
                (l.strip() for l in str(e).splitlines() if "guard" in l), "")
            auto = {k: {d: Dim.AUTO for d in v} for k, v in dyn.items()}
            ep = torch.export.export(model, args1, dynamic_shapes=auto)
    exp, size = save_export(OUT, name, source, model, ep, [args0, args1], note)
    nodes = exp["nodes"]
    print(f"{name}: {len(nodes['none'])} ops, core {len(nodes.get('core', []))}, "
          f"inductor {len(nodes.get('inductor', []))}, {size/1e3:.0f} kB, symbols {exp['symbols']}", flush=True)


def main():
    only = [a.split("=", 1)[1].split(",") for a in sys.argv if a.startswith("--only=")]
    failed, done = [], []
    for name, source, build, inputs, dyn in models():
        if only and name not in only[0]:
            continue
        try:
            export_one(name, source, build, inputs, dyn)
            done.append(name)
        except Exception:
            failed.append(name)
            print(f"FAILED {name}", flush=True)
            traceback.print_exc()
    with open(f"{OUT}/versions.json", "w") as f:
        json.dump({"torch": torch.__version__, "schema": schema_version(), "models": done, "failed": failed}, f, indent=1)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
