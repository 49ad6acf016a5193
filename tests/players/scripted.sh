#!/usr/bin/env bash
# A Connect5 protocol player for the match runner's tests: it answers with the first empty cell,
# and misbehaves as its first argument says.
#   good            plays the first empty cell
#   illegal         answers with a cell outside the board
#   occupied        answers with the first occupied cell (the first empty one on an empty board)
#   garbage         answers with a line that is not `row col`
#   crash           exits with status 3 on the first request, a word on stderr
#   sleep S         sleeps S seconds before every answer
#   sleep-once S    sleeps S seconds before its first answer only
mode=${1:-good}
seconds=${2:-0}
slept=no
echo "scripted test player ($mode)"
echo READY
while read -r dimensions; do
    read -r rows cols _ <<<"$dimensions"
    if [ "$rows" = "0" ] || [ -z "$cols" ]; then
        exit 0
    fi
    empty=""
    taken=""
    for ((r = 0; r < rows; r++)); do
        read -r line
        if [ -z "$empty" ]; then
            before=${line%%0*}
            if [ ${#before} -lt ${#line} ]; then empty="$r ${#before}"; fi
        fi
        if [ -z "$taken" ]; then
            before=${line%%[NB]*}
            if [ ${#before} -lt ${#line} ]; then taken="$r ${#before}"; fi
        fi
    done
    read -r _budget
    case "$mode" in
        illegal) echo "$rows $cols" ;;
        occupied) echo "${taken:-$empty}" ;;
        garbage) echo "hello referee" ;;
        crash)
            echo "scripted player: crashing on purpose" >&2
            exit 3
            ;;
        sleep)
            sleep "$seconds"
            echo "$empty"
            ;;
        sleep-once)
            if [ "$slept" = no ]; then
                sleep "$seconds"
                slept=yes
            fi
            echo "$empty"
            ;;
        *) echo "$empty" ;;
    esac
done
