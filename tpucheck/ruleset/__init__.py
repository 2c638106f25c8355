"""Rules as data: the model, the YAML loader and rule selection."""

from tpucheck.ruleset.loader import RuleFileError, RuleProblem, load_ruleset
from tpucheck.ruleset.model import Rule, Ruleset
from tpucheck.ruleset.select import SelectionError, select_rules

__all__ = ["Rule", "RuleFileError", "RuleProblem", "Ruleset", "SelectionError", "load_ruleset", "select_rules"]
