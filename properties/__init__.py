"""kgc properties: the one property catalog, Python predicates and their Z3 twins in properties/z3/."""
