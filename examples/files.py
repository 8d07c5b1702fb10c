"""Files in a sandbox directory: list, read, write, search and view images, never outside the sandbox.

`make_server(root)` serves one directory. Run it as a stdio server with `python examples/files.py [DIRECTORY]`
(a fresh temporary directory when none is given).
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, Field

from toolkit import Context, Image, Server, Tool, ToolError, tool

RelativePath = Annotated[
    str, Field(min_length=1, max_length=500, description="A path inside the sandbox, such as `docs/a.txt`.")
]


class FileInfo(BaseModel):
    path: str
    size: int
    modified: dt.datetime


class Listing(BaseModel):
    files: list[FileInfo]


class Match(BaseModel):
    path: str
    line: int
    text: str


class Sandbox:
    """A directory the tools may read and write; paths that leave it are refused."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def _resolve(self, path: str, *, exists: bool = True) -> Path:
        target = (self.root / path).resolve()
        if not target.is_relative_to(self.root):
            raise ToolError(f"{path!r} is outside the sandbox; use a relative path such as 'notes/todo.txt'.")
        if exists and not target.is_file():
            raise ToolError(f"No file {path!r}; call list_files to see what exists.")
        return target

    def _files(self, pattern: str) -> list[Path]:
        return sorted(p for p in self.root.rglob("*") if p.is_file() and fnmatch.fnmatch(self._name(p), pattern))

    def _name(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    @tool(read_only=True, open_world=False)
    def list_files(self, pattern: str = "*") -> Listing:
        """List files whose path matches a glob pattern.

        Args:
            pattern: A glob such as `*.txt` or `docs/*`; `*` matches across folders.
        """
        infos = []
        for path in self._files(pattern):
            stat = path.stat()
            modified = dt.datetime.fromtimestamp(stat.st_mtime, dt.timezone.utc)
            infos.append(FileInfo(path=self._name(path), size=stat.st_size, modified=modified))
        return Listing(files=infos)

    @tool(read_only=True, open_world=False)
    def read_text(self, path: RelativePath, max_chars: Annotated[int, Field(gt=0)] = 20_000) -> str:
        """Read a text file (UTF-8).

        Args:
            max_chars: Stop after this many characters.
        """
        try:
            text = self._resolve(path).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise ToolError(f"{path!r} is not UTF-8 text; use view_image for images.") from None
        return text if len(text) <= max_chars else text[:max_chars] + f"\n[... {len(text) - max_chars} more characters]"

    @tool(destructive=True, open_world=False)
    def write_file(
        self, path: RelativePath, text: str | None = None, data: bytes | None = None, overwrite: bool = False
    ) -> str:
        """Write a file, from text or from base64-encoded bytes.

        Args:
            text: The file's content as text (UTF-8).
            data: The file's content as bytes (base64 in JSON); give either text or data.
            overwrite: Replace the file if it exists.
        """
        if (text is None) == (data is None):
            raise ToolError("Give exactly one of text or data.")
        target = self._resolve(path, exists=False)
        if target.exists() and not overwrite:
            raise ToolError(f"{path!r} exists; pass overwrite=true to replace it.")
        target.parent.mkdir(parents=True, exist_ok=True)
        content = text.encode() if text is not None else data or b""
        target.write_bytes(content)
        return f"Wrote {len(content)} bytes to {path}."

    @tool(read_only=True, open_world=False)
    async def search(
        self, needle: Annotated[str, Field(min_length=1)], ctx: Context, pattern: str = "*"
    ) -> list[Match]:
        """Find lines containing some text, reporting progress file by file.

        Args:
            needle: The text to look for (case-sensitive).
            pattern: Only search files whose path matches this glob.
        """
        files = self._files(pattern)
        matches: list[Match] = []
        for done, path in enumerate(files, start=1):
            try:
                lines = path.read_text(encoding="utf-8").splitlines()
            except UnicodeDecodeError:
                lines = []  # not text: nothing to find
            found = [
                Match(path=self._name(path), line=n, text=line) for n, line in enumerate(lines, 1) if needle in line
            ]
            matches.extend(found)
            await ctx.report_progress(done, total=len(files))
        return matches

    @tool(read_only=True, open_world=False)
    def view_image(self, path: RelativePath) -> Image:
        """Show an image file (PNG, JPEG, GIF, WebP or SVG) to the model."""
        return Image(path=self._resolve(path))


def make_server(root: Path) -> Server:
    """A server over one sandbox directory."""
    sandbox = Sandbox(root)
    tools: list[Tool[..., Any]] = [
        sandbox.list_files,
        sandbox.read_text,
        sandbox.write_file,
        sandbox.search,
        sandbox.view_image,
    ]
    return Server("files", instructions=f"Files in the sandbox {sandbox.root}.", tools=tools)


if __name__ == "__main__":
    make_server(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="toolkit-files-"))).run()
