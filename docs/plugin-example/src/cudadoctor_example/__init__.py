"""An example cudadoctor plugin check.

A check is a small pure function from facts to findings: read facts, return findings, no I/O.
"""

from cudadoctor.model import Code, Fix, check

LAUNCH_BLOCKING = Code(
    code="example-launch-blocking",
    title="CUDA_LAUNCH_BLOCKING is on: every kernel launch waits for the GPU",
    area="torch",
    severity="warning",
    explanation={
        "what": "The environment sets CUDA_LAUNCH_BLOCKING=1.",
        "why": "It serialises every kernel launch with the host. Useful while debugging, "
        "but it makes training several times slower when left on.",
        "confirm": "echo $CUDA_LAUNCH_BLOCKING",
        "fix": "unset CUDA_LAUNCH_BLOCKING",
    },
    links=("https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars",),
)


@check(LAUNCH_BLOCKING)
def launch_blocking(facts):
    value = facts.env("CUDA_LAUNCH_BLOCKING")
    if value is None or value.strip() in ("", "0"):
        return
    yield LAUNCH_BLOCKING.finding(
        title=f"CUDA_LAUNCH_BLOCKING={value} makes every kernel launch synchronous",
        evidence={"CUDA_LAUNCH_BLOCKING": value},
        fix=Fix(("unset CUDA_LAUNCH_BLOCKING",), "Launches overlap with host work again."),
    )


def register():
    return [launch_blocking]
