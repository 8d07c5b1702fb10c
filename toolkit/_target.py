"""Find the tools a command-line TARGET names: `package.module`, `package.module:attr` or `path/to/file.py[:attr]`."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import os
import re
import sys
import sysconfig
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from toolkit._definition.tool import Tool
from toolkit._errors import ToolDefinitionError
from toolkit._server import Server
from toolkit._shadowing import shadowing_module

__all__ = ["TargetError", "absolute_target", "is_file_target", "load_server", "load_target", "source_folder"]

_ATTR = re.compile(r"^(?P<where>.+?):(?P<attr>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)$")


class TargetError(Exception):
    """The target cannot be imported, holds no tools, or is ambiguous; the message says which and why."""


def load_server(target: str, *, base: str | os.PathLike[str] | None = None) -> Server:
    """Import `target` and return its server.

    Without `:attr`, the module's one `toolkit.Server` is used, or else its `@tool` functions are collected
    into a new server named after the module. An attribute may be a `Server`, a `Tool`, a list of tools, the ASGI
    app `Server.http_app()` made (its server), or a function that takes no arguments and returns one of those.

    Args:
        target: `package.module`, `package.module:attr`, `path/to/file.py` or `path/to/file.py:attr`.
        base: The directory relative paths and top-level modules are found from (default: the current one).

    Raises:
        TargetError: the module does not import, holds no tools, or holds several servers.
    """
    found = load_target(target, base=base)
    server: Server = found if isinstance(found, Server) else found.server
    return server


def load_target(target: str, *, base: str | os.PathLike[str] | None = None) -> Any:
    """What `target` serves over HTTP: the `HttpApp` the module made with `server.http_app(...)` (with its settings:
    `auth=`, allowed hosts, a secret) when it names one or the module holds one, else its server, as `load_server`.

    Raises:
        TargetError: as `load_server`; also when the module holds several HTTP apps.
    """
    where, attr = _split(target)
    module = _import(where, _folder(base))
    name = Path(where).stem if _is_path(where) else where.rsplit(".", 1)[-1]
    if attr is not None:
        return _as_server(_attribute(module, where, attr), f"{where}:{attr}", name)
    found = _only_one(module, where, _is_http_app, "HTTP apps")
    if found is None:
        found = _only_one(module, where, _is_server, "servers")
    if found is not None:
        return found
    tools = _unique(value for value in vars(module).values() if isinstance(value, Tool))
    if not tools:
        raise TargetError(f"{where!r} {_what_else(module, where)}")
    return _collect(tools, where, name)


def _folder(base: str | os.PathLike[str] | None) -> Path:
    """The directory relative paths and top-level modules are found from: `base`, or else the current one."""
    return Path(base) if base is not None else Path.cwd()


def _attribute(module: ModuleType, where: str, attr: str) -> Any:
    """The module's attribute named by a dotted `attr` (`server`, `app.server`)."""
    value: Any = module
    for part in attr.split("."):
        if not hasattr(value, part):
            raise TargetError(f"{where!r} has no attribute {attr!r}")
        value = getattr(value, part)
    return value


def _only_one(module: ModuleType, where: str, kind: Callable[[Any], bool], plural: str) -> Any:
    """The module's one value of a kind (an object held under several names is one); None when it holds none.

    Raises:
        TargetError: it holds several: the message names each, as a target to choose.
    """
    keys = sorted(key for key, value in vars(module).items() if kind(value))
    if len(_unique(getattr(module, key) for key in keys)) > 1:
        raise TargetError(f"{where!r} holds several {plural}; choose one: {', '.join(f'{where}:{k}' for k in keys)}")
    return getattr(module, keys[0]) if keys else None


def _is_server(value: Any) -> bool:
    """Whether `value` is a `toolkit.Server`."""
    return isinstance(value, Server)


def _what_else(module: ModuleType, where: str) -> str:
    """What the module lacks and what may serve instead, suggesting only what exists and can work: a function of
    the module that takes no arguments and is annotated to return a `Server`, or `--stdio -- python FILE` when the
    file does something when run; otherwise what was looked for."""
    factories, needy = _server_functions(module)
    options = []
    if factories:
        options.append(f"name the function that builds it ({', '.join(f'{where}:{key}' for key in factories)})")
    if _is_path(where) and _runs_when_run(module):
        options.append(f"start it with --stdio -- python {where}")
    needs = f" ({', '.join(needy)} needs arguments)" if needy else ""
    if options:
        return "holds no toolkit.Server and no @tool functions; " + " or ".join(options) + needs
    missing = ["toolkit.Server", "@tool functions", "function without arguments that returns a Server"]
    if _is_path(where):
        missing.append('`if __name__ == "__main__":` block to run with --stdio -- python FILE')
    return f"holds no {', no '.join(missing[:-1])} and no {missing[-1]}{needs}"


def _server_functions(module: ModuleType) -> tuple[list[str], list[str]]:
    """The names of the module's own functions annotated to return a `Server`: those that take no arguments (which
    can build it), and those that need some."""
    factories: list[str] = []
    needy: list[str] = []
    for key, value in vars(module).items():
        if inspect.isfunction(value) and value.__module__ == module.__name__ and _returns_server(value):
            (factories if _takes_nothing(value) else needy).append(key)
    return factories, needy


def _returns_server(function: Any) -> bool:
    returns = inspect.signature(function).return_annotation
    return returns is Server or (isinstance(returns, str) and returns.rsplit(".", 1)[-1] == "Server")


def _takes_nothing(function: Any) -> bool:
    try:
        inspect.signature(function).bind()
    except TypeError:
        return False
    return True


def _runs_when_run(module: ModuleType) -> bool:
    """Whether the module's file does something when run as a script (`if __name__ == "__main__":`)."""
    try:
        source = Path(str(module.__file__)).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return re.search(r"^if __name__ == [\"']__main__[\"']\s*:", source, re.MULTILINE) is not None


def source_folder(target: str, *, base: str | os.PathLike[str] | None = None) -> Path:
    """The folder of the module `target` names (absolute): the file's for a path, the imported module's otherwise.

    Call it after `load_server(target)`, which imports the module.
    """
    where, _ = _split(target)
    if _is_path(where):
        return _folder(base).joinpath(where).resolve().parent
    module = sys.modules.get(where)
    path = getattr(module, "__file__", None)
    return Path(path).resolve().parent if path else Path(base or Path.cwd()).resolve()


def is_file_target(target: str) -> bool:
    """Whether `target` names a file (`app.py`, `src/app.py:server`) rather than a module to import by name."""
    return _is_path(_split(target)[0])


def absolute_target(target: str, *, base: str | os.PathLike[str] | None = None) -> str:
    """`target` with its file made absolute (`/abs/path/app.py:attr`), to load from any folder; a module name as is."""
    where, attr = _split(target)
    if not _is_path(where):
        return target
    path = str(_folder(base).joinpath(where).resolve())
    return path if attr is None else f"{path}:{attr}"


def _split(target: str) -> tuple[str, str | None]:
    match = _ATTR.match(target)
    return (match["where"], match["attr"]) if match and not _is_drive(match["where"]) else (target, None)


def _is_http_app(value: Any) -> bool:
    # Only a module that made an HttpApp has imported its module: looked up, not imported, so that loading a
    # target never loads the HTTP code.
    http = sys.modules.get("toolkit._http.app")
    return http is not None and isinstance(value, http.HttpApp)


def _is_drive(where: str) -> bool:
    return len(where) == 1 and where.isalpha()  # `C:\\tools.py` on Windows


def _is_path(where: str) -> bool:
    return where.endswith(".py") or "/" in where or os.sep in where


def _import(where: str, base: Path) -> ModuleType:
    """The module `where` names (a file, or a module found from `base`), any failure to import it a `TargetError`
    that says why in one line."""
    try:
        return _import_unchecked(where, base)
    except (TargetError, KeyboardInterrupt):
        raise
    except SyntaxError as exc:
        raise TargetError(
            f"cannot import {where!r}: SyntaxError: {exc.msg} ({_shown(exc.filename or '?')}, line {exc.lineno})"
        ) from exc
    except BaseException as exc:
        raise TargetError(f"cannot import {where!r}: {_import_failure(exc)}") from exc


def _import_unchecked(where: str, base: Path) -> ModuleType:
    """Import the file or module `where` names, as `python file.py` or `python -m` would find it."""
    if _is_path(where):
        return _import_file(base / where)
    folder = base / where
    if folder.is_dir() and not (folder / "__init__.py").exists():
        raise TargetError(_directory(folder))
    if str(base) not in sys.path:
        # `toolkit list mymodule` finds modules in the current directory, as `python -m` does.
        sys.path.insert(0, str(base))
    return importlib.import_module(where)


def _import_failure(exc: BaseException) -> str:
    """Why a module did not import, in one line: a module of the user's that shadows a standard one, else the
    exception and where in the user's code it was raised."""
    shadow = shadowing_module()
    if shadow is not None:  # the cause, far from where it failed
        return shadow
    if isinstance(exc, ToolDefinitionError):  # one line: its problems are a list
        reason = f"cannot make a tool of {exc.qualname}: {'; '.join(exc.problems)}"
    else:
        reason = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    return f"{type(exc).__name__}: {reason}{_user_frame(exc)}"


def _directory(path: Path) -> str:
    files = sorted(p.name for p in path.glob("*.py"))
    example = f" such as {_shown(str(path / files[0]))}" if files else ""
    return f"{_shown(str(path))!r} is a directory: pass the Python file that defines the server{example}"


def _user_frame(exc: BaseException) -> str:
    """` (helper.py, line 3)`: the innermost frame of the traceback in the user's code, not in Python's library,
    an installed package or toolkit; empty when there is none."""
    library = {sysconfig.get_path(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    library.add(str(Path(__file__).resolve().parent))
    found = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        path = frame.filename
        if path.startswith("<") or any(path.startswith(root + os.sep) for root in library if root):
            continue
        line = _decorator_line(path, frame.lineno) if isinstance(exc, ToolDefinitionError) else frame.lineno
        found = f" ({_shown(path)}, line {line})"
    return found


def _decorator_line(path: str, line: int | None) -> int | None:
    """The line of the decorator that made a definition fail, as Python 3.11 reports it: 3.10 names the `def` below
    it, so there the line is the definition's first decorator (where the function starts: its `co_firstlineno`)."""
    if sys.version_info >= (3, 11) or line is None:
        return line
    try:
        tree = ast.parse(Path(path).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return line
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.lineno == line:
            return node.decorator_list[0].lineno if node.decorator_list else line
    return line


def _shown(path: str) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive, on Windows
        return path


def _import_file(path: Path) -> ModuleType:
    if path.is_dir():
        raise TargetError(_directory(path))
    if not path.is_file():
        raise TargetError(f"no such file: {str(path)!r}")
    path = path.resolve()
    name = path.stem
    existing = sys.modules.get(name)
    if existing is not None and getattr(existing, "__file__", None) == str(path):
        return existing
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise TargetError(f"cannot import {str(path)!r}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    # Registered before running, so that pydantic and dataclasses can resolve the module's own names, and with
    # its directory on the path, so that it can import its neighbours as `python file.py` would.
    sys.modules[name] = module
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _unique(values: Any) -> list[Any]:
    out: list[Any] = []
    for value in values:
        if not any(value is seen for seen in out):
            out.append(value)
    return out


def _as_server(value: Any, where: str, name: str) -> Any:
    """What an attribute serves: a server or an HTTP app as it is, tools on a new server, or what a function that
    takes no arguments returns of those."""
    if isinstance(value, Server) or _is_http_app(value):
        return value
    if isinstance(value, Tool):
        return _collect([value], where, name)
    if isinstance(value, (list, tuple)) and value and all(isinstance(item, Tool) for item in value):
        return _collect(list(value), where, name)
    if callable(value) and not isinstance(value, type):
        # A factory: `path.py:make_server` builds the server when it needs no arguments.
        _check_factory(value, where)
        return _as_server(value(), f"{where}()", name)
    raise TargetError(f"{where!r} is {type(value).__name__}, not a toolkit.Server, a Tool or a list of tools")


def _check_factory(value: Callable[..., Any], where: str) -> None:
    """Refuse a callable that needs arguments (an ASGI app among them), which cannot build the server; one whose
    signature cannot be read is tried."""
    try:
        inspect.signature(value).bind()
    except TypeError:
        if _is_asgi(value):
            raise TargetError(
                f"{where!r} is an ASGI app, not one made by server.http_app(): serve it with an ASGI server "
                f"(uvicorn {where.replace('.py:', ':')}), or name its toolkit.Server"
            ) from None
        raise TargetError(f"{where!r} is a function that needs arguments; it cannot build the server") from None
    except ValueError:
        pass


def _is_asgi(value: Any) -> bool:
    try:
        return list(inspect.signature(value).parameters) == ["scope", "receive", "send"]
    except (TypeError, ValueError):
        return False


def _collect(tools: list[Tool[Any, Any]], where: str, name: str) -> Server:
    server = Server(name)
    for item in tools:
        if item.name in server.tools:
            raise TargetError(f"{where!r} holds two tools named {item.name!r}")
        server.add_tool(item)
    return server
