"""An mkdocs plugin that embeds the reference of a module's tools in a page.

Enable it in `mkdocs.yml`:

```yaml
plugins:
  - toolkit-tools
```

then write, on a line of its own in any page:

```markdown
::: toolkit-tools mypkg.server
```

The line is replaced by the Markdown reference of the target's tools (TARGET as for the `toolkit` command,
found from the directory of `mkdocs.yml`). Options go on indented lines below it:

```markdown
::: toolkit-tools examples/notes.py
    heading_level: 3
```

This module imports mkdocs, which comes with the `docs` extra; mkdocs loads it through the `mkdocs.plugins`
entry point `toolkit-tools`, and neither `import toolkit` nor `import toolkit.docs` imports it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
from mkdocs.config import config_options
from mkdocs.config.base import Config
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

from toolkit import Client, Server
from toolkit._server import definitions_only
from toolkit._target import load_server

from ._reference import render_markdown

__all__ = ["ToolsPlugin"]

_BLOCK = re.compile(r"^::: toolkit-tools[ \t]+(?P<target>\S+)[ \t]*\n(?P<options>(?:[ \t]+\S[^\n]*\n)*)", re.MULTILINE)
_OPTIONS = {"heading_level"}
_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})[^\n]*\n.*?^[ \t]*(?P=fence)[ \t]*\n", re.MULTILINE | re.DOTALL)


class ToolsConfig(Config):  # type: ignore[no-untyped-call]  # mkdocs' Config.__init_subclass__ is untyped
    """Options of the `toolkit-tools` plugin in `mkdocs.yml`."""

    heading_level = config_options.Type(int, default=2)
    """The heading level of each tool (default 2); a block can set its own."""


class ToolsPlugin(BasePlugin[ToolsConfig]):  # type: ignore[no-untyped-call]
    """Replaces each `::: toolkit-tools TARGET` block with the reference of TARGET's tools."""

    def on_page_markdown(self, markdown: str, /, *, page: Page, config: MkDocsConfig, files: Files) -> str:
        base = Path(config.config_file_path).parent if config.config_file_path else Path.cwd()
        text = markdown + "\n"
        out: list[str] = []
        done = 0
        # Inside fenced code blocks a `::: toolkit-tools` line is an example to show, not a block to render.
        for fence in [*_FENCE.finditer(text), None]:
            end = fence.start() if fence is not None else len(text)
            out.append(_BLOCK.sub(lambda match: self._render(match, base, page), text[done:end]))
            if fence is not None:
                out.append(fence.group())
                done = fence.end()
        return "".join(out)[:-1]

    def _render(self, match: re.Match[str], base: Path, page: Page) -> str:
        options = _options(match["options"], page)
        level = int(options.get("heading_level", self.config.heading_level))
        try:
            server = load_server(match["target"], base=base)
            tools = _list_tools(server)
        except Exception as exc:
            raise PluginError(f"{page.file.src_uri}: toolkit-tools {match['target']}: {exc}") from exc
        return render_markdown(tools, title=None, heading_level=level, local=server.tools)


def _options(text: str, page: Page) -> dict[str, str]:
    options: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition(":")
        if not sep or key.strip() not in _OPTIONS:
            raise PluginError(f"{page.file.src_uri}: unknown toolkit-tools option {line.strip()!r}")
        options[key.strip()] = value.strip()
    return options


def _list_tools(server: Server) -> list[dict[str, Any]]:
    async def fetch() -> list[dict[str, Any]]:
        # The handshake era is what most clients see, and what `toolkit docs` shows by default.
        async with Client(server, protocol="handshake", lifespan=definitions_only) as client:
            tools = await client.list_tools()
        return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]

    return anyio.run(fetch)
