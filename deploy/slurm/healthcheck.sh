#!/bin/bash
# Slurm HealthCheckProgram: drain the node when PyTorch cannot use its GPUs.
#
# slurm.conf:   HealthCheckProgram=/etc/slurm/cudadoctor-healthcheck.sh   (this file, root, 0755)
#               HealthCheckInterval=3600
#               HealthCheckNodeState=IDLE       (do not import torch next to running jobs)
#
# Slurm does nothing with a health check's exit code except at slurmd start-up (where a non-zero
# one can block registration): any action must be taken by the program. So this script drains
# the node itself with `scontrol update ... State=DRAIN Reason="cudadoctor: <codes>"` when
# cudadoctor exits 1 (error findings), and exits 0. With CUDADOCTOR_AUTO_RESUME=1 it also
# resumes a node that it drained itself (reason starting with "cudadoctor:") once the node
# passes again. slurmd kills the program after 60 seconds: keep CUDADOCTOR_TIME_LIMIT below.

set -u
# shellcheck source=/dev/null
[ -r /etc/default/cudadoctor ] && . /etc/default/cudadoctor

CUDADOCTOR=${CUDADOCTOR:-/opt/cudadoctor/bin/cudadoctor}
PYTHON=${CUDADOCTOR_PYTHON:-$(dirname "$CUDADOCTOR")/python}
TARGET_PYTHON=${CUDADOCTOR_TARGET_PYTHON:-}
REPORT_DIR=${CUDADOCTOR_REPORT_DIR:-}
TIME_LIMIT=${CUDADOCTOR_TIME_LIMIT:-50}
AUTO_RESUME=${CUDADOCTOR_AUTO_RESUME:-0}
SCONTROL=${SCONTROL:-scontrol}
NODE=${SLURMD_NODENAME:-$(hostname -s)}
read -r -a EXTRA <<< "${CUDADOCTOR_CHECK_ARGS:-}"

log() { logger -t cudadoctor-healthcheck -- "$*" 2>/dev/null; echo "cudadoctor-healthcheck: $*" >&2; }

args=(check --format json --timeout 30)
[ -n "$TARGET_PYTHON" ] && args+=(--python "$TARGET_PYTHON")
args+=("${EXTRA[@]}")
if [ -n "$REPORT_DIR" ]; then
    report="$REPORT_DIR/$NODE.json"   # replaced atomically on each run
else
    report=$(mktemp /tmp/cudadoctor-health.XXXXXX.json) || exit 0
    trap 'rm -f "$report"' EXIT
fi

timeout "$TIME_LIMIT" "$CUDADOCTOR" "${args[@]}" -o "$report" >/dev/null 2>&1
rc=$?

case $rc in
    0)
        if [ "$AUTO_RESUME" = 1 ]; then
            reason=$("$SCONTROL" show node "$NODE" 2>/dev/null | sed -n 's/^ *Reason=\(.*\)$/\1/p')
            case $reason in
                cudadoctor:*) "$SCONTROL" update NodeName="$NODE" State=RESUME && log "resumed $NODE: passes again" ;;
            esac
        fi
        ;;
    1)
        # The error codes, read from the report as JSON by cudadoctor's own interpreter.
        codes=$("$PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(",".join(dict.fromkeys(f["code"] for f in d["findings"] if f["severity"] == "error")))' "$report" 2>/dev/null)
        reason="cudadoctor: ${codes:-error findings} (cudadoctor explain CODE)"
        "$SCONTROL" update NodeName="$NODE" State=DRAIN Reason="${reason:0:200}"
        log "drained $NODE: $reason"
        ;;
    *)
        log "cudadoctor itself failed on $NODE (exit $rc); node left as it is"
        ;;
esac
exit 0
