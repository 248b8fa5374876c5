"""kgc explore: exhaustive and randomised exploration of race orderings (local engine, PCT, spark/ engine)."""
