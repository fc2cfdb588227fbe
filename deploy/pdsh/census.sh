#!/bin/bash
# One cudadoctor report per node with pdsh, into a directory every node can write (NFS, Lustre...).
#
#   deploy/pdsh/census.sh 'gpu[001-064]' /shared/cudadoctor/$(date +%Y%m%d)
#
# Then `cudadoctor fleet DIR` (run at the end) shows the majority configuration, the deviating
# nodes, the findings by code and the nodes that wrote nothing readable. Without a shared file
# system use ssh-census.sh, which brings the reports back over ssh.
set -uo pipefail

NODES=${1:?usage: census.sh NODES [DIR]  (NODES in pdsh syntax, e.g. gpu[001-064])}
DIR=${2:-$PWD/cudadoctor-reports-$(date -u +%Y%m%d-%H%M%S)}
PDSH=${PDSH:-pdsh}
CUDADOCTOR=${CUDADOCTOR:-cudadoctor}
REMOTE_CUDADOCTOR=${REMOTE_CUDADOCTOR:-$CUDADOCTOR}
read -r -a EXTRA <<< "${CUDADOCTOR_CHECK_ARGS:-}"

mkdir -p "$DIR"
# Quoted for the remote shell; {host} is expanded by cudadoctor on each node.
printf -v remote '%q ' "$REMOTE_CUDADOCTOR" check --format json "${EXTRA[@]}" -o "$DIR/{host}.json"
# A node with error findings exits 1; pdsh reports it and goes on.
"$PDSH" -w "$NODES" "$remote >/dev/null" || true
"$CUDADOCTOR" fleet "$DIR"
