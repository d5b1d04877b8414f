"""IR-to-IR passes over the plan lower() makes (rewrite/indexes.py: secondary indexes)."""
