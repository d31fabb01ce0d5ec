"""The typed expression language of seed 002: compile (parse + check) and evaluate."""

from charter.expr.compile import compile_expression
from charter.expr.evaluate import evaluate

__all__ = ["compile_expression", "evaluate"]
