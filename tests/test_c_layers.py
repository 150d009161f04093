"""tinynn's C layers (scripts/check_c_layers.py): no call or include circle,
every call and every include downward. Run here so that CI's pytest fails
on a new one, and on a made-up tree to see the check fail where it should."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "check_c_layers.py"


def run_check(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def write(root, path, text):
    file = root / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text)


def test_tinynn_calls_and_includes_only_downward():
    result = run_check()
    assert result.returncode == 0, result.stdout
    assert "no cycles, every call and include downward" in result.stdout


def test_a_layer_below_session_may_not_include_a_session_header(tmp_path):
    # the upward reading tinynn had until issue 66: models/ and graph/
    # reading the session's parts through session/session.h
    write(tmp_path, "tinynn/tinynn.h", "typedef struct tnn_session tnn_session;\n")
    write(tmp_path, "tinynn/session/session.h", '#include "session/train.h"\nstruct tnn_session { int n; };\n')
    write(tmp_path, "tinynn/session/train.h", "struct tnn_trainer { int built; };\n")
    write(tmp_path, "tinynn/models/model.c", '#include "session/session.h"\nint tnn_model_n(void) { return 0; }\n')
    write(tmp_path, "tinynn/graph/graph.h", '#include "session/train.h"\n')
    result = run_check(tmp_path)
    assert result.returncode == 1, result.stdout
    assert (
        "tinynn/models/model.c includes tinynn/session/session.h: tinynn/models may include only the folders below it"
        in result.stdout
    )
    assert (
        "tinynn/graph/graph.h includes tinynn/session/train.h: tinynn/graph may include only the folders below it"
        in result.stdout
    )


def test_the_check_names_an_upward_call(tmp_path):
    write(tmp_path, "tinynn/tinynn.h", "")
    write(tmp_path, "tinynn/session/train.c", "int tnn_trainer_step(void) { return 1; }\n")
    # (its declaration would be in a header: the check reads the .c files' calls)
    write(tmp_path, "tinynn/graph/adamw.c", "int tnn_adamw(void) { return tnn_trainer_step(); }\n")
    result = run_check(tmp_path)
    assert result.returncode == 1, result.stdout
    assert "tinynn/graph/adamw.c calls up into tinynn/session/train.c (tnn_trainer_step)" in result.stdout
