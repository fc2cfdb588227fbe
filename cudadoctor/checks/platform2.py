"""Platform causes named by their root (issue 21, class 7: "mechanism named instead of root"): /dev/shm that
this user may not write (not a full one: shm-exhausted). Wordings: kb/errors/platform2.json.

Codes: dev-shm-permission-denied.
"""

from __future__ import annotations

from typing import Iterator

from cudadoctor.facts import Facts
from cudadoctor.interpret import container
from cudadoctor.model import Code, Finding, Fix, check

from ._common import error_match

DEV_SHM_PERMISSION_DENIED = Code(
    code="dev-shm-permission-denied",
    title="This user may not create files in /dev/shm (permission denied), so NCCL or DataLoader workers cannot share memory",
    area="system",
    severity="error",
    explanation={
        "what": 'NCCL fails with "unhandled system error" and, with NCCL_DEBUG=INFO, "NCCL WARN Call to shm_open failed : '
        'Permission denied"; torch\'s DataLoader workers fail with "unable to open shared memory object </torch_...> '
        'in read-write mode: Permission denied (13)".',
        "why": "NCCL (between GPUs of one node) and torch.multiprocessing (DataLoader workers) create POSIX shared-memory "
        "files in /dev/shm. /dev/shm must be a tmpfs writable by everyone with the sticky bit (mode 1777); some "
        "images, sandboxes and hardened hosts mount it 755 (root only), read-only, or leave stale segments owned by "
        "another user. This is not a full /dev/shm (shm-exhausted): more space does not help.",
        "confirm": "`ls -ld /dev/shm` shows drwxrwxrwt (1777); `touch /dev/shm/x && rm /dev/shm/x` as the user that runs "
        "the job; `ls -l /dev/shm | grep -E 'nccl|torch'` for segments owned by someone else.",
        "fix": "Give /dev/shm its standard mode (`sudo chmod 1777 /dev/shm`, or mount it `tmpfs ... mode=1777`; in a "
        "container, do not mount it read-only), and remove stale segments of other users. As a stop-gap, "
        "NCCL_SHM_DISABLE=1 makes NCCL avoid it (slower); DataLoader(num_workers=0) avoids it for workers.",
    },
    links=(
        "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html#shared-memory",
        "https://github.com/NVIDIA/nccl/issues/328",
    ),
)


_FIX = (
    "ls -ld /dev/shm  # must be drwxrwxrwt (mode 1777)",
    "sudo chmod 1777 /dev/shm  # or remount: sudo mount -o remount,mode=1777 /dev/shm",
    "ls -l /dev/shm | grep -E 'nccl|torch'  # stale segments of another user: remove them",
    "# stop-gap: NCCL_SHM_DISABLE=1 (NCCL without shared memory, slower) / DataLoader(num_workers=0)",
)


@check(DEV_SHM_PERMISSION_DENIED)
def dev_shm_permission_denied(fx: Facts) -> Iterator[Finding]:
    said = error_match(fx, DEV_SHM_PERMISSION_DENIED)
    shm = fx.dict("system.dev_shm") or {}
    if not said:
        if shm.get("writable") is False:  # probed: this user may not create files there (nothing failed yet)
            yield DEV_SHM_PERMISSION_DENIED.finding(
                title=f"/dev/shm (mode {shm.get('mode')}) is not writable for this user: DataLoader workers and NCCL will fail",
                evidence={"system.dev_shm.writable": False, "system.dev_shm.mode": shm.get("mode")},
                fix=Fix(_FIX, "NCCL and torch.multiprocessing create their shared memory in /dev/shm, which must be mode 1777."),
                severity="warning",
            )
        return
    where = container(fx)
    cmds = list(_FIX)
    if where:
        cmds.insert(2, f"# {where}: do not mount /dev/shm read-only; docker run --ipc=host or --shm-size gives a writable one")
    yield DEV_SHM_PERMISSION_DENIED.finding(
        title="/dev/shm is not writable for this user (permission denied): NCCL / DataLoader workers cannot create shared memory",
        evidence={said[0]: said[1]},
        fix=Fix(tuple(cmds), "NCCL and torch.multiprocessing create their shared memory in /dev/shm, which must be mode 1777."),
    )


def register():
    return [dev_shm_permission_denied]
