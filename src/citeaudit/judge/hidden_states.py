"""The judge model's hidden state at the end of its question: what a probe reads (issue 37).

A probe is a linear model on the hidden state (the final layer, after its norm: llama.cpp's
embeddings output with last-token pooling) at the last token of the three-way question, the text
`choice` sends (prompt `relation-v2`), formatted by the model's own chat template up to the point
where the model would answer. That position is where the model's reading of the relation is about
to become an answer token; studies of truthfulness probes read the same place.

A vector is an answer like any other: the `Judge` asks for it through the call cache (its request:
the model, the question's messages, the parameter `hidden_state` naming the layer, the prompt
version), so it is recorded (as float16: 1,536 numbers in 4 KB of base64), replayed offline and
keyed like every answer. Reading one needs llama-cpp-python and the local model, loaded once per
process (`read_vector`, `HiddenStates`); replaying needs neither. The probe that reads it is
`ProbeWeights`, fitted by `calibrate.probe` and bound to the model file's SHA-256, the prompt
version and the layer.
"""

from __future__ import annotations

import atexit
import base64
import functools
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from citeaudit.errors import InputError, JudgeError
from citeaudit.stores import atomic_write_text

if TYPE_CHECKING:
    from collections.abc import Mapping

    from openai.types.chat import ChatCompletionMessageParam

    from citeaudit.judge.localmodel import LocalModel

CLASSES = ("supports", "contradicts", "says_nothing")  # what a probe gives the probabilities of


def encode_vector(vector: np.ndarray) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f2").tobytes()).decode("ascii")


def decode_vector(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype="<f2").astype(np.float32)


def local_model(model: str) -> LocalModel:
    """The local model (`localmodel.MODELS`) a judge of `model` runs; only a local model's hidden
    states can be read (`JudgeError` otherwise, a row error that says so)."""
    from citeaudit.judge.localmodel import MODELS

    for local in MODELS.values():
        if local.name == model:
            return local
    names = ", ".join(m.name for m in MODELS.values())
    raise JudgeError(f"strategy probe reads the hidden states of a local model ({names}), not of {model!r}; "
                     "choose another strategy for this judge")


_LOADED: dict[str, HiddenStates] = {}
_LOADING = threading.Lock()


@atexit.register
def _close_loaded() -> None:
    """Free the loaded models while llama-cpp-python can still do it: left to the garbage collector
    at interpreter exit, a `Llama` is freed after its library's globals are gone, and prints an
    ignored AttributeError with its traceback (seen at the end of CI's test run)."""
    with _LOADING:
        for states in _LOADED.values():
            states.llm.close()
        _LOADED.clear()


def read_vector(local: LocalModel, messages: list[ChatCompletionMessageParam]) -> tuple[np.ndarray, int]:
    """The hidden state at the end of `messages` and the prompt's token count, from `local` loaded
    once per process (llama-cpp-python; one read at a time)."""
    from citeaudit.judge.localmodel import model_path

    with _LOADING:
        if local.key not in _LOADED:
            _LOADED[local.key] = HiddenStates(model_path(local.key), n_threads=os.cpu_count(), n_ctx=local.n_ctx)
        states = _LOADED[local.key]
        return states.vector(states.text(messages))


def recorded_vector(response: dict) -> np.ndarray:
    """The vector of a recorded hidden-state response; `JudgeError` when it is not one (a row error)."""
    try:
        vector = decode_vector(response["vector"])
    except (KeyError, TypeError, ValueError) as exc:
        raise JudgeError(f"a recorded hidden-state answer holds no readable vector ({exc})") from None
    if not len(vector) or not np.isfinite(vector).all():
        raise JudgeError(f"a recorded hidden-state vector of {len(vector)} numbers is empty or not finite")
    return vector


def probe_weights_path(model: str, folder: Path) -> Path:
    """`<folder>/calibration/<model>.probe-weights.json` (beside the model's calibrations)."""
    from citeaudit.judge.cache import recording_name

    return folder / "calibration" / f"{recording_name(model).removesuffix('.jsonl')}.probe-weights.json"


def probe_weights(local: LocalModel, prompt_version: str, layer: str) -> ProbeWeights:
    """The probe of `local` for this prompt version and layer: the user cache's (a refit) before
    the shipped one; `InputError` (a row error) when neither is there or it is another's."""
    from citeaudit.settings import environment as config

    paths = [probe_weights_path(local.name, folder) for folder in (config.user_cache_dir(), config.cache_dir())]
    path = next((p for p in paths if p.is_file()), paths[-1])
    stamp = path.stat().st_mtime_ns if path.is_file() else 0
    return _load_weights(str(path), stamp, local.sha256, prompt_version, layer)


@functools.lru_cache(maxsize=8)
def _load_weights(path: str, stamp: int, sha256: str, prompt_version: str, layer: str) -> ProbeWeights:
    return ProbeWeights.load(path, sha256, prompt_version, layer)  # `stamp`: a rewritten file is read again


class HiddenStates:
    """The local model loaded for its hidden states (llama-cpp-python, last-token pooling), with its
    chat template: `text` formats a question as the judge's server would, `vector` reads the
    hidden state at its last token."""

    def __init__(self, model_path: Path, n_threads: int | None = None, n_ctx: int = 4096) -> None:
        import llama_cpp
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        from citeaudit.judge.llamaserver import disable_extra_bufts

        disable_extra_bufts()
        self._lib = llama_cpp
        # the whole prompt in one batch: llama-cpp-python's `embed` cuts a text at n_batch tokens
        self.llm = llama_cpp.Llama(str(model_path), embedding=True, pooling_type=llama_cpp.LLAMA_POOLING_TYPE_LAST,
                                   n_ctx=n_ctx, n_batch=n_ctx, n_ubatch=n_ctx, n_threads=n_threads, verbose=False)
        meta: Mapping[str, str] = self.llm.metadata
        self._format = Jinja2ChatFormatter(template=meta["tokenizer.chat_template"], eos_token="<|im_end|>",
                                           bos_token="<|endoftext|>", add_generation_prompt=True)

    def text(self, messages: list[ChatCompletionMessageParam]) -> str:
        """`messages` in the model's chat template, ending where the assistant's answer begins."""
        return str(self._format(messages=cast(Any, messages)).prompt)  # llama_cpp's own TypedDicts

    def vector(self, text: str) -> tuple[np.ndarray, int]:
        """The final layer's hidden state at the last token of `text`, and how many tokens `text`
        is (special tokens parsed, as the chat template writes them; `embed` would read them as
        plain text)."""
        llm = self.llm
        tokens = llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)
        if len(tokens) > llm.n_ctx():
            raise ValueError(f"a prompt of {len(tokens)} tokens does not fit the context of {llm.n_ctx()}")
        llm._batch.reset()
        llm._ctx.kv_cache_clear()
        llm._batch.add_sequence(tokens, 0, True)
        llm._ctx.decode(llm._batch)
        pointer = self._lib.llama_get_embeddings_seq(llm._ctx.ctx, 0)
        return np.array(pointer[:llm.n_embd()], dtype=np.float32), len(tokens)


def _pack(values: np.ndarray) -> str:
    return base64.b64encode(np.asarray(values, dtype="<f4").tobytes()).decode("ascii")


def _unpack(text: str, shape: tuple[int, ...]) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype="<f4").astype(np.float64).reshape(shape)


@dataclass(frozen=True)
class ProbeWeights:
    """A fitted probe: z = (x − mean) / scale, P = softmax(coef · z + intercept) over `CLASSES`."""

    model_sha256: str
    prompt_version: str
    layer: str
    c: float
    mean: np.ndarray = field(repr=False)
    scale: np.ndarray = field(repr=False)
    coef: np.ndarray = field(repr=False)
    intercept: np.ndarray = field(repr=False)
    fitted_on: dict[str, int] = field(default_factory=dict)  # citations per domain

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        z = (np.atleast_2d(x) - self.mean) / self.scale
        logits = z @ self.coef.T + self.intercept
        logits -= logits.max(axis=1, keepdims=True)
        e = np.exp(logits)
        return e / e.sum(axis=1, keepdims=True)

    def to_json(self) -> str:
        d = len(self.mean)
        return json.dumps({
            "model_sha256": self.model_sha256, "prompt_version": self.prompt_version, "layer": self.layer,
            "c": self.c, "classes": list(CLASSES), "dimensions": d, "fitted_on": self.fitted_on,
            "mean": _pack(self.mean), "scale": _pack(self.scale), "coef": _pack(self.coef),
            "intercept": [float(v) for v in self.intercept],
        }, indent=1) + "\n"

    def save(self, path: str | Path) -> Path:
        return atomic_write_text(path, self.to_json())

    @classmethod
    def load(cls, path: str | Path, model_sha256: str, prompt_version: str, layer: str) -> ProbeWeights:
        """The probe saved at `path`, refused (`InputError`) when it was fitted on vectors of
        another model file, prompt version or layer, or is not a probe file."""
        path = Path(path)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            d = int(raw["dimensions"])
            if raw.get("classes") != list(CLASSES):
                raise ValueError(f"classes {raw.get('classes')}, not {list(CLASSES)}")
            weights = cls(str(raw["model_sha256"]), str(raw["prompt_version"]), str(raw["layer"]), float(raw["c"]),
                          _unpack(raw["mean"], (d,)), _unpack(raw["scale"], (d,)),
                          _unpack(raw["coef"], (len(CLASSES), d)), np.array(raw["intercept"], dtype=float),
                          {str(k): int(v) for k, v in raw.get("fitted_on", {}).items()})
        except FileNotFoundError:
            raise InputError(f"{path}: no probe file there; fit one with "
                             "`python tools/bench_probe.py --save`") from None
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
            raise InputError(f"{path} is not a probe file ({exc}); fit it again with "
                             "`python tools/bench_probe.py --save`") from None
        wanted = {"model file SHA-256": model_sha256, "prompt version": prompt_version, "layer": layer}
        held = {"model file SHA-256": weights.model_sha256, "prompt version": weights.prompt_version,
                "layer": weights.layer}
        wrong = [f"{what} {held[what]!r}, not {wanted[what]!r}" for what in wanted if held[what] != wanted[what]]
        if wrong:
            raise InputError(f"{path} is a probe of other vectors ({'; '.join(wrong)}): a probe reads only the "
                             "hidden states it was fitted on. Fit one for this judge with "
                             "`python tools/bench_probe.py --save`.")
        return weights
