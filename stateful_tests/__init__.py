"""kgc stateful tests: Hypothesis RuleBasedStateMachine tests over harness+impl, checking the catalog."""
