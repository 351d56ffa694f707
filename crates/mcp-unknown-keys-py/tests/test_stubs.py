"""The type stubs say what the extension does: each signature's parameters and defaults."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from mcp_unknown_keys import _native

# The stubs installed beside the extension: what a type checker and an IDE read.
STUBS = ast.parse(Path(_native.__file__).with_name("_native.pyi").read_text())


def stubbed_signatures() -> dict[str, ast.FunctionDef]:
    """Each function and method the stubs declare, by its dotted name."""
    found = {}
    for node in STUBS.body:
        if isinstance(node, ast.FunctionDef):
            found[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for member in node.body:
                if isinstance(member, ast.FunctionDef) and not member.decorator_list:
                    found[f"{node.name}.{member.name}"] = member
    return found


def stubbed(function: ast.FunctionDef) -> list[tuple[str, str, str | None]]:
    """Each parameter but `self`: name, kind, the default's text."""
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    # `*args` comes after the positional parameters, as the extension reports it.
    variadic = [(arguments.vararg.arg, "positional", None)] if arguments.vararg else []
    described = [
        (parameter.arg, "positional", default) for parameter, default in zip(positional, defaults)
    ] + variadic + [
        (parameter.arg, "keyword", default)
        for parameter, default in zip(arguments.kwonlyargs, arguments.kw_defaults)
    ]
    return [
        (name, kind, None if default is None else ast.unparse(default))
        for name, kind, default in described
        if name != "self"
    ]


def native(name: str) -> list[tuple[str, str, str | None]]:
    """The same, from the signature the extension itself reports."""
    owner, _, method = name.partition(".")
    target = getattr(_native, owner)
    if method and method != "__init__":
        target = getattr(target, method)
    keyword = inspect.Parameter.KEYWORD_ONLY
    return [
        (
            parameter.name,
            "keyword" if parameter.kind is keyword else "positional",
            None if parameter.default is inspect.Parameter.empty else repr(parameter.default),
        )
        for parameter in inspect.signature(target).parameters.values()
        if parameter.name != "self"
    ]


def signed(name: str) -> bool:
    """Whether the extension reports a signature for `name`: not for the
    comparison and other special methods, which the stubs declare for type
    checkers only."""
    method = name.rpartition(".")[2]
    return method == "__init__" or not method.startswith("__")


SIGNED = [name for name in stubbed_signatures() if signed(name)]


def test_the_stubs_declare_the_signed_entry_points():
    assert {
        "Auditor.__init__",
        "Auditor.audit",
        "Auditor.list_page",
        "Session.__init__",
        "Session.from_host",
        "Session.from_server",
        "Session.finish",
        "audit_file",
    } <= set(SIGNED)


@pytest.mark.parametrize("name", SIGNED)
def test_each_stubbed_signature_is_the_extensions(name):
    assert stubbed(stubbed_signatures()[name]) == native(name)
