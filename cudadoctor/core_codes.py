"""Codes the engine itself emits (not any check)."""

from .model import Code

CHECK_CRASHED = Code(
    code="check-crashed",
    title="A check or plugin failed; its diagnosis is missing from this report",
    area="tool",
    severity="warning",
    explanation={
        "what": "A check raised an exception, ran past its time limit, returned something that is "
        "not a list of findings, or a plugin could not be loaded.",
        "why": "cudadoctor survives broken checks and plugins so that the rest of the report still "
        "arrives, but whatever that check would have diagnosed is unknown.",
        "confirm": "The evidence names the check, its source (distribution:entry point) and the error. "
        "`cudadoctor list-checks` shows where every check comes from.",
        "fix": "Upgrade or uninstall the plugin named in the evidence, or report the bug to its "
        "authors. Run with CUDADOCTOR_NO_PLUGINS=1 to use only the built-in checks.",
    },
)

CORE_CODES = (CHECK_CRASHED,)
