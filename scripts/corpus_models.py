"""Enumerating and building the corpus's architectures (scripts/gen_corpus.py's model half).

An architecture is a small dict, `{"id", "family", "name"}`, enumerated without building anything:
  transformers  every model type of CONFIG_MAPPING_NAMES          id hf_<type>_<task> (task once built)
  torchvision   every list_models() builder of the classification, id tv_<name>
                segmentation and video modules (detection, optical flow and quantization enumerated,
                then skipped: lists of images in, dicts out / int8 modules)
  timm          per family (name up to the first `_` or digit), the id timm_<name>
                smallest list_models() entry by parameter count (num_classes=10, built on `meta`);
                one still over the cap is built with depth=2/embed_dim=64 (ViT-like) or depths=1
                (staged) where its constructor takes them
A transformers type is shrunk by attribute name (RULES) in its config and every sub-config; its head
is the first of HF_HEADS the type has that builds and runs, else its config's own `…Model`.

`build(arch, limits)` returns a `Built`: the module (forward takes tensors by name and returns a
tensor or a tuple of them), `inputs(i)` for the two bindings (i=1 is traced), the dims to make
dynamic per input, and what the manifest records (source, task, overrides, params, input text).
It raises `Skip(reason)` for what cannot be built or run eagerly. Nothing is downloaded: configs
and constructors take defaults, weights are random from torch.manual_seed(0).
"""
import inspect
import random
import re

import torch
import torch.nn as nn


class Skip(Exception):
    """The architecture is not built (reason in the message); not a torch failure."""


class Built:
    def __init__(self, model, inputs, names, dyn, info):
        self.model, self.inputs, self.names, self.dyn, self.info = model, inputs, names, dyn, info


def seed():
    torch.manual_seed(0)
    random.seed(0)


def n_params(m):
    return sum(p.numel() for p in m.parameters())


def safe_id(s):
    return re.sub(r"[^a-z0-9]+", "_", s.lower()).strip("_")


def first_line(e):
    s = str(e).strip()
    return f"{type(e).__name__}: {s.splitlines()[0][:300] if s else ''}"


class Tensors(nn.Module):
    """Calls `model(**{name: tensor})` and returns tensors only (see `pick`)."""

    def __init__(self, model, names, extra=None):
        super().__init__()
        self.model, self.names, self.extra = model, list(names), dict(extra or {})

    def call(self, *args):
        return pick(self.model(**dict(zip(self.names, args)), **self.extra))


def wrap(model, names, extra=None):
    """A `Tensors` subclass whose forward has the inputs' own names, so export's dynamic_shapes and
    guards_code (`L['input_ids']`) speak of them."""
    ns = {}
    exec(f"def forward(self, {', '.join(names)}):\n    return self.call({', '.join(names)})", ns)
    cls = type("Wrapped", (Tensors,), {"forward": ns["forward"]})
    return cls(model, names, extra)


def pick(out):
    """logits, else last_hidden_state, else every tensor of the output (dicts in order)."""
    if isinstance(out, torch.Tensor):
        return out
    for k in ("logits", "last_hidden_state", "out"):
        v = out.get(k) if hasattr(out, "get") else None
        if isinstance(v, torch.Tensor):
            return v
    vals = out.values() if hasattr(out, "values") else out
    ts = tuple(v for v in vals if isinstance(v, torch.Tensor))
    if not ts:
        raise Skip(f"no tensor in the output ({type(out).__name__})")
    return ts[0] if len(ts) == 1 else ts


def try_inputs(model, candidates):
    """The first candidate (a function of the binding) the model runs eagerly on, with its output."""
    errs = []
    for make in candidates:
        seed()
        args = make(1)
        try:
            with torch.no_grad():
                out = model(*args)
            return make, out
        except Exception as e:
            errs.append(first_line(e))
    raise Skip("eager forward: " + " | ".join(dict.fromkeys(errs))[:600])


def describe(args, names):
    return {n: [list(a.shape), str(a.dtype).replace("torch.", "")] for n, a in zip(names, args)}


# --------------------------------------------------------------------------- transformers

HF_HEADS = [  # (mapping, task), tried in this order; the first that builds and runs is kept
    ("MODEL_FOR_CAUSAL_LM_MAPPING_NAMES", "causal_lm"),
    ("MODEL_FOR_MASKED_LM_MAPPING_NAMES", "masked_lm"),
    ("MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES", "seq2seq_lm"),
    ("MODEL_FOR_IMAGE_CLASSIFICATION_MAPPING_NAMES", "image_classification"),
    ("MODEL_FOR_AUDIO_CLASSIFICATION_MAPPING_NAMES", "audio_classification"),
    ("MODEL_MAPPING_NAMES", "model"),
]

# attribute → (target, kind): "cap" lowers an int above target to target, "set" sets any int,
# "list_*" rewrites per-stage lists. Applied to the config and every sub-config in it.
HIDDEN = ["hidden_size", "d_model", "n_embd", "n_embed", "embed_dim", "dim", "model_dim", "hidden_dim",
          "word_embed_proj_dim", "embedding_size", "projection_dim", "text_embed_dim", "vision_embed_dim",
          "d_embed", "encoder_hidden_size", "decoder_hidden_size", "hidden_channels"]
HEADS = ["num_attention_heads", "n_head", "n_heads", "num_heads", "encoder_attention_heads",
         "decoder_attention_heads", "encoder_num_attention_heads", "decoder_num_attention_heads"]
KV_HEADS = ["num_key_value_heads", "num_kv_heads", "n_kv_heads", "multi_query_group_num"]
HEAD_DIM = ["head_dim", "kv_channels", "d_kv", "attention_head_dim", "qk_nope_head_dim", "v_head_dim"]
LAYERS = ["num_hidden_layers", "n_layer", "n_layers", "num_layers", "encoder_layers", "decoder_layers",
          "num_decoder_layers", "num_encoder_layers", "encoder_num_hidden_layers", "decoder_num_hidden_layers"]
INTER = ["intermediate_size", "ffn_dim", "d_ff", "encoder_ffn_dim", "decoder_ffn_dim", "n_inner",
         "dim_feedforward", "ffn_hidden_size", "intermediate_dim", "encoder_intermediate_size",
         "decoder_intermediate_size"]
MOE_INTER = ["moe_intermediate_size", "shared_expert_intermediate_size", "expert_intermediate_size"]
RULES = {
    **{k: (64, "cap") for k in HIDDEN}, **{k: (4, "set") for k in HEADS}, **{k: (2, "set") for k in KV_HEADS},
    **{k: (16, "cap") for k in HEAD_DIM}, **{k: (2, "cap") for k in LAYERS}, **{k: (128, "cap") for k in INTER},
    **{k: (64, "cap") for k in MOE_INTER},
    "qk_rope_head_dim": (8, "cap"), "rotary_dim": (8, "cap"), "rotary_emb_dim": (8, "cap"), "q_lora_rank": (32, "cap"), "kv_lora_rank": (32, "cap"),
    "num_experts": (4, "cap"), "num_local_experts": (4, "cap"), "n_routed_experts": (4, "cap"),
    "moe_num_experts": (4, "cap"), "num_experts_per_tok": (2, "cap"), "n_shared_experts": (1, "cap"),
    "n_group": (1, "cap"), "topk_group": (1, "cap"),
    "vocab_size": (128, "cap"), "max_position_embeddings": (128, "cap"), "n_positions": (128, "cap"),
    "max_seq_len": (128, "cap"), "max_sequence_length": (128, "cap"), "n_ctx": (128, "cap"),
    "max_target_positions": (128, "cap"), "max_source_positions": (32, "cap"),
    "image_size": (32, "size"), "patch_size": (8, "cap"), "num_mel_bins": (16, "cap"),
    "hidden_sizes": (16, "list_width"), "embed_dims": (16, "list_width"), "depths": (1, "list_depth"),
    "conv_dim": (32, "list_cap"), "num_channels_list": (16, "list_cap"),
}
TOKEN_ID = re.compile(r"(_token_id|_token_index|_token_ids)$")


def shrink_dict(d, path, applied):
    """Rewrites a config's to_dict() in place by RULES; recurses into sub-configs (dicts)."""
    old_layers = next((d[k] for k in LAYERS if isinstance(d.get(k), int)), None)
    heads = d.get("num_attention_heads") if isinstance(d.get("num_attention_heads"), int) else None
    free_ids = iter(range(127, 95, -1))
    for k in sorted(d):
        v, p = d[k], f"{path}{k}"
        if isinstance(v, dict) and ("model_type" in v or k.endswith("config") or k in ("encoder", "decoder")):
            shrink_dict(v, p + ".", applied)
            continue
        new = v
        rule = RULES.get(k)
        if k == "num_heads" and isinstance(v, list) and v and all(isinstance(x, int) for x in v):
            new = [2**i for i in range(len(v))]  # per stage, with widths 16·2^i (list_width)
        elif rule and not isinstance(v, bool):
            target, kind = rule
            if kind == "cap" and isinstance(v, int) and v > target:
                new = target
            elif kind == "set" and isinstance(v, int) and v != target:
                new = target
            elif kind == "size" and isinstance(v, int) and v > target:
                new = target
            elif kind == "size" and isinstance(v, (list, tuple)) and all(isinstance(x, int) for x in v):
                new = [min(x, target) for x in v]
            elif isinstance(v, list) and v and all(isinstance(x, int) for x in v):
                if kind == "list_width":
                    new = [target * 2**i for i in range(len(v))]
                elif kind == "list_depth":
                    new = [target] * len(v)
                elif kind == "list_cap":
                    new = [min(x, target) for x in v]
        if TOKEN_ID.search(k):
            if isinstance(v, int) and v >= 96:
                new = next(free_ids, 95)
            elif isinstance(v, list) and all(isinstance(x, int) for x in v):
                new = [x if x < 96 else next(free_ids, 95) for x in v]
        if isinstance(v, list) and old_layers and old_layers > 2 and len(v) == old_layers and k not in RULES:
            new = v[:2]  # per-layer lists (layer_types, sliding windows …) follow the layer count
        if new != v:
            d[k] = new
            applied[p] = [v, new]
    if heads and isinstance(d.get("num_key_value_heads"), int):
        d["num_key_value_heads"] = 2
    return d


def hf_config(model_type):
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    cls = CONFIG_MAPPING[model_type]
    try:
        cfg = cls()
    except Exception as e:
        raise Skip("config with defaults: " + first_line(e))
    applied = {}
    d = shrink_dict(cfg.to_dict(), "", applied)
    for k in ("_name_or_path", "transformers_version", "architectures", "model_type"):
        d.pop(k, None)
    try:
        return cls(**d), applied, "rebuilt"
    except Exception as e:  # the dict does not round-trip: set the attributes on the default instance
        note = "setattr after " + first_line(e)
    for p, (_, new) in applied.items():
        *parents, leaf = p.split(".")
        obj = cfg
        for part in parents:
            obj = getattr(obj, part, None)
        if obj is not None:
            try:
                setattr(obj, leaf, new)
            except Exception:
                pass  # the default stays; the meta build's parameter count decides
    return cfg, applied, note


def hf_heads(model_type):
    """(class name, task) in HF_HEADS order; a type no mapping names (the text or vision half of a
    two-tower model, `aimv2_text_model`) gets its config's own model, `FooTextConfig` → `FooTextModel`."""
    import transformers.models.auto.modeling_auto as M
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    out = []
    for mapping, task in HF_HEADS:
        name = getattr(M, mapping, {}).get(model_type)
        if isinstance(name, (list, tuple)):
            name = name[0] if name else None
        if name and name not in [n for n, _ in out]:
            out.append((name, task))
    if not out and CONFIG_MAPPING_NAMES[model_type].endswith("Config"):
        out.append((CONFIG_MAPPING_NAMES[model_type][: -len("Config")] + "Model", "model"))
    return out


def hf_candidates(model, cfg):
    """Input candidates by the model's main input name: functions binding → args, and arg names."""
    main = getattr(model, "main_input_name", "input_ids")
    params = inspect.signature(model.forward).parameters
    text = getattr(cfg, "get_text_config", lambda: cfg)()
    if main == "input_ids":
        vocab = min(getattr(text, "vocab_size", 96) or 96, 96)
        names = ["input_ids"] + (["attention_mask"] if "attention_mask" in params else [])
        if getattr(cfg, "is_encoder_decoder", False) and "decoder_input_ids" in params:
            names.append("decoder_input_ids")

        def tokens(i, names=names, size=None):
            b, s = [2, 3][i], [7, 12][i]
            ids = torch.randint(3, vocab, (b, s), dtype=torch.long)
            mask = torch.ones(b, s, dtype=torch.long)
            mask[0, s - 2:] = 0  # right padding of the first sequence: a real attention mask
            pix = torch.randn(b, channels(cfg), size, size) if size else None
            return tuple({"input_ids": ids, "attention_mask": mask, "decoder_input_ids": ids,
                          "pixel_values": pix}[n] for n in names)

        groups = [(names, [tokens], {n: [0, 1] for n in names})]
        if "pixel_values" in params:  # two towers (CLIP-like): text and image together
            both = names + ["pixel_values"]
            groups.append((both, [lambda i, s=s: tokens(i, both, s) for s in image_sizes(cfg)],
                           {**{n: [0, 1] for n in names}, "pixel_values": [0]}))
        return groups
    if main in ("pixel_values",):
        c = channels(cfg)
        return [([main], [lambda i, s=s: (torch.randn([2, 3][i], c, s, s),) for s in image_sizes(cfg)], {main: [0]})]
    if main == "input_values":
        return [([main], [lambda i, t=t: (torch.randn([2, 3][i], t),) for t in (1600, 4000, 16000)], {main: [0]})]
    if main == "input_features":
        f = [getattr(cfg, k, None) for k in ("num_mel_bins", "feature_size", "input_feat_per_channel", "num_mel_bins")]
        f = [x for x in dict.fromkeys(f + [80, 16]) if isinstance(x, int)]
        t = 2 * (getattr(cfg, "max_source_positions", None) or 32)
        cands = [lambda i, a=a, b_=b_: (torch.randn([2, 3][i], a, b_),) for x in f for a, b_ in ((x, t), (t, x))]
        return [([main], cands[:6], {main: [0]})]
    raise Skip(f"main input {main!r} is not generated")


def channels(cfg):
    return getattr(cfg, "num_channels", None) or getattr(getattr(cfg, "vision_config", None), "num_channels", 3) or 3


def image_sizes(cfg):
    size = getattr(cfg, "image_size", None) or getattr(getattr(cfg, "vision_config", None), "image_size", 32)
    size = size if isinstance(size, int) else (size[0] if isinstance(size, (list, tuple)) and size else 32)
    return list(dict.fromkeys([size, 32, 64, 224]))


def hf_build(model_type, limits):
    import transformers

    seed()
    cfg, applied, how = hf_config(model_type)
    heads = hf_heads(model_type)
    if not heads:
        raise Skip("no head in the auto mappings")
    errs = []
    for cls_name, task in heads:
        cls = getattr(transformers, cls_name, None)
        if cls is None:
            errs.append(f"{cls_name}: not importable")
            continue
        try:
            with torch.device("meta"):
                n = n_params(cls(cfg))
        except Exception:
            n = None  # some models cannot be made on meta; the real build below still counts
        if n is not None and n > limits["hf"]:
            errs.append(f"{cls_name}: {n} params after shrinking > {limits['hf']}")
            continue
        try:
            seed()
            model = cls(cfg).eval()
        except Exception as e:
            errs.append(f"{cls_name}: build: {first_line(e)}")
            continue
        n = n_params(model)
        if n > limits["hf"]:
            errs.append(f"{cls_name}: {n} params after shrinking > {limits['hf']}")
            continue
        try:
            groups = hf_candidates(model, cfg)
        except Skip as e:
            errs.append(f"{cls_name}: {e}")
            continue
        extra = {"use_cache": False} if "use_cache" in inspect.signature(model.forward).parameters else {}
        for names, cands, dyn in groups:
            w = wrap(model, names, extra).eval()
            try:
                make, _ = try_inputs(w, cands)
                break
            except Skip as e:
                errs.append(f"{cls_name}({', '.join(names)}): {e}")
        else:
            continue
        info = {"source": f"transformers:{cls_name}", "task": task, "overrides": applied, "config_build": how,
                "params": n, "input": describe(make(1), names)}
        return f"hf_{safe_id(model_type)}_{task}", Built(w, make, names, dyn, info)
    raise Skip(" ; ".join(errs)[:1500])


# --------------------------------------------------------------------------- torchvision

TV_MODULES = ["", "segmentation", "video", "detection", "optical_flow", "quantization"]
TV_SKIPPED = {"detection": "detection models take lists of images and return dicts (their backbones are "
                           "the classification models)",
              "optical_flow": "optical flow takes image pairs and returns a list of flow fields",
              "quantization": "quantized (int8, fbgemm) modules, not float models"}


def tv_list():
    import torchvision.models as M

    seen, out = set(), []
    for mod in TV_MODULES[1:] + [""]:
        names = M.list_models(module=getattr(M, mod)) if mod else M.list_models()
        for n in sorted(names):
            if n not in seen:
                seen.add(n)
                out.append({"id": f"tv_{safe_id(n)}", "family": "torchvision", "name": n, "module": mod or "classification"})
    return sorted(out, key=lambda a: a["id"])


def tv_build(arch, limits):
    import torchvision.models as M

    if arch["module"] in TV_SKIPPED:
        raise Skip(TV_SKIPPED[arch["module"]])
    fn = M.get_model_builder(arch["name"])
    base = {"weights": None, "num_classes": 10}
    if arch["module"] == "segmentation":
        base["weights_backbone"] = None
    tries = [dict(base, width_mult=0.25), base]
    model, errs, counts = None, [], []
    for kw in tries:
        try:
            try:
                with torch.device("meta"):
                    n = n_params(fn(**kw))
            except NotImplementedError:  # regnet copies a tensor in its constructor: counted on the CPU
                n = n_params(fn(**kw))
        except Exception as e:
            errs.append(first_line(e))
            continue
        counts.append(n)
        if "width_mult" in kw:
            continue  # kept only where it changes the model: some builders swallow unknown kwargs
        if len(counts) == 2 and counts[0] < counts[1]:
            kw, n = tries[0], counts[0]
        if n > limits["vision"]:
            raise Skip(f"{n} params > {limits['vision']} (smallest constructor arguments {kw})")
        seed()
        model = fn(**kw).eval()
        break
    if model is None:
        raise Skip("build: " + " | ".join(errs))
    w = wrap(model, ["x"])
    if arch["module"] == "video":
        shapes = [(3, 8, 64, 64), (3, 16, 112, 112)]
    else:
        shapes = [(3, s, s) for s in (64, 96, 128, 224, 299)]
    cands = [lambda i, s=s: (torch.randn([2, 3][i], *s),) for s in shapes]
    make, _ = try_inputs(w, cands)
    kw_used = {k: v for k, v in kw.items() if v is not None}
    info = {"source": f"torchvision:{arch['name']}", "task": arch["module"], "overrides": kw_used,
            "params": n_params(model), "input": describe(make(1), ["x"])}
    return arch["id"], Built(w, make, ["x"], {"x": [0]}, info)


# --------------------------------------------------------------------------- timm

def timm_family(name):
    return re.match(r"[a-z]+", name).group(0) if re.match(r"[a-z]+", name) else name


def timm_select(max_families=None):
    """Per family, the list_models() entry with the fewest parameters (num_classes=10, built on meta)."""
    import timm

    fams = {}
    for n in sorted(timm.list_models()):
        fams.setdefault(timm_family(n), []).append(n)
    out = []
    for fam in sorted(fams)[:max_families]:
        best = None
        for n in fams[fam]:
            try:
                with torch.device("meta"):
                    p = n_params(timm.create_model(n, pretrained=False, num_classes=10))
            except Exception:
                continue
            if best is None or p < best[1]:
                best = (n, p)
        if best:
            out.append({"id": f"timm_{safe_id(best[0])}", "family": "timm", "name": best[0], "timm_family": fam,
                        "candidates": len(fams[fam]), "meta_params": best[1]})
        else:
            out.append({"id": f"timm_{safe_id(fam)}", "family": "timm", "name": None, "timm_family": fam,
                        "candidates": len(fams[fam]), "meta_params": None})
    return out


TIMM_SHRINK = [{"depth": 2, "embed_dim": 64, "num_heads": 4}, {"depth": 2, "embed_dim": 64},
               {"depths": (1, 1, 1, 1), "embed_dim": 32}, {"depths": (1, 1, 1, 1)}]


def timm_shrink(name, cap):
    """Constructor arguments that bring a family's smallest variant under the cap (ViT-like models
    take depth/embed_dim/num_heads, staged ones depths), or Skip."""
    import timm

    for kw in TIMM_SHRINK:
        try:
            with torch.device("meta"):
                n = n_params(timm.create_model(name, pretrained=False, num_classes=10, **kw))
        except Exception:
            continue
        if n <= cap:
            return kw
    raise Skip(f"smallest of the family over {cap} params, and no shrinking argument brings it under")


def timm_build(arch, limits):
    import timm

    if arch["name"] is None:
        raise Skip("no variant of the family builds on meta")
    shrink = {}
    if (arch.get("meta_params") or 0) > limits["vision"]:
        shrink = timm_shrink(arch["name"], limits["vision"])
    model, used = None, {}
    for kw in (dict(shrink, img_size=64), shrink):
        try:
            seed()
            model = timm.create_model(arch["name"], pretrained=False, num_classes=10, **kw).eval()
            used = kw
            break
        except Exception as e:
            err = first_line(e)
    if model is None:
        raise Skip("build: " + err)
    w = wrap(model, ["x"])
    cfg_size = tuple((getattr(model, "pretrained_cfg", None) or {}).get("input_size", (3, 224, 224)))
    sizes = [(3, 64, 64)] if used else []
    sizes += [s for s in [(3, 64, 64), (3, 96, 96), (3, 128, 128), cfg_size] if s not in sizes]
    make, _ = try_inputs(w, [lambda i, s=s: (torch.randn([2, 3][i], *s),) for s in sizes])
    info = {"source": f"timm:{arch['name']}", "task": "image_classification",
            "overrides": dict(used, num_classes=10), "params": n_params(model), "input": describe(make(1), ["x"]),
            "timm_family": arch["timm_family"]}
    return arch["id"], Built(w, make, ["x"], {"x": [0]}, info)


def build(arch, limits):
    """(id, Built) or raises Skip / another exception (a failure of the build itself)."""
    if arch["family"] == "transformers":
        return hf_build(arch["name"], limits)
    if arch["family"] == "torchvision":
        return tv_build(arch, limits)
    return timm_build(arch, limits)
