"""IR-to-IR passes: program rewrites (each a module), then plan rewrites.

``PASSES`` run in order on the checked program, each taking the program the one before
made (checked again); ``rewrite/indexes.py`` then rewrites the plan lower() makes.
"""

from sparklog.rewrite import arity, closure, doubling

# closures first: a linear closure to double is left to the chain pass; a linear stratum
# that is no chain program is doubled at twice its arity (Theorem 3.2) only on request
PASSES = (closure.rewrite, doubling.rewrite, arity.rewrite)
