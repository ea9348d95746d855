"""`python -m citeaudit.llamaserver`: llama-cpp-python's server with llama.cpp's extra buffer types off.

llama.cpp may load weights into "extra" buffer types (CPU_REPACK, AMX) whose kernels are chosen
from what the CPU advertises. A CPU that advertises AMX inside a VM that does not enable it
crashes the server on its first request (a general protection fault at the first `ldtilecfg`).
Loading the model with `use_extra_bufts = false` avoids it, at some speed on CPUs where repacking
works.

llama-cpp-python 0.3.36 has no setting for it: the field exists only in the C struct
`llama_model_params`; neither `Llama(...)`, the server's `ModelSettings`, its command line nor
its `--config_file` reach it. `Llama.__init__` takes its model parameters from
`llama_cpp.llama_cpp.llama_model_default_params()`, so this module wraps that function to return
defaults with the field cleared, then runs the stock server in the same process.

Arguments: those of `python -m llama_cpp.server`, plus `--use_extra_bufts true|false` (default
`false`). `localmodel.start_server` always passes it.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def disable_extra_bufts() -> None:
    """Make every model llama-cpp-python loads from now on, in this process, skip extra buffer types."""
    import llama_cpp.llama_cpp as lib

    default = lib.llama_model_default_params
    if getattr(default, "citeaudit_no_extra_bufts", False):
        return

    def model_default_params() -> Any:
        params = default()
        params.use_extra_bufts = False
        return params

    model_default_params.citeaudit_no_extra_bufts = True  # type: ignore[attr-defined]
    lib.llama_model_default_params = model_default_params


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--use_extra_bufts", choices=("true", "false"), default="false")
    ours, rest = parser.parse_known_args(argv)
    if ours.use_extra_bufts == "false":
        disable_extra_bufts()
    print(f"citeaudit.llamaserver: use_extra_bufts={ours.use_extra_bufts}", file=sys.stderr, flush=True)

    from llama_cpp.server.__main__ import main as serve

    sys.argv = ["python -m llama_cpp.server", *rest]
    serve()


if __name__ == "__main__":
    main()
