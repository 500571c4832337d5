#!/usr/bin/env bash
# Record plans in order with two processes on a 2-core machine: one forward, one --reverse (they meet in the
# middle of each plan). A plan that depends on an earlier one (a judge plan needs the answers it judges) raises
# until that one is complete; it is retried every 20 s, up to 40 times.
#
#   tools/record_chain.sh 07-answers 09-answers 07-judge 09-judge 04-positions
#
# Logs: build/record-forward.log and build/record-reverse.log. Stop: kill the two chains (pkill -f record_chain).
set -uo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: $0 PLAN [PLAN ...]  (python tools/record.py --help lists the plans)"; exit 2; }
mkdir -p build
export LABKIT_LLM_THREADS=1
chain() {
  local direction=$1 log=$2; shift 2
  for plan in "$@"; do
    for _ in $(seq 1 40); do
      .venv/bin/python tools/record.py "$plan" $direction >>"$log" 2>&1 && break
      sleep 20
    done
  done
  echo "chain done" >>"$log"
}
chain "" build/record-forward.log "$@" &
chain --reverse build/record-reverse.log "$@" &
wait
