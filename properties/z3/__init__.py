"""Z3 twins of the abstract model: the state vocabulary, the transition relation, invariants, proofs, BMC.

The only package that imports z3 (DESIGN.md §2). Files: domain.py (sorts, member domains, append
sequences), encoding.py (state vocabulary, init, encoder/decoder, transition formulas),
symbolic.py (the symbolic working copy and the path explorer), rules.py (model/rules.py and
model/step.py, rule by rule, over Z3 terms), invariants.py (the invariants' Z3 twins), prove.py
(initiation/consecution with members as an uninterpreted sort, counterexamples to induction, BMC).
"""
