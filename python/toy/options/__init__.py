"""toy-train's recipes as commands: each module owns its options
(add_options), their checks (check) and the wiring from them to a realized
recipe and its data (prepare -> recipe, source, config, weights file name)."""
from . import dpo, from_scratch, full, instruct, lora, orpo, vit_tiny, warm_start

COMMANDS = {
    "from-scratch": from_scratch,
    "lora": lora,
    "instruct": instruct,
    "dpo": dpo,
    "orpo": orpo,
    "warm-start": warm_start,
    "full": full,
    "vit-tiny": vit_tiny,
}
