#!/usr/bin/env bash
# A Gomocup brain for the match runner's tests: it plays the first empty cell (row by row) of the
# board it was told about, and misbehaves as its first argument says. Every command it reads is
# appended to the file named by its second argument, when there is one.
#   good            plays the first empty cell; MESSAGE and DEBUG lines before each move
#   crash           exits with status 3 at its first move, a word on stderr
#   hang            never answers a move
#   illegal         answers with a cell outside the board
#   occupied        answers with an occupied cell (the first empty one on an empty board)
#   garbage         answers with a line that is not a move
#   error           answers ERROR instead of a move
#   refuse-start    answers ERROR to START and RECTSTART
#   no-restart      answers UNKNOWN to RESTART (the runner must start a fresh brain)
mode=${1:-good}
log=${2:-/dev/null}
width=0
height=0
declare -A stones

reset() {
    stones=()
}

first_empty() {
    local x y
    for ((y = 0; y < height; y++)); do
        for ((x = 0; x < width; x++)); do
            if [ -z "${stones[$x,$y]}" ]; then
                echo "$x,$y"
                return
            fi
        done
    done
}

answer() {
    local move
    move=$(first_empty)
    case "$mode" in
        crash)
            echo "scripted brain: crashing on purpose" >&2
            exit 3
            ;;
        hang) sleep 1000 ;;
        illegal) echo "$width,$height" ;;
        occupied)
            if [ ${#stones[@]} -gt 0 ]; then
                for key in "${!stones[@]}"; do
                    echo "$key"
                    return
                done
            fi
            echo "$move"
            ;;
        garbage) echo "hello manager" ;;
        error) echo "ERROR scripted brain refuses to move" ;;
        *)
            echo "MESSAGE thinking about $move"
            echo "DEBUG nothing to see"
            stones[$move]=1
            echo "$move"
            ;;
    esac
}

in_board=no
while IFS= read -r line; do
    line=${line%$'\r'}
    echo "$line" >>"$log"
    if [ "$in_board" = yes ]; then
        if [ "$line" = DONE ]; then
            in_board=no
            answer
        else
            IFS=, read -r x y _ <<<"$line"
            stones[$x,$y]=1
        fi
        continue
    fi
    read -r command args <<<"$line"
    case "$command" in
        START | RECTSTART)
            if [ "$mode" = refuse-start ]; then
                echo "ERROR scripted brain plays no board"
                continue
            fi
            if [ "$command" = START ]; then
                width=$args
                height=$args
            else
                IFS=, read -r width height <<<"$args"
            fi
            reset
            echo OK
            ;;
        RESTART)
            if [ "$mode" = no-restart ]; then
                echo "UNKNOWN RESTART"
                continue
            fi
            reset
            echo OK
            ;;
        BEGIN) answer ;;
        TURN)
            stones[$args]=1
            answer
            ;;
        BOARD)
            reset
            in_board=yes
            ;;
        INFO) ;;
        ABOUT) echo 'name="scripted", version="1"' ;;
        END) exit 0 ;;
        *) echo "UNKNOWN $command" ;;
    esac
done
