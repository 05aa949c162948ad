"""Strict TOML loading shared by the case manifests and the matrix file.

Both files are written by hand, so every mistake must come back as one message that names the
file, the field and what was allowed; unknown keys are errors, never silently ignored.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any, TypeVar

import tomllib
from pydantic import BaseModel, ConfigDict, ValidationError

from kregress.errors import KregressError

Model = TypeVar("Model", bound=BaseModel)


class Strict(BaseModel):
    """Base of every schema model: unknown keys are rejected, values are not coerced."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class SchemaError(KregressError):
    """A hand-written TOML file is invalid; the message names the file and each bad field."""

    def __init__(self, path: Path, problems: list[str]) -> None:
        self.path = path
        self.problems = problems
        super().__init__(
            f"{path}: " + "; ".join(problems)
            if len(problems) == 1
            else f"{path}:\n" + "\n".join(f"  - {p}" for p in problems)
        )


def field_path(location: tuple[Any, ...], union_tags: Collection[str] = ()) -> str:
    """Render a pydantic error location as the TOML path a person would type: expect[2].max.

    Inside a tagged union pydantic puts the tag into the location (expect[2].resource.max); a
    person never wrote that, so tags that follow a list index are dropped.
    """
    out = ""
    previous: Any = None
    for part in location:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and not (isinstance(previous, int) and part in union_tags):
            out += f".{part}" if out else part
        previous = part
    return out or "(top level)"


def describe(error: dict[str, Any], union_tags: Collection[str] = ()) -> str:
    where = field_path(error["loc"], union_tags)
    kind = error["type"]
    if kind == "extra_forbidden":
        return f"{where}: unknown key"
    if kind == "missing":
        return f"{where}: required field is missing"
    if kind == "literal_error":
        return f"{where}: must be {error['ctx']['expected']} (got {error['input']!r})"
    if kind == "union_tag_invalid":
        field = error["ctx"]["discriminator"].strip("'")
        return (
            f"{where}.{field}: must be one of {error['ctx']['expected_tags']} (got {error['ctx']['tag']!r})"
        )
    if kind == "union_tag_not_found":
        field = error["ctx"]["discriminator"].strip("'")
        return f"{where}.{field}: required field is missing"
    if kind == "value_error":
        return f"{where}: {error['msg'].removeprefix('Value error, ')}"
    value = error.get("input")
    shown = repr(value) if not isinstance(value, dict) else "a table"
    return f"{where}: {error['msg'][0].lower()}{error['msg'][1:]} (got {shown})"


def read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise SchemaError(path, [f"not valid TOML: {exc}"]) from None
    except OSError as exc:
        raise SchemaError(path, [f"cannot be read: {exc.strerror}"]) from None


def parse(model: type[Model], path: Path, data: dict[str, Any], union_tags: Collection[str] = ()) -> Model:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise SchemaError(path, [describe(e, union_tags) for e in exc.errors()]) from None
