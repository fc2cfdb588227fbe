#!/bin/bash
# Collect the reports that daemonset.yaml printed to its pods' logs, one file per node, and
# summarise them with `cudadoctor fleet`.
#
#   deploy/k8s/collect-logs.sh [NAMESPACE] [DIR]
#
# Exit code: that of `cudadoctor fleet` (0 healthy and uniform, 1 attention needed, 2 no report).
set -uo pipefail

NAMESPACE=${1:-default}
DIR=${2:-cudadoctor-reports-$(date -u +%Y%m%d-%H%M%S)}
KUBECTL=${KUBECTL:-kubectl}
CUDADOCTOR=${CUDADOCTOR:-cudadoctor}
SELECTOR=app.kubernetes.io/component=census-ds

"$KUBECTL" -n "$NAMESPACE" rollout status daemonset/cudadoctor-census --timeout="${TIMEOUT:-15m}" >&2 ||
    echo "collect-logs: not every pod is ready; collecting what is there" >&2
mkdir -p "$DIR"
"$KUBECTL" -n "$NAMESPACE" get pods -l "$SELECTOR" \
    -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.spec.nodeName}{"\n"}{end}' |
while read -r pod node; do
    [ -n "$pod" ] || continue
    # A pod that has not reported yet leaves an empty or partial file: fleet lists it as unreadable.
    "$KUBECTL" -n "$NAMESPACE" logs "$pod" > "$DIR/${node:-$pod}.json" 2>/dev/null ||
        echo "collect-logs: no log from $pod on ${node:-?}" >&2
done
echo "collect-logs: reports in $DIR" >&2
# The pods' host names are pod names: name nodes after the files.
"$CUDADOCTOR" fleet "$DIR" --names file
