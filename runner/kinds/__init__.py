"""The expectation kinds: one module each, found here by looking, never listed elsewhere.

A module of this package that defines an `ExpectationBase` subclass with a `kind: Literal["..."]`
field adds that kind: the manifest accepts it, the plugin plans and runs its job, the judge asks
it for a verdict, the page shows its figure and `-m <kind>` selects it.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Annotated, Union, get_args

from pydantic import Field

from kregress.kinds.base import CompiledExpectation, ExpectationBase, Plan
from kregress.record import ItemRecord


def discover() -> dict[str, type[ExpectationBase]]:
    found: dict[str, type[ExpectationBase]] = {}
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if module_info.name == "base":
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, ExpectationBase)
                and value.__module__ == module.__name__
                and "kind" in value.model_fields
            ):
                (kind,) = get_args(value.model_fields["kind"].annotation)
                found[kind] = value
    return found


REGISTRY = discover()
KINDS = tuple(REGISTRY)
Expectation = Annotated[Union[tuple(REGISTRY.values())], Field(discriminator="kind")]  # noqa: UP007


def kind_named(kind: str | None) -> type[ExpectationBase] | None:
    return REGISTRY.get(kind or "")


def figure(item: ItemRecord) -> str:
    """A result record's measured value next to its limit, as its kind shows it; "" when the record
    has none or is from an older kregress whose fields do not fit."""
    kind, measured = kind_named(item.kind), item.measured
    if kind is None or not measured:
        return ""
    try:
        return kind.figure(measured, item.limit)
    except (AttributeError, KeyError, StopIteration, TypeError, ValueError):
        return ""


__all__ = [
    "KINDS",
    "REGISTRY",
    "CompiledExpectation",
    "Expectation",
    "ExpectationBase",
    "Plan",
    "figure",
    "kind_named",
]
