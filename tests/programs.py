"""Datalog programs that several test modules run (the issues' regression programs)."""

NAT = """
.decl nat(x:number)
nat(0).
nat(x + 1) :- nat(x), x < 6.
.decl succ(a:number, b:number)
succ(a, b) :- nat(a), nat(b), b = a + 1.
"""

# Addition through succ: add is bucketed by its second column and joined to succ twice, on
# different columns; the head constant in add(a, 0, a) makes Spark lose the placement. The
# recursion once stopped after one step (13 rows instead of 28).
ADD = NAT + """
.decl add(a:number, b:number, r:number)
.output add
add(a, 0, a) :- nat(a).
add(a, b, r) :- succ(pb, b), add(a, pb, pr), succ(pr, r).
"""
