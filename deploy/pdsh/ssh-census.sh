#!/bin/bash
# One cudadoctor report per host over plain ssh, brought back here (no shared file system needed).
#
#   deploy/pdsh/ssh-census.sh hosts.txt [DIR]       # hosts.txt: one host per line, # comments
#
# A host that cannot be reached leaves an empty DIR/<host>.json, which `cudadoctor fleet` lists
# as unreadable; its ssh error is in DIR/<host>.err.
set -uo pipefail

HOSTFILE=${1:?usage: ssh-census.sh HOSTFILE [DIR]}
DIR=${2:-$PWD/cudadoctor-reports-$(date -u +%Y%m%d-%H%M%S)}
SSH=${SSH:-ssh}
PARALLEL=${PARALLEL:-32}
CUDADOCTOR=${CUDADOCTOR:-cudadoctor}
REMOTE_CUDADOCTOR=${REMOTE_CUDADOCTOR:-cudadoctor}
read -r -a EXTRA <<< "${CUDADOCTOR_CHECK_ARGS:-}"

mkdir -p "$DIR"
printf -v remote '%q ' "$REMOTE_CUDADOCTOR" check --format json "${EXTRA[@]}"

while read -r host _; do
    case $host in ''|'#'*) continue ;; esac
    (
        # The report arrives on stdout; written under a temporary name, renamed when complete.
        "$SSH" -n -o BatchMode=yes -o ConnectTimeout=10 "$host" "$remote" > "$DIR/.$host.part" 2> "$DIR/$host.err"
        mv -f "$DIR/.$host.part" "$DIR/$host.json"
        [ -s "$DIR/$host.err" ] || rm -f "$DIR/$host.err"
    ) &
    while [ "$(jobs -rp | wc -l)" -ge "$PARALLEL" ]; do wait -n; done
done < "$HOSTFILE"
wait
"$CUDADOCTOR" fleet "$DIR"
