"""The contents manager of `make lab`'s server (notebooks/jupyter_server_config.json): jupytext's,
so each percent script `notebooks/NN_name.py` opens as a notebook, over the server's default one.

It also gives a notebook it opens the `language_info` its kernel (this environment's ipykernel)
reports. JupyterLab writes the kernel's `language_info` into a notebook's metadata when the kernel
connects, and a percent script keeps none, so without it every notebook was marked unsaved right
after opening. Saving is unchanged: jupytext leaves `language_info` out of the script.

Imported only by that server: it needs `make lab`'s requirements (jupytext, ipykernel)."""

from __future__ import annotations

from typing import Any

from ipykernel.ipkernel import IPythonKernel
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from jupytext.async_contentsmanager import build_async_jupytext_contents_manager_class

_Jupytext: Any = build_async_jupytext_contents_manager_class(AsyncLargeFileManager)


class NotebookContents(_Jupytext):
    """jupytext's contents manager; a notebook it returns carries its kernel's `language_info`."""

    async def get(self, path: str, content: bool = True, type: str | None = None,
                  format: str | None = None, **kwargs: Any) -> dict:
        model = await super().get(path, content=content, type=type, format=format, **kwargs)
        if model.get("type") == "notebook" and model.get("content") is not None:
            model["content"].metadata.setdefault("language_info", dict(IPythonKernel.language_info))
        return model
