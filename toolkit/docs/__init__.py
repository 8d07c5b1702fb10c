"""The reference of a server's tools: Markdown or JSON for people, provider function definitions for model APIs,
and an mkdocs plugin that embeds the Markdown in a site.

Everything here works on the wire form, the tool objects of a `tools/list` result as JSON, so it documents a
toolkit server and any other MCP server alike. Output is deterministic: the same tools give the same bytes, so
a generated file can be checked in and compared in CI (`toolkit docs --check`).

The mkdocs plugin, `toolkit-tools`, is `toolkit.docs._mkdocs`; mkdocs loads it through its entry point, and
importing `toolkit.docs` does not import mkdocs.
"""

from ._reference import badges, render_definitions, render_json, render_markdown
from ._schema_text import describe_type

__all__ = ["badges", "describe_type", "render_definitions", "render_json", "render_markdown"]

# The functions defined in private modules say they come from here, where users import them.
for _name in __all__:
    globals()[_name].__module__ = __name__
del _name
