"""Which relations rewrite/replicate.py places by the columns their head keeps, and which
relations it sends to their delta (Options.replicate_static). No Spark."""

from __future__ import annotations

import pytest

from sparklog.engine import Program
from sparklog.ir.printer import print_plan

DECLS = """
.decl edge(x: number, y: number)
.input edge
.decl tc(x: number, y: number)
"""


def _layouts(text: str, strategy: str = "asis") -> dict[str, tuple[tuple[int, ...], tuple]]:
    plan = Program.from_text(DECLS + text).plan_for(strategy, replicate=True)
    return {r: (lay.key, lay.replicated) for r, lay in plan.layouts.items()}


def test_left_linear_closure_is_placed_by_its_source_and_its_edges_sent_to_it():
    text = "tc(x, y) :- edge(x, y).\ntc(x, y) :- tc(x, z), edge(z, y).\n"
    assert _layouts(text)["tc"] == ((0,), ("edge",))
    plain = Program.from_text(DECLS + text).plan_for("asis")  # off: placed by the join
    assert plain.layouts["tc"].key == (1,) and plain.layouts["tc"].replicated == ()
    assert ("  layout tc: bucket by (c0), sub-buckets by (c1); edge sent to every sub-bucket "
            "of its delta each round") in print_plan(
                Program.from_text(DECLS + text).plan_for("asis", replicate=True)).splitlines()


def test_right_linear_closure_is_placed_by_its_target():
    text = "tc(x, y) :- edge(x, y).\ntc(x, y) :- edge(x, z), tc(z, y).\n"
    assert _layouts(text)["tc"] == ((1,), ("edge",))


CARRIED = """
.decl w(x: number, c: number)
.input w
.decl p(x: number, y: number, c: number)
p(x, y, 0) :- edge(x, y).
p(x, y, c + d) :- p(x, z, c), edge(z, y), w(y, d), c < 10.
"""


def test_several_lower_relations_filters_and_carried_columns():
    assert _layouts(CARRIED)["p"] == ((0,), ("edge", "w"))


@pytest.mark.parametrize("text", [
    # nonlinear: the second atom is the stratum's own relation
    "tc(x, y) :- edge(x, y).\ntc(x, y) :- tc(x, z), tc(z, y).\n",
    # same generation: no column of the head holds what the delta's holds there
    "tc(x, x) :- edge(x, _).\ntc(x, y) :- edge(x, a), edge(y, b), tc(a, b).\n",
    # a column kept, but moved to another position
    "tc(x, y) :- edge(x, y).\ntc(y, x) :- tc(x, z), edge(z, y).\n",
    # a loop rule that reads a relation of the stratum beside its delta (here itself)
    "tc(x, y) :- edge(x, y).\ntc(x, y) :- tc(x, z), edge(z, y), tc(y, y).\n",
], ids=["nonlinear", "same-generation", "moved", "two-reads"])
def test_shapes_that_keep_their_placement(text):
    layouts = _layouts(text)
    assert all(replicated == () for _, replicated in layouts.values()), layouts


def test_a_relation_another_relation_of_its_stratum_reads_keeps_its_placement():
    text = """
.decl a(x: number, y: number)
.decl b(x: number, y: number)
a(x, y) :- edge(x, y).
a(x, y) :- a(x, z), edge(z, y).
a(x, y) :- b(x, y).
b(x, y) :- a(x, z), edge(z, y).
"""
    layouts = _layouts(text)
    assert layouts["a"][1] == () and layouts["b"][1] == ()


def test_lattice_relations_are_left_alone():
    text = """
.decl d(x: number, l: number)
d(x, $MIN(0)) :- edge(x, _).
d(y, $MIN(l + 1)) :- d(x, l), edge(x, y).
"""
    assert _layouts(text)["d"][1] == ()


@pytest.mark.parametrize("flag", ["on", "off"])
def test_explain_prints_the_relations_sent_to_the_delta(tmp_path, capsys, flag):
    from sparklog.cli import main

    path = tmp_path / "tc.dl"
    path.write_text(DECLS + "tc(x, y) :- edge(x, y).\ntc(x, y) :- tc(x, z), edge(z, y).\n")
    assert main(["explain", str(path), "--show", "ir", "--strategy", "asis",
                 "--replicate-static", flag]) == 0
    out = capsys.readouterr().out
    sent = "edge sent to every sub-bucket of its delta each round"
    assert (sent in out) == (flag == "on"), out
    assert ("layout tc: bucket by (c0)" in out) == (flag == "on"), out


def test_auto_sends_only_measured_edges_whose_copies_a_round_are_few():
    """Under "auto" the caller measured the closures' edges (arcs first): a relation is
    sent when its arcs times the partitions are at most the bound; "on" and "off" do not
    look at sizes, and an unmeasured relation is never sent under "auto"."""
    from sparklog.defaults import REPLICATE_ROWS
    from sparklog.options import Options
    from sparklog.rewrite.replicate import sendable

    shapes = {"edge": (REPLICATE_ROWS // 4, 100, 10, 10),
              "big": (REPLICATE_ROWS // 4 + 1, 100, 10, 10)}
    assert sendable("auto", shapes, 4) == {"edge"}
    assert sendable("auto", shapes, 5) == frozenset()
    assert sendable("auto", {}, 2) == frozenset()
    assert sendable("on", {}, 2) is True and sendable("off", shapes, 2) is False
    text = "tc(x, y) :- edge(x, y).\ntc(x, y) :- tc(x, z), edge(z, y).\n"
    program = Program.from_text(DECLS + text)
    assert program.plan_for("asis", replicate=frozenset({"edge"})).layouts["tc"] \
        .replicated == ("edge",)
    assert program.plan_for("asis", replicate=frozenset({"big"})).layouts["tc"] \
        .replicated == ()
    # the option's spellings: True and False are "on" and "off"; "auto" is the default
    assert Options().replicate_static == "auto"
    assert Options(replicate_static=True).replicate_static == "on"
    assert Options(replicate_static=False).replicate_static == "off"
    with pytest.raises(Exception, match="replicate_static must be one of auto, on, off"):
        Options(replicate_static="sometimes")


def test_a_recursion_joining_a_relation_that_is_not_sendable_keeps_its_placement():
    program = Program.from_text(DECLS + CARRIED)
    assert program.plan_for("asis", replicate=frozenset({"edge"})).layouts["p"] \
        .replicated == ()
    assert program.plan_for("asis", replicate=frozenset({"edge", "w"})).layouts["p"] \
        .replicated == ("edge", "w")
