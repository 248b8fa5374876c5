"""Seeded coordinator bugs, one named variant per seam (filled by the gate/mutants work)."""
