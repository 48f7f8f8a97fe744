#!/usr/bin/env python3
"""Export transformers architectures the zoo never picked, the zoo's way (issue 25).

    cd scripts && python3 gen_unpicked.py OUTDIR [--only=NAME,NAME]

samples/unpicked/torch-2.15/ holds two of them (`--only=gemma,bloom`), for tests/unpicked.rs.

Same files per model as scripts/gen_zoo.py (`.pt2`, inputs and PyTorch's outputs at two bindings,
`expect.json` with the op multisets of `run_decompositions()` and Inductor's table), for decoder
families whose graphs call ops the zoo does not: `type_as` (Gemma's norms), `baddbmm` (BLOOM's
ALiBi, OPT), `detach`, `zeros`, `arange.start`. Tiny configs, seeded random weights, nothing
downloaded. A model that does not export is reported and skipped.
"""
import json
import sys
import traceback

import gen_zoo as z

TINY = dict(vocab_size=96, max_position_embeddings=64)
DEC = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2)


def cfg_model(cfg_name, model_name, wrap=z.HFEncoder, **kw):
    def build():
        import transformers

        cfg = getattr(transformers, cfg_name)(**kw)
        return wrap(getattr(transformers, model_name)(cfg))

    return build


MODELS = [
    ("gemma", "transformers GemmaModel (GQA 4/2, head_dim 8, 2 layers)", cfg_model("GemmaConfig", "GemmaModel", head_dim=8, **DEC, **TINY)),
    ("gemma2", "transformers Gemma2Model (GQA 4/2, head_dim 8, 2 layers)", cfg_model("Gemma2Config", "Gemma2Model", head_dim=8, **DEC, **TINY)),
    ("gemma3_text", "transformers Gemma3TextModel (GQA 4/2, head_dim 8, 2 layers)", cfg_model("Gemma3TextConfig", "Gemma3TextModel", head_dim=8, **DEC, **TINY)),
    ("mistral", "transformers MistralModel (GQA 4/2, 2 layers)", cfg_model("MistralConfig", "MistralModel", **DEC, **TINY)),
    ("phi3", "transformers Phi3Model (GQA 4/2, 2 layers)", cfg_model("Phi3Config", "Phi3Model", pad_token_id=0, **DEC, **TINY)),
    ("opt", "transformers OPTModel (2 layers, dim 32)", cfg_model("OPTConfig", "OPTModel", hidden_size=32, ffn_dim=64, num_hidden_layers=2, num_attention_heads=4, word_embed_proj_dim=32, pad_token_id=1, **TINY)),
    ("gpt_neox", "transformers GPTNeoXModel (2 layers, dim 32)", cfg_model("GPTNeoXConfig", "GPTNeoXModel", hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, **TINY)),
    ("falcon", "transformers FalconModel (2 layers, dim 32)", cfg_model("FalconConfig", "FalconModel", hidden_size=32, num_hidden_layers=2, num_attention_heads=4, vocab_size=96)),
    ("bloom", "transformers BloomModel (2 layers, dim 32, ALiBi)", cfg_model("BloomConfig", "BloomModel", hidden_size=32, n_layer=2, n_head=4, vocab_size=96)),
]


def main():
    only = [a.split("=", 1)[1].split(",") for a in sys.argv if a.startswith("--only=")]
    done, failed = [], []
    for name, source, build in MODELS:
        if only and name not in only[0]:
            continue
        inputs = lambda i: z.tokens([2, 3][i], [7, 12][i], 2)  # noqa: E731
        try:
            z.export_one(name, source, build, inputs, z.token_dyn())
            done.append(name)
        except Exception:
            failed.append(name)
            print(f"FAILED {name}", flush=True)
            traceback.print_exc(limit=3)
    with open(f"{z.OUT}/versions.json", "w") as f:
        json.dump({"torch": z.torch.__version__, "schema": z.schema_version(), "made_by": "scripts/gen_unpicked.py",
                   "models": done, "failed": failed}, f, indent=1)


if __name__ == "__main__":
    main()
