"""Stage three: the judgement. Raw matches and what the analysis learned about their
place become findings with a role, a severity and the reasons for any discount; then the
score, effort, plan and inventory."""
