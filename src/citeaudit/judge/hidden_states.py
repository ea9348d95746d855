"""The judge model's hidden state at the end of its question: what a probe reads (issue 37).

A probe is a linear model on the hidden state (the final layer, after its norm: llama.cpp's
embeddings output with last-token pooling) at the last token of the three-way question, the text
`choice` sends (prompt `relation-v2`), formatted by the model's own chat template up to the point
where the model would answer. That position is where the model's reading of the relation is about
to become an answer token; studies of truthfulness probes read the same place.

Other layers (issue 55) are read in the same forward pass: llama.cpp's evaluation callback
(`llama_context_params.cb_eval`) is asked for the residual stream's output of chosen blocks
(llama.cpp's tensors `l_out-<block>`, 0-based: `LAYERS`) and copies their last token's column
(`LayerTap`). The final layer keeps its name `last` (after the output norm, the embeddings output).

A vector is an answer like any other: the `Judge` asks for it through the call cache (its request:
the model, the question's messages, the parameter `hidden_state` naming the layer, the prompt
version), so it is recorded (as float16: 1,536 numbers in 4 KB of base64), replayed offline and
keyed like every answer; each layer is a request of its own. Reading one needs llama-cpp-python
and the local model, loaded once per process (`read_vectors`, `HiddenStates`); replaying needs
neither. The probe that reads it is `ProbeWeights`, fitted by `calibrate.probe` and bound to the
model file's SHA-256, the prompt version and the layer.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import functools
import json
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import numpy as np
from pydantic import (
    AllowInfNan,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.types import Strict

from citeaudit import strictjson
from citeaudit.errors import InputError, JudgeError
from citeaudit.sources.reading import read_bounded
from citeaudit.stores import atomic_write_text

if TYPE_CHECKING:
    from collections.abc import Mapping

    from openai.types.chat import ChatCompletionMessageParam

    from citeaudit.judge.localmodel import LocalModel

CLASSES = ("supports", "contradicts", "says_nothing")  # what a probe gives the probabilities of
FINAL = "last"  # the final layer after its norm: llama.cpp's embeddings output


def block_layer(block: int) -> str:
    """The name of block `block`'s output (0-based), as llama.cpp names the tensor and a request names
    the layer it reads: `l_out-<block>` (the residual stream after that block, before any norm)."""
    return f"l_out-{block}"


# Qwen2.5-Coder-1.5B has 28 blocks; the middle ones carry the most linearly readable truth signal in
# the probing literature, so a handful around the middle and the upper half are read beside the final
LAYERS = (FINAL, *(block_layer(b) for b in (8, 12, 14, 16, 18, 20, 22, 24)))


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


def read_vector(local: LocalModel, messages: list[ChatCompletionMessageParam],
                models: Path | None = None) -> tuple[np.ndarray, int]:
    """The final layer's hidden state at the end of `messages` and the prompt's token count, from
    `local` loaded once per process (llama-cpp-python; one read at a time; `models`:
    `localmodel.model_path`'s folder)."""
    vectors, tokens = read_vectors(local, messages, (FINAL,), models)
    return vectors[FINAL], tokens


def read_vectors(local: LocalModel, messages: list[ChatCompletionMessageParam],
                 layers: Sequence[str], models: Path | None = None) -> tuple[dict[str, np.ndarray], int]:
    """The hidden states of `layers` (`FINAL`, `block_layer(b)`) at the end of `messages`, all from
    one forward pass, and the prompt's token count (`HiddenStates.vectors`)."""
    with _LOADING:
        states = _load(local, models=models)
        return states.vectors(states.text(messages), layers)


def load(local: LocalModel, n_threads: int | None = None, models: Path | None = None) -> HiddenStates:
    """`local` loaded for its hidden states, once per process, with `n_threads` (default: one a
    core) when this loads it: a run that shares its cores with others (`tools/probe_vectors.py`
    under `nice`) reads faster with one thread, as ggml's threads wait for each other by spinning."""
    with _LOADING:
        return _load(local, n_threads, models)


def _load(local: LocalModel, n_threads: int | None = None, models: Path | None = None) -> HiddenStates:
    from citeaudit.judge.localmodel import model_path

    if local.key not in _LOADED:
        _LOADED[local.key] = HiddenStates(model_path(local.key, folder=models), n_threads=n_threads or os.cpu_count(),
                                          n_ctx=local.n_ctx)
    return _LOADED[local.key]


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


def probe_file(model: str, folders: Sequence[Path]) -> Path | None:
    """The probe file in force for `model`: that of the first of `folders` (the user cache before
    the shipped one) that holds one, or None."""
    return next((path for path in (probe_weights_path(model, folder) for folder in folders) if path.is_file()), None)


def probe_weights(local: LocalModel, prompt_version: str, layer: str, folders: Sequence[Path]) -> ProbeWeights:
    """The probe of `local` for this prompt version and layer in the first of `folders` (a judge's
    cache folders: the user cache's, a refit, before the shipped one, the last); `InputError` (a
    row error) when none is there or it is another's."""
    path = probe_file(local.name, folders) or probe_weights_path(local.name, folders[-1])
    stamp = path.stat().st_mtime_ns if path.is_file() else 0
    return _load_weights(str(path), stamp, local.sha256, prompt_version, layer, folders[-1])


def refit_advice(path: str | Path, shipped: Path | None = None) -> str:
    """How to replace the probe at `path`: `tools/bench_probe.py --save` writes the probe of the
    shipped cache folder (`shipped`, when known), which a probe elsewhere (the user cache's, read
    first) would still hide."""
    if shipped is None:
        return "fit it again with `python tools/bench_probe.py --save`"
    written = shipped / "calibration" / Path(path).name
    advice = f"fit it again with `python tools/bench_probe.py --save` (it writes {written})"
    if Path(path).resolve() != written.resolve():
        advice += f", and delete {path}, which is read before it"
    return advice


@functools.lru_cache(maxsize=8)
def _load_weights(path: str, stamp: int, sha256: str, prompt_version: str, layer: str,
                  shipped: Path) -> ProbeWeights:
    return ProbeWeights.load(path, sha256, prompt_version, layer, shipped)  # `stamp`: a rewritten file is read again


class LayerTap:
    """llama.cpp's evaluation callback (`ggml_backend_sched_eval_callback`, set as the context's
    `cb_eval`) that copies the last column of the tensors named in `wanted` as they are computed.

    The scheduler asks (`ask` true) about each node of the graph in turn; a node we want is computed
    and then shown (`ask` false), when its data is in host memory (the CPU backend). A tensor is read
    through ggml's exported accessors (name, element and row counts, bytes, contiguity, data), so no
    copy of `struct ggml_tensor`'s layout is needed: an `l_out-<block>` tensor is float32, contiguous,
    `n_embd` numbers per token, one column per output token, the prompt's last token last.
    An error inside the callback (which C cannot raise) stops the pass (`False`) and is kept in
    `error` for `vectors` to raise.
    """

    def __init__(self, n_embd: int) -> None:
        import ctypes

        import llama_cpp
        from llama_cpp._ctypes_extensions import load_shared_library

        ggml = load_shared_library("ggml-base", Path(llama_cpp.__file__).parent / "lib")
        for name, restype in (("ggml_get_name", ctypes.c_char_p), ("ggml_nelements", ctypes.c_int64),
                              ("ggml_nrows", ctypes.c_int64), ("ggml_nbytes", ctypes.c_size_t),
                              ("ggml_is_contiguous", ctypes.c_bool), ("ggml_get_data", ctypes.c_void_p)):
            getattr(ggml, name).argtypes, getattr(ggml, name).restype = [ctypes.c_void_p], restype
        self._ggml, self._ctypes, self.n_embd = ggml, ctypes, n_embd
        self.wanted: frozenset[str] = frozenset()
        self.columns: dict[str, np.ndarray] = {}
        self.error: str | None = None
        self.callback = llama_cpp.ggml_backend_sched_eval_callback(self._observe)  # kept: C holds a pointer

    def _observe(self, tensor: int, ask: bool, _user: int) -> bool:
        try:
            name = (self._ggml.ggml_get_name(tensor) or b"").decode("utf-8", "replace")
            if ask:
                return name in self.wanted
            if name in self.wanted:
                self.columns[name] = self._last_column(tensor, name)
            return True
        except Exception as exc:  # a C callback cannot raise: stop the pass, say why afterwards
            self.error = f"{type(exc).__name__}: {exc}"
            return False

    def _last_column(self, tensor: int, name: str) -> np.ndarray:
        ggml, n = self._ggml, self.n_embd
        elements, rows = ggml.ggml_nelements(tensor), ggml.ggml_nrows(tensor)
        if not rows or elements // rows != n or ggml.ggml_nbytes(tensor) != 4 * elements \
                or not ggml.ggml_is_contiguous(tensor):
            raise ValueError(f"tensor {name} is not {n} float32 numbers a token ({elements} numbers in {rows} "
                             f"columns, {ggml.ggml_nbytes(tensor)} bytes)")
        data = self._ctypes.cast(ggml.ggml_get_data(tensor), self._ctypes.POINTER(self._ctypes.c_float))
        return np.ctypeslib.as_array(data, shape=(elements,))[elements - n:].copy()


class HiddenStates:
    """The local model loaded for its hidden states (llama-cpp-python, last-token pooling), with its
    chat template: `text` formats a question as the judge's server would, `vectors` reads the
    hidden states of the final layer and of chosen blocks at its last token, in one pass."""

    def __init__(self, model_path: Path, n_threads: int | None = None, n_ctx: int = 4096) -> None:
        import llama_cpp
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        from citeaudit.judge.llamaserver import disable_extra_bufts

        disable_extra_bufts()
        self._lib = llama_cpp
        # the whole prompt in one batch: llama-cpp-python's `embed` cuts a text at n_batch tokens
        self.llm = llama_cpp.Llama(str(model_path), embedding=True, pooling_type=llama_cpp.LLAMA_POOLING_TYPE_LAST,
                                   n_ctx=n_ctx, n_batch=n_ctx, n_ubatch=n_ctx, n_threads=n_threads, verbose=False)
        # the evaluation callback is a context parameter: the context Llama made is replaced by one
        # with the tap (freed first; freeing a context twice is a no-op in llama-cpp-python)
        from llama_cpp._internals import LlamaContext

        self.tap = LayerTap(self.llm.n_embd())
        self.llm._ctx.close()
        self.llm.context_params.cb_eval = self.tap.callback
        self.llm._ctx = self.llm._stack.enter_context(contextlib.closing(
            LlamaContext(model=self.llm._model, params=self.llm.context_params, verbose=False)))
        meta: Mapping[str, str] = self.llm.metadata
        self._format = Jinja2ChatFormatter(template=meta["tokenizer.chat_template"], eos_token="<|im_end|>",
                                           bos_token="<|endoftext|>", add_generation_prompt=True)

    def text(self, messages: list[ChatCompletionMessageParam]) -> str:
        """`messages` in the model's chat template, ending where the assistant's answer begins."""
        return str(self._format(messages=cast(Any, messages)).prompt)  # llama_cpp's own TypedDicts

    def vector(self, text: str) -> tuple[np.ndarray, int]:
        """The final layer's hidden state at the last token of `text`, and how many tokens `text` is."""
        vectors, tokens = self.vectors(text, (FINAL,))
        return vectors[FINAL], tokens

    def vectors(self, text: str, layers: Sequence[str] = (FINAL,),
                taps: Sequence[str] = ()) -> tuple[dict[str, np.ndarray], int]:
        """The hidden states at the last token of `text` of each of `layers` (`FINAL`: the embeddings
        output; a block's `l_out-<block>`; `taps`: any other of llama.cpp's tensor names, read as a
        block's output is), all from one forward pass; and how many tokens `text` is (special
        tokens parsed, as the chat template writes them; `embed` would read them as plain text).
        `ValueError` for a prompt longer than the context or a layer the graph does not compute."""
        llm = self.llm
        tokens = llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)
        if len(tokens) > llm.n_ctx():
            raise ValueError(f"a prompt of {len(tokens)} tokens does not fit the context of {llm.n_ctx()}")
        tapped = frozenset(layer for layer in (*layers, *taps) if layer != FINAL)
        tap = self.tap
        tap.wanted, tap.columns, tap.error = tapped, {}, None
        try:
            llm._batch.reset()
            llm._ctx.kv_cache_clear()
            llm._batch.add_sequence(tokens, 0, True)
            llm._ctx.decode(llm._batch)
        except Exception as exc:
            raise ValueError(f"reading the hidden states failed ({tap.error or exc})") from None
        finally:
            tap.wanted = frozenset()
        if tap.error:
            raise ValueError(f"reading the hidden states failed ({tap.error})")
        missing = sorted(tapped - tap.columns.keys())
        if missing:
            raise ValueError(f"the model's graph computed no tensor {', '.join(missing)}")
        out = dict(tap.columns)
        if FINAL in layers:
            pointer = self._lib.llama_get_embeddings_seq(llm._ctx.ctx, 0)
            out[FINAL] = np.array(pointer[:llm.n_embd()], dtype=np.float32)
        return out, len(tokens)


def _pack(values: np.ndarray) -> str:
    return base64.b64encode(np.asarray(values, dtype="<f4").tobytes()).decode("ascii")


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
    path: str = field(default="", compare=False)  # the file it was read from ("": fitted in this process)

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
    def read(cls, path: str | Path, shipped: Path | None = None) -> ProbeWeights:
        """The probe saved at `path`, checked where it enters (`ProbeFile`: finite numbers, a scale
        above 0, every array of the file's `dimensions`); anything else is an `InputError` naming
        the file, the field and the fix (`refit_advice`, with the shipped cache folder `shipped`)."""
        path = Path(path)
        fix = refit_advice(path, shipped)
        try:
            text = read_bounded(path, PROBE_FILE_BYTES, "probe file").decode("utf-8")
        except FileNotFoundError:
            raise InputError(f"{path}: no probe file there; fit one with "
                             "`python tools/bench_probe.py --save`") from None
        except UnicodeDecodeError:
            raise InputError(f"{path} is not a probe file (not UTF-8 text); {fix}") from None
        try:
            checked = ProbeFile.model_validate(strictjson.loads(text))
        except ValidationError as exc:
            problems = "; ".join(f"`{'.'.join(map(str, e['loc'])) or 'the file'}`: {e['msg']}" for e in exc.errors())
            raise InputError(f"{path} is not a probe file ({problems}); {fix}") from None
        except ValueError as exc:
            raise InputError(f"{path} is not a probe file (not JSON: {exc}); {fix}") from None
        return cls(checked.model_sha256, checked.prompt_version, checked.layer, checked.c, checked.arrays["mean"],
                   checked.arrays["scale"], checked.arrays["coef"], np.array(checked.intercept, dtype=float),
                   dict(checked.fitted_on), str(path))

    @classmethod
    def load(cls, path: str | Path, model_sha256: str, prompt_version: str, layer: str,
             shipped: Path | None = None) -> ProbeWeights:
        """The probe saved at `path` (`read`), refused (`InputError`) when it was fitted on vectors
        of another model file, prompt version or layer, or is not a probe file."""
        weights = cls.read(path, shipped)
        wanted = {"model file SHA-256": model_sha256, "prompt version": prompt_version, "layer": layer}
        held = {"model file SHA-256": weights.model_sha256, "prompt version": weights.prompt_version,
                "layer": weights.layer}
        wrong = [f"{what} {held[what]!r}, not {wanted[what]!r}" for what in wanted if held[what] != wanted[what]]
        if wrong:
            raise InputError(f"{path} is a probe of other vectors ({'; '.join(wrong)}): a probe reads only the "
                             "hidden states it was fitted on. Fit one for this judge with "
                             "`python tools/bench_probe.py --save`.")
        return weights


PROBE_FILE_BYTES = 64_000_000  # a probe of 1,536 dimensions is 41 KB; one of 8,192 about 250 KB
FiniteFloat = Annotated[float, Strict(), AllowInfNan(False)]


class ProbeFile(BaseModel):
    """What a probe file must hold before it maps a hidden state: the classes in `CLASSES`' order, a
    penalty above 0, `dimensions` (1 or more) numbers of mean and scale (finite; scale above 0) and
    3 × `dimensions` coefficients, three finite intercepts; `arrays` holds the first three decoded."""

    model_config = ConfigDict(extra="forbid")

    model_sha256: StrictStr
    prompt_version: StrictStr
    layer: StrictStr
    c: Annotated[FiniteFloat, Field(gt=0.0)]
    classes: list[StrictStr]
    dimensions: Annotated[StrictInt, Field(ge=1, le=1_000_000)]
    fitted_on: dict[StrictStr, Annotated[StrictInt, Field(ge=0)]] = {}
    mean: StrictStr
    scale: StrictStr
    coef: StrictStr
    intercept: Annotated[list[FiniteFloat], Field(min_length=len(CLASSES), max_length=len(CLASSES))]
    _arrays: dict[str, np.ndarray] = PrivateAttr(default_factory=dict)  # filled by `_decoded`

    @property
    def arrays(self) -> dict[str, np.ndarray]:
        """`mean`, `scale` and `coef` decoded (float64, in their shapes)."""
        return self._arrays

    @field_validator("classes")
    @classmethod
    def _classes(cls, value: list[str]) -> list[str]:
        if value != list(CLASSES):
            raise ValueError(f"classes {value}, not {list(CLASSES)}")
        return value

    @model_validator(mode="after")
    def _decoded(self) -> ProbeFile:
        d = self.dimensions
        shapes = {"mean": (d,), "scale": (d,), "coef": (len(CLASSES), d)}
        for name, shape in shapes.items():
            try:
                raw = base64.b64decode(getattr(self, name), validate=True)
            except ValueError:
                raise ValueError(f"`{name}` is not base64") from None
            size = int(np.prod(shape))
            if len(raw) != 4 * size:
                raise ValueError(f"`{name}` holds {len(raw) // 4} numbers, not {size} ({' × '.join(map(str, shape))})")
            values = np.frombuffer(raw, dtype="<f4").astype(np.float64).reshape(shape)
            if not np.isfinite(values).all():
                raise ValueError(f"`{name}` holds numbers that are not finite (NaN or infinite)")
            self._arrays[name] = values
        if not (self._arrays["scale"] > 0).all():
            raise ValueError("`scale` holds a number that is not above 0 (a standardization divides by it)")
        return self
