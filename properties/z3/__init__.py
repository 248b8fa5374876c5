"""Z3 twins of the abstract model: the state vocabulary, the transition relation, invariants, proofs, BMC.

The only package that imports z3 (DESIGN.md §2). Files: domain.py (sorts, member domains, append
sequences), encoding.py (state vocabulary, init, encoder/decoder, transition formulas),
symbolic.py (the symbolic working copy and the path explorer), rules.py (model/rules.py and
model/step.py, rule by rule, over Z3 terms), invariants.py (the invariants' Z3 twins), prove.py
(initiation/consecution with members as an uninterpreted sort, counterexamples to induction, BMC).
"""
import z3

# Z3 answers a Ctrl-C inside a check by cancelling that one query (it returns unknown) and swallowing the signal, so
# an interrupted `kgc check` went on — or a cancelled query was read as an answer. Left to Python, the signal stops
# the command once the query returns (each takes well under a second).
z3.set_param("ctrl_c", False)
