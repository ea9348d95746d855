"""`python -m citeaudit.judge.llamaserver`: llama-cpp-python's server, with two changes.

1. llama.cpp's extra buffer types off (`--use_extra_bufts false`, the default here).
2. Log-probabilities of one-token answers without `logits_all` (`one_token_logprobs`).

Extra buffer types.

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

Log-probabilities. llama-cpp-python returns log-probabilities only from a model loaded with
`logits_all=True` (its server's default). Then every prompt token's logits are computed (the
output layer over a 151,936-token vocabulary, for each of a prompt's hundreds of tokens), stored,
turned into log-probabilities row by row, and the vocabulary is sorted in pure Python, for each
request; the judge needs only the first answer token's. Profiled on the judge's requests to the
local Qwen model on 2 cores, that work outside the one row needed took about half of each
request's time. `one_token_logprobs` wraps `Llama.generate` to keep the logits of each sampled
token (llama.cpp's last output row, which a model loaded with `logits_all=False` still computes)
and `Llama.create_completion` to build, for a request with `max_tokens=1` and `logprobs=k`, the
same `logprobs` block llama-cpp-python builds (the library's own `logits_to_logprobs`, the same
order and token strings) from that row alone. Any other request asking for log-probabilities of a
model loaded without `logits_all` is refused with a ValueError that says so (the server answers
500), as llama-cpp-python itself refuses it.

Arguments: those of `python -m llama_cpp.server`, plus `--use_extra_bufts true|false` (default
`false`). `localmodel.start_server` always passes it, and `--logits_all false` unless asked for the
stock behaviour (`tools/bench_local_judge.py` compares the two).
"""

from __future__ import annotations

import argparse
import inspect
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


def one_token_logprobs() -> None:
    """Let models loaded with `logits_all=False` answer `max_tokens=1, logprobs=k` completions, from
    the sampled token's logits row alone (see the module docstring). Idempotent."""
    import llama_cpp
    import numpy as np
    from llama_cpp import Llama

    if getattr(Llama.create_completion, "citeaudit_one_token_logprobs", False):
        return
    stock_generate, stock_completion = Llama.generate, Llama.create_completion
    signature = inspect.signature(stock_completion)

    def generate(self: Any, *args: Any, **kwargs: Any) -> Any:
        # only while `create_completion` below asks (`_citeaudit_steps` is a list): the first token
        # and the logits row it was sampled from (-1: llama.cpp's last output row)
        steps = getattr(self, "_citeaudit_steps", None)
        it = stock_generate(self, *args, **kwargs)
        sent = None
        try:
            while True:
                token = it.send(sent)
                if steps is not None and not steps:
                    row = np.ctypeslib.as_array(self._ctx.get_logits_ith(-1), shape=(self._n_vocab,))
                    steps.append((token, row.copy()))
                sent = yield token
        except StopIteration:
            return

    def create_completion(self: Any, *args: Any, **kwargs: Any) -> Any:
        call = signature.bind(self, *args, **kwargs)
        call.apply_defaults()
        a = call.arguments
        k = a["logprobs"]
        if k is None or self._logits_all:
            return stock_completion(self, *args, **kwargs)
        if a["max_tokens"] != 1 or a["stream"] or a["echo"]:
            raise ValueError("this server (citeaudit.judge.llamaserver, logits_all=False) returns log-probabilities "
                             "only for one-token answers: max_tokens=1, no stream, no echo")
        a["logprobs"] = None
        steps: list[tuple[int, Any]] = []
        self._citeaudit_steps = steps
        try:
            completion: Any = stock_completion(*call.args, **call.kwargs)  # a dict: not a stream
        finally:
            self._citeaudit_steps = None
        # the answer token (none when the model ended at once: llama-cpp-python leaves the lists empty)
        kept = [(token, row) for token, row in steps if not llama_cpp.llama_vocab_is_eog(self._model.vocab, token)]
        prompt = a["prompt"]
        block: dict[str, list] = {"tokens": [], "text_offset": [], "token_logprobs": [], "top_logprobs": []}
        for token, row in kept:
            logprobs = Llama.logits_to_logprobs(row)
            # sorted(zip(logprobs, range(n)), reverse=True)'s order: by value, then by index, both descending
            order = np.lexsort((np.arange(len(logprobs)), logprobs))[::-1][:k]
            text = self.detokenize([token], prev_tokens=[]).decode("utf-8", errors="ignore")
            top = {self.detokenize([int(i)], prev_tokens=[]).decode("utf-8", errors="ignore"): logprobs[i]
                   for i in order}
            top.update({text: logprobs[int(token)]})
            block["tokens"].append(text)
            block["text_offset"].append(len(prompt))
            block["token_logprobs"].append(logprobs[int(token)])
            block["top_logprobs"].append(top)
        completion["choices"][0]["logprobs"] = block
        return completion

    create_completion.citeaudit_one_token_logprobs = True  # type: ignore[attr-defined]
    Llama.generate = generate  # type: ignore[method-assign]
    Llama.create_completion = create_completion  # type: ignore[method-assign]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--use_extra_bufts", choices=("true", "false"), default="false")
    ours, rest = parser.parse_known_args(argv)
    if ours.use_extra_bufts == "false":
        disable_extra_bufts()
    one_token_logprobs()
    print(f"citeaudit.judge.llamaserver: use_extra_bufts={ours.use_extra_bufts}", file=sys.stderr, flush=True)

    from llama_cpp.server.__main__ import main as serve

    sys.argv = ["python -m llama_cpp.server", *rest]
    serve()


if __name__ == "__main__":
    main()
