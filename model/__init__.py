"""kgc model: the abstract protocol (State, Scope, enabled/step), its networkx graph and pinned counts."""
