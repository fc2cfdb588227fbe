#!/bin/bash
# Slurm Prolog: refuse to start a job on a node where PyTorch cannot use the GPUs.
#
# slurm.conf:   Prolog=/etc/slurm/prolog.d/cudadoctor.sh      (this file, mode 0755, owned by root)
#               PrologFlags=Alloc                             (run at allocation, before the job)
#
# When the Prolog exits non-zero, Slurm drains the node and requeues the job, so the job goes
# to a healthy node. This script exits 1 only when cudadoctor found error findings (its exit
# code 1). A problem of the tool itself (exit 2 or 3, or a time-out) is logged and the job runs,
# unless CUDADOCTOR_FAIL_ON_TOOL_ERROR=1: a broken diagnosis must not drain a healthy cluster.
#
# Slurm runs the Prolog as root with no search path: set absolute paths below or in
# /etc/default/cudadoctor (sourced when present). See docs/cluster.md.

set -u
# shellcheck source=/dev/null
[ -r /etc/default/cudadoctor ] && . /etc/default/cudadoctor

CUDADOCTOR=${CUDADOCTOR:-/opt/cudadoctor/bin/cudadoctor}
# The interpreter whose torch to diagnose (the users' standard environment); empty = cudadoctor's own.
TARGET_PYTHON=${CUDADOCTOR_TARGET_PYTHON:-}
# Where to keep a report per job and node (empty = do not keep); e.g. /shared/cudadoctor/prolog
REPORT_DIR=${CUDADOCTOR_REPORT_DIR:-}
TIME_LIMIT=${CUDADOCTOR_TIME_LIMIT:-90}
FAIL_ON_TOOL_ERROR=${CUDADOCTOR_FAIL_ON_TOOL_ERROR:-0}
read -r -a EXTRA <<< "${CUDADOCTOR_CHECK_ARGS:-}"

log() { logger -t cudadoctor-prolog -- "$*" 2>/dev/null; echo "cudadoctor-prolog: $*" >&2; }

# Check the GPUs given to this job, not those other jobs on the node are using.
if [ -n "${SLURM_JOB_GPUS:-}" ]; then
    export CUDA_VISIBLE_DEVICES=$SLURM_JOB_GPUS
fi

args=(check --format json --timeout 60)
[ -n "$TARGET_PYTHON" ] && args+=(--python "$TARGET_PYTHON")
args+=("${EXTRA[@]}")
if [ -n "$REPORT_DIR" ]; then
    out="$REPORT_DIR/{host}-job{job}.json"
else
    out=$(mktemp /tmp/cudadoctor-prolog.XXXXXX.json) || exit 0
    trap 'rm -f "$out"' EXIT
fi

msg=$(timeout "$TIME_LIMIT" "$CUDADOCTOR" "${args[@]}" -o "$out" 2>&1 >/dev/null)
rc=$?
case $rc in
    0)  exit 0 ;;
    1)  log "node ${SLURMD_NODENAME:-$(hostname -s)} fails for job ${SLURM_JOB_ID:-?}: ${msg#*— }"
        exit 1 ;;
    *)  log "cudadoctor itself failed (exit $rc): ${msg:-time limit of ${TIME_LIMIT}s reached}"
        [ "$FAIL_ON_TOOL_ERROR" = 1 ] && exit 1
        exit 0 ;;
esac
