"""`UI`: an MCP App's page, the `ui://` resource a tool names (`@tool(ui=UI(...))`), prepared once when it is defined.

MCP Apps is the extension `io.modelcontextprotocol/ui` (SEP-1865; specification/2026-01-26/apps.mdx in the repository
modelcontextprotocol/ext-apps). A host that speaks it reads the page with `resources/read` and renders it in a
sandboxed iframe beside the tool's result; the page talks to the host over postMessage JSON-RPC. Everything a server
sends about the page (its resource entry, its contents) is made here, at definition time: the server only hands it out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from toolkit._protocol.meta import UI_EXTENSION, UI_KEY, UI_MIME_TYPE

__all__ = [
    "APP_SDK_TAG",
    "CSP_KEYS",
    "PERMISSIONS",
    "UI",
    "Visibility",
    "app_sdk",
    "speaks_apps",
    "visibility_problems",
]

Visibility = Literal["model", "app"]
"""Who may call a tool (`_meta.ui.visibility`): the model (the agent), the app (the page), or both (the default)."""

#: The keys of `_meta.ui.csp` (McpUiResourceCsp), each a list of origins.
CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
#: The sandbox permissions a page may ask for (`_meta.ui.permissions`): Permission Policy features.
PERMISSIONS = ("camera", "microphone", "geolocation", "clipboardWrite")
#: The tag a page writes where the official App SDK goes: `UI` puts the vendored bundle there, inline.
APP_SDK_TAG = '<script src="toolkit:ext-apps"></script>'
_SDK_TAG = re.compile(r"""<script\s+src\s*=\s*["']toolkit:ext-apps["']\s*>\s*</script\s*>""", re.IGNORECASE)
# An origin: a scheme, then a host whose first label may be `*` (wildcard subdomains, McpUiResourceCsp), a port.
_ORIGIN = re.compile(r"^(https?|wss?)://(\*\.)?[A-Za-z0-9.-]+(:[0-9]{1,5})?/?$")
_ASSETS = Path(__file__).resolve().parent.parent / "_apps" / "vendor"


class UI:
    """An MCP App: the HTML page a host renders for a tool's results (the `ui://` resource its `_meta.ui` names).

    Give it to [`@tool(ui=...)`][toolkit.tool]; a server serves the page on `resources/list` and `resources/read` to
    clients that speak MCP Apps. Everything is checked and read once, here: a page in a file is read now (edit it
    and reload: `toolkit preview` and `toolkit dev` do), and a wrong option is an error now, not on a host.

    Args:
        uri: The resource's URI; must start with `ui://` (e.g. `ui://weather/dashboard`).
        html: The page: its HTML text, or a `pathlib.Path` of a file holding it (UTF-8). Where the page has the tag
            `<script src="toolkit:ext-apps"></script>`, the official App SDK (`@modelcontextprotocol/ext-apps`,
            vendored with toolkit) is put inline, as the global `McpApps` (`new McpApps.App(...)`).

    Keyword Args:
        csp: The origins the page may reach, by the spec's names: `connectDomains` (fetch, XHR, WebSocket),
            `resourceDomains` (scripts, styles, images, fonts, media), `frameDomains` (nested iframes),
            `baseUriDomains`. Hosts block everything else.
        permissions: The browser permissions the page asks for: any of `"camera"`, `"microphone"`,
            `"geolocation"`, `"clipboardWrite"` (hosts may refuse: detect the feature in the page).
        domain: A dedicated sandbox origin for the page, in the host's own format (see the host's documentation).
        prefers_border: Ask the host for a visible border and background (`True`) or none (`False`); left out,
            the host decides.
        name: The resource's name (default: the URI without `ui://`).
        description: What the page shows, for hosts that list resources.

    Raises:
        ValueError: a URI not starting with `ui://`, or an option the spec does not define (every problem at once).
        FileNotFoundError: `html` is a path to no file.
    """

    __slots__ = ("description", "html", "meta", "name", "path", "uri")

    def __init__(  # noqa: PLR0913 (the keywords are UI's documented API: the spec's fields, each once)
        self,
        uri: str,
        html: str | Path,
        *,
        csp: Mapping[str, Sequence[str]] | None = None,
        permissions: Sequence[str] | None = None,
        domain: str | None = None,
        prefers_border: bool | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> None:
        problems = _ui_problems(uri, csp, permissions, domain, prefers_border)
        if problems:
            raise ValueError(f"UI {uri!r}: " + "; ".join(problems))
        self.uri = uri
        """The resource's `ui://` URI."""
        self.path: Path | None = Path(html) if isinstance(html, Path) else None
        """The file the page was read from, or None for a page given as text."""
        self.html = _with_sdk(_read(html, uri) if isinstance(html, Path) else html)
        """The page's HTML, as `resources/read` sends it (the App SDK inline where the page asked for it)."""
        self.meta: dict[str, Any] = _ui_meta(csp, permissions, domain, prefers_border)
        """The resource's `_meta.ui` (CSP, permissions, domain, border), as the spec names its fields."""
        self.name = name if name is not None else uri.removeprefix("ui://")
        """The resource's name."""
        self.description = description
        """The resource's description, or None."""

    def __repr__(self) -> str:
        return f"UI({self.uri!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, UI):
            return NotImplemented
        return self.resource() == other.resource() and self.html == other.html

    def __hash__(self) -> int:
        return hash((self.uri, self.html))

    def resource(self) -> dict[str, Any]:
        """The resource as `resources/list` sends it (`Resource`): its `_meta.ui` too, so that a host can review the
        page's CSP before it reads it (the spec's "Metadata Location")."""
        entry: dict[str, Any] = {"uri": self.uri, "name": self.name, "mimeType": UI_MIME_TYPE}
        if self.description is not None:
            entry["description"] = self.description
        if self.meta:
            entry["_meta"] = {UI_KEY: self.meta}
        return entry

    def contents(self) -> dict[str, Any]:
        """The page as `resources/read` sends it (`TextResourceContents`), `_meta.ui` on the content item."""
        item: dict[str, Any] = {"uri": self.uri, "mimeType": UI_MIME_TYPE, "text": self.html}
        if self.meta:
            item["_meta"] = {UI_KEY: self.meta}
        return item


def speaks_apps(capabilities: Mapping[str, Any]) -> bool:
    """Whether a client's capabilities declare MCP Apps for HTML pages: `extensions["io.modelcontextprotocol/ui"]`
    with `text/html;profile=mcp-app` among its `mimeTypes` (the spec's "Client (Host) Capabilities"; a settings
    object without `mimeTypes` counts, as a host that names no type renders the one there is)."""
    extensions = capabilities.get("extensions")
    settings = extensions.get(UI_EXTENSION) if isinstance(extensions, dict) else None
    if not isinstance(settings, dict):
        return False
    types = settings.get("mimeTypes", [UI_MIME_TYPE])
    return isinstance(types, list) and UI_MIME_TYPE in types


def visibility_problems(visibility: object) -> list[str]:
    """What is wrong with a tool's `visibility=`: a non-empty list of `"model"` and `"app"`, each once."""
    if visibility is None:
        return []
    if isinstance(visibility, str) or not isinstance(visibility, Sequence):
        return [f"visibility must be a list of 'model' and 'app' (e.g. ['app']), not {visibility!r}"]
    wrong = [value for value in visibility if value not in ("model", "app")]
    if wrong or not visibility or len(set(visibility)) != len(visibility):
        return [f"visibility must list 'model' and/or 'app', each once, not {list(visibility)!r}"]
    return []


def app_sdk() -> str:
    """The vendored App SDK bundle (`@modelcontextprotocol/ext-apps`, the `McpApps` global), as JavaScript text."""
    return (_ASSETS / "ext-apps.js").read_text(encoding="utf-8")


def _with_sdk(html: str) -> str:
    if _SDK_TAG.search(html) is None:
        return html
    bundle = app_sdk().replace("</script", "<\\/script")  # nothing in it may end the inline script early
    return _SDK_TAG.sub(lambda _: f"<script>\n{bundle}\n</script>", html, count=1)


def _read(path: Path, uri: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"UI {uri!r}: no HTML file at {path}") from None


def _ui_problems(
    uri: str,
    csp: Mapping[str, Sequence[str]] | None,
    permissions: Sequence[str] | None,
    domain: str | None,
    prefers_border: bool | None,
) -> list[str]:
    """Everything wrong with a `UI`'s options, at once."""
    problems = _uri_problems(uri)
    if csp is not None:
        problems.extend(_csp_problems(csp))
    if permissions is not None:
        problems.extend(_permission_problems(permissions))
    problems.extend(_scalar_problems(domain, prefers_border))
    return problems


def _ui_meta(
    csp: Mapping[str, Sequence[str]] | None,
    permissions: Sequence[str] | None,
    domain: str | None,
    prefers_border: bool | None,
) -> dict[str, Any]:
    """The resource's `_meta.ui` from a `UI`'s (valid) options: only those given, as the spec names them."""
    meta: dict[str, Any] = {}
    if csp is not None:
        meta["csp"] = {key: list(csp[key]) for key in CSP_KEYS if key in csp}
    if permissions is not None:
        meta["permissions"] = {permission: {} for permission in permissions}
    if domain is not None:
        meta["domain"] = domain
    if prefers_border is not None:
        meta["prefersBorder"] = prefers_border
    return meta


def _uri_problems(uri: object) -> list[str]:
    if not isinstance(uri, str) or not uri.startswith("ui://") or len(uri) == len("ui://"):
        return [f"the URI must start with 'ui://' and name the page (e.g. 'ui://weather/dashboard'), not {uri!r}"]
    return []


def _scalar_problems(domain: object, prefers_border: object) -> list[str]:
    problems = []
    if domain is not None and (not isinstance(domain, str) or not domain):
        problems.append(f"domain must be a non-empty string, not {domain!r}")
    if prefers_border is not None and not isinstance(prefers_border, bool):
        problems.append(f"prefers_border must be True, False or None, not {prefers_border!r}")
    return problems


def _csp_problems(csp: object) -> list[str]:
    if not isinstance(csp, Mapping):
        return [f"csp must map {', '.join(CSP_KEYS)} to lists of origins, not {type(csp).__name__}"]
    import difflib  # only an unknown csp key needs it: not imported at start (issue 40)

    problems = []
    for key, origins in csp.items():
        if key not in CSP_KEYS:
            close = difflib.get_close_matches(str(key).replace("_", ""), CSP_KEYS, n=1, cutoff=0.5)
            hint = f"; did you mean {close[0]!r}?" if close else f" (the spec's keys: {', '.join(CSP_KEYS)})"
            problems.append(f"csp has no key {key!r}{hint}")
        elif isinstance(origins, str) or not isinstance(origins, Sequence):
            problems.append(f"csp[{key!r}] must be a list of origins, not {origins!r}")
        else:
            problems.extend(
                f"csp[{key!r}]: {origin!r} is not an origin such as 'https://api.example.com' or "
                "'https://*.example.com'"
                for origin in origins
                if not (isinstance(origin, str) and _ORIGIN.match(origin))
            )
    return problems


def _permission_problems(permissions: object) -> list[str]:
    if isinstance(permissions, str) or not isinstance(permissions, Sequence):
        return [f"permissions must be a list of {', '.join(PERMISSIONS)}, not {permissions!r}"]
    return [
        f"permissions: {permission!r} is not one of {', '.join(PERMISSIONS)}"
        for permission in permissions
        if permission not in PERMISSIONS
    ]
