"""Soufflé's components, expanded away before anything else sees the program.

``.comp Name<T, ...> : Base<...>, ... { items }`` defines a component: declarations, types,
rules, directives, nested components and instances. ``.init inst = Name<args>`` copies its
items (those of its bases first, less the rules of relations it ``.override``s), with the
type parameters bound, and qualifies every relation and type the component declares with
``inst.``: ``.init London = Traffic`` gives ``London.reachable``, and Traffic's own
``.init train = DiGraph`` gives ``London.train.edge``. A name the component does not
declare keeps referring to the enclosing scope, as in Soufflé's ComponentInstantiation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sparklog.errors import Diagnostic, ParseError, Span
from sparklog.syntax import nodes as n
from sparklog.syntax.walk import map_names

_MAX_DEPTH = 64  # nested instances and bases deeper than this are a cycle


@dataclass(frozen=True)
class CompType:
    """``Name<T, ...>``: a component and its type arguments."""

    name: str
    args: tuple[str, ...]
    span: Span


@dataclass(frozen=True)
class Component:
    """A ``.comp`` definition, its items as the parser built them."""

    type: CompType
    bases: tuple[CompType, ...]
    items: tuple
    span: Span


@dataclass(frozen=True)
class Init:
    """``.init name = Type<args>``."""

    name: str
    type: CompType
    span: Span


@dataclass(frozen=True)
class Override:
    """``.override relation``."""

    relation: str
    span: Span


@dataclass
class _Expander:
    sources: dict[str, str]
    depth: int = field(default=0)
    # a nested component sees the type parameters of the component it is defined in:
    # their binding where it was defined, by the id of its definition
    defined_in: dict[int, dict[str, str]] = field(default_factory=dict)

    def fail(self, span: Span, message: str) -> ParseError:
        return ParseError(Diagnostic(span, message), self.sources)

    def top(self, items: list) -> list:
        scope = {i.type.name: i for i in items if isinstance(i, Component)}
        self._check_names(items)
        out: list = []
        for item in items:
            if isinstance(item, Init):
                out += self.instantiate(item, scope, {})
            elif isinstance(item, Override):
                raise self.fail(item.span, ".override outside a component")
            elif not isinstance(item, Component):
                out.append(item)
        return out

    def _check_names(self, items: list) -> None:
        seen: dict[str, Component] = {}
        for item in items:
            if isinstance(item, Component):
                if item.type.name in seen:
                    raise self.fail(item.span, f"component {item.type.name} is defined twice")
                seen[item.type.name] = item

    def resolve(self, ctype: CompType, scope: dict, binding: dict[str, str]):
        """The component a type names (a type parameter may name one) and its binding."""
        name = binding.get(ctype.name, ctype.name)
        comp = scope.get(name)
        if comp is None:
            raise self.fail(ctype.span, f"unknown component {name}")
        params = comp.type.args
        if len(params) != len(ctype.args):
            raise self.fail(ctype.span, f"component {name} takes {len(params)} type "
                            f"parameter(s), given {len(ctype.args)}")
        own = {p: binding.get(a, a) for p, a in zip(params, ctype.args)}
        return comp, {**self.defined_in.get(id(comp), {}), **own}

    def instantiate(self, init: Init, scope: dict, binding: dict[str, str]) -> list:
        comp, inner = self.resolve(init.type, scope, binding)
        items = self.content(comp, inner, scope, init.span)
        relations = {d.name for d in _decls(items)}
        types = {t.name for t in items if isinstance(t, n.TypeDecl)}
        return [_renamed(i, init.name, relations, types) for i in items]

    def content(self, comp: Component, binding: dict[str, str], scope: dict,
                where: Span, dropped: frozenset[str] = frozenset()) -> list:
        """A component's items with its bases' first, type parameters bound, nested
        instances expanded (qualified by their own names), not yet qualified; without
        its own rules (and its bases') for the ``dropped`` relations, which a component
        extending it overrides. The rules its nested instances add stay, as in Soufflé:
        ``.init aa = AA`` in a base still brings AA's facts of an overridden relation."""
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise self.fail(where, f"component {comp.type.name} contains or extends itself")
        try:
            local = dict(scope)
            own = {i.type.name for i in comp.items if isinstance(i, Component)}
            for nested in (i for i in comp.items if isinstance(i, Component)):
                local[nested.type.name] = nested
                self.defined_in[id(nested)] = binding
            self._check_names(list(comp.items))
            overrides = {i.relation for i in comp.items if isinstance(i, Override)}
            out: list = []
            for base in comp.bases:
                base_comp, base_binding = self.resolve(base, scope, binding)
                inherited = self.content(base_comp, base_binding, scope, base.span,
                                         dropped | overrides)
                declared = {d.name for d in _decls(inherited)}
                for name in overrides - declared:
                    span = next(i.span for i in comp.items
                                if isinstance(i, Override) and i.relation == name)
                    raise self.fail(span, f".override {name}: no base of {comp.type.name} "
                                    "declares it")
                out += inherited
                for name, nested in self._nested(base_comp, scope, base_binding).items():
                    if name not in own:  # a base's components are the derived's
                        local[name] = nested
            for item in comp.items:
                if isinstance(item, Init):
                    out += self.instantiate(item, local, binding)
                elif not isinstance(item, (Component, Override)):
                    out.append(_without_rules_of(_typed(item, binding), dropped))
            return out
        finally:
            self.depth -= 1


    def _nested(self, comp: Component, scope: dict, binding: dict[str, str]) -> dict:
        """The components defined in ``comp`` and in its bases, by name."""
        out = {}
        for base in comp.bases:
            base_comp, base_binding = self.resolve(base, scope, binding)
            out.update(self._nested(base_comp, scope, base_binding))
        out.update({i.type.name: i for i in comp.items if isinstance(i, Component)})
        return out


def expand(items: list, sources: dict[str, str]) -> list:
    """Top-level items with every ``.init`` replaced by what it instantiates and the
    component definitions removed."""
    if not any(isinstance(i, (Component, Init, Override)) for i in items):
        return items
    return _Expander(sources).top(items)


def _decls(items: list):
    for item in items:
        if isinstance(item, list):
            yield from (d for d in item if isinstance(d, n.Decl))


def _without_rules_of(item, relations: set[str]):
    match item:
        case ("clause", heads, bodies, span):
            kept = [h for h in heads if h.relation not in relations]
            return ("clause", kept, bodies, span) if kept else []
        case [*parts]:
            return [p for p in parts if not (isinstance(p, n.Clause)
                                             and p.head.relation in relations)]
    return item


def _typed(item, binding: dict[str, str]):
    if not binding:
        return item
    return map_names(item, lambda r: r, lambda t: binding.get(t, t))


def _renamed(item, prefix: str, relations: set[str], types: set[str]):
    return map_names(item, lambda r: f"{prefix}.{r}" if r in relations else r,
                lambda t: f"{prefix}.{t}" if t in types else t)
