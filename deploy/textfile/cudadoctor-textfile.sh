#!/bin/bash
# Prometheus metrics for node_exporter's textfile collector: cudadoctor's diagnosis of this node
# (and, when asked, a smoke test), written atomically where the collector reads *.prom files.
#
#   node_exporter --collector.textfile.directory=/var/lib/node_exporter/textfile_collector
#
# From cron (every 15 minutes; /etc/cron.d/cudadoctor):
#   */15 * * * * root /opt/cudadoctor/deploy/textfile/cudadoctor-textfile.sh
# From a Slurm prolog or epilog (after the job's own checks; it never fails the job):
#   /opt/cudadoctor/deploy/textfile/cudadoctor-textfile.sh || true
# From Kubernetes: deploy/k8s/textfile-daemonset.yaml runs it in a loop on every GPU node.
#
# Writes $TEXTFILE_DIR/cudadoctor.prom (`check --format prometheus`) and, with
# CUDADOCTOR_TEXTFILE_SMOKE=cpu|cuda, $TEXTFILE_DIR/cudadoctor-smoke.prom (`smoke --format
# prometheus`: minutes of GPU time; run it when the node is idle). cudadoctor writes each file
# to a temporary name and renames it, so the collector never reads half a file. When cudadoctor
# itself fails (exit 2/3, time limit) the previous file stays: alert on the age of
# cudadoctor_report_timestamp_seconds (docs/cluster.md). Exit: 0 written (whatever the
# diagnosis), 1 cudadoctor could not write it.
#
# Settings (environment, or /etc/default/cudadoctor when present): CUDADOCTOR, CUDADOCTOR_TEXTFILE_DIR,
# CUDADOCTOR_TARGET_PYTHON, CUDADOCTOR_TIME_LIMIT, CUDADOCTOR_CHECK_ARGS, CUDADOCTOR_TEXTFILE_SMOKE.

set -u
# shellcheck source=/dev/null
[ -r /etc/default/cudadoctor ] && . /etc/default/cudadoctor

CUDADOCTOR=${CUDADOCTOR:-/opt/cudadoctor/bin/cudadoctor}
TEXTFILE_DIR=${CUDADOCTOR_TEXTFILE_DIR:-/var/lib/node_exporter/textfile_collector}
TARGET_PYTHON=${CUDADOCTOR_TARGET_PYTHON:-}
TIME_LIMIT=${CUDADOCTOR_TIME_LIMIT:-120}
SMOKE=${CUDADOCTOR_TEXTFILE_SMOKE:-}
read -r -a EXTRA <<< "${CUDADOCTOR_CHECK_ARGS:-}"

log() { logger -t cudadoctor-textfile -- "$*" 2>/dev/null; echo "cudadoctor-textfile: $*" >&2; }

py=()
[ -n "$TARGET_PYTHON" ] && py=(--python "$TARGET_PYTHON")
stamp=$(mktemp "${TMPDIR:-/tmp}/cudadoctor-textfile.XXXXXX") || exit 1
trap 'rm -f "$stamp"' EXIT
touch -d "2 seconds ago" "$stamp"  # file times may have one-second resolution: a file written now is newer

# run NAME ARGS...: one cudadoctor command writing $TEXTFILE_DIR/NAME.prom; its exit code is the
# diagnosis (0 healthy, 1 findings or a failed smoke...), so "written" is judged by the file itself.
run() {
    local out=$TEXTFILE_DIR/$1.prom
    shift
    timeout "$TIME_LIMIT" "$CUDADOCTOR" "$@" --format prometheus "${py[@]}" -o "$out" 2>/dev/null
    local rc=$?
    if [ ! "$out" -nt "$stamp" ]; then
        log "cudadoctor $1 did not write $out (exit $rc); the previous file, if any, is left as it was"
        return 1
    fi
}

status=0
run cudadoctor check "${EXTRA[@]}" || status=1
if [ -n "$SMOKE" ]; then
    run cudadoctor-smoke smoke --device "$SMOKE" || status=1
fi
exit $status
