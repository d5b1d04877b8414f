"""IR-to-IR passes: program rewrites (each a module), then plan rewrites.

``PASSES`` run in order on the checked program, each taking the program the one before
made (checked again); ``rewrite/indexes.py`` then rewrites the plan lower() makes.
"""

from sparklog.rewrite import closure, doubling

# closures first: a linear closure to double is left to the chain pass
PASSES = (closure.rewrite, doubling.rewrite)
