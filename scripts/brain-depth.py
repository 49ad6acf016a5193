#!/usr/bin/env python3
"""Depth a Gomocup brain reaches on the positions of recorded games, position by position, so
that two engines, two turn times or a kept and a new table compare on the same positions
(docs/engine.md, "Issue 13, session 73").

usage: scripts/brain-depth.py run [--turn MS] [--games N] [--new] OUT_JSON MATCH_JSON BRAIN_CMD...
       scripts/brain-depth.py compare OUT_JSON...

`run` replays one side's positions of the first N games (default 3) of a `connect5 match --json`
summary, each side in a brain process of its own as in a match (its table kept from move to
move), or with `--new` in a new process for every position (a new table every search). Each
position is sent as `BOARD` with `INFO timeout_turn MS` (default 1000) and exact five. The depth
is read from the brain's MESSAGE line: connect5's `depth N`, Rapfi's `Depth N-M`; a search that
took less than a tenth of the turn (a forced or instant answer) is left out. OUT_JSON holds
`depths`, "game,ply" to the depth, and `predicted`, "game,ply" to whether the same brain's search
two plies before expected the opponent's reply that led there (the second move of its principal
variation: connect5's `pv`, Rapfi's `Bestline`), where that search reported one. `compare`
prints each file's mean depth over the positions all of them hold, and again over those the
first file's brain had predicted and those it had not: a table kept from move to move can only
know the position well when the reply was expected (docs/engine.md, "session 74"). Run it on an
idle machine, one brain at a time.
"""
import json
import re
import sys

from gomocup_brain import Brain, BrainError, game_stones, load_games

CONNECT5 = re.compile(r"\bdepth (\d+)\b.*\btime (\d+) ms")
RAPFI = re.compile(r"\bDepth (\d+)-\d+\b.*\bTime (\d+)ms")
CONNECT5_PV = re.compile(r"\bpv ((?:\d+,\d+ ?)+)")
RAPFI_PV = re.compile(r"\bBestline ((?:[A-Z]\d+ ?)+)")


def searched_depth(messages, turn_ms):
    for message in reversed(messages):
        found = CONNECT5.search(message) or RAPFI.search(message)
        if found:
            depth, ms = int(found.group(1)), int(found.group(2))
            return depth if ms > turn_ms // 10 else None
    return None


def expected_reply(messages):
    """The opponent's reply the search expects, as (row, col): the second move of the last
    principal variation its MESSAGE lines report (Rapfi writes a cell as its column's letter
    from A and its row from 1); None without one."""
    for message in reversed(messages):
        connect5, rapfi = CONNECT5_PV.search(message), RAPFI_PV.search(message)
        if connect5:
            line = [tuple(int(n) for n in reversed(cell.split(",")))
                    for cell in connect5.group(1).split()]
        elif rapfi:
            line = [(int(cell[1:]) - 1, ord(cell[0]) - ord("A"))
                    for cell in rapfi.group(1).split()]
        else:
            continue
        return line[1] if len(line) > 1 else None
    return None


def run(args):
    turn_ms, games_wanted, new = 1000, 3, False
    while args and args[0].startswith("--"):
        option = args.pop(0)
        if option == "--new":
            new = True
        elif option in ("--turn", "--games") and args:
            value = int(args.pop(0))
            turn_ms, games_wanted = (value, games_wanted) if option == "--turn" else (turn_ms, value)
        else:
            sys.exit(__doc__)
    if len(args) < 3:
        sys.exit(__doc__)
    out, summary, command = args[0], args[1], args[2:]
    games = load_games(summary)[:games_wanted]
    depths = {}
    predicted = {}
    for side in (0, 1):
        brain = None
        for game in games:
            stones = game_stones(game)
            expected = None
            for ply in range(len(game["opening"]) + side, len(stones), 2):
                if brain is None or new:
                    if brain is not None:
                        brain.close()
                    brain = Brain(command)
                    brain.start(game["rows"], game["cols"], turn_ms)
                try:
                    _, messages, _ = brain.play(stones[:ply])
                except BrainError as error:
                    raise BrainError("game %d, ply %d: %s" % (game["game"], ply, error))
                key = "%d,%d" % (game["game"], ply)
                depth = searched_depth(messages, turn_ms)
                if depth is not None:
                    depths[key] = depth
                if expected is not None:
                    predicted[key] = expected == stones[ply - 1]
                expected = expected_reply(messages)
        if brain is not None:
            brain.close()
    with open(out, "w") as f:
        json.dump({"depths": depths, "predicted": predicted}, f)
    if depths:
        print("%s: %d searches, mean depth %.2f"
              % (out, len(depths), sum(depths.values()) / len(depths)))


def compare(files):
    runs = []
    for name in files:
        with open(name) as f:
            data = json.load(f)
        # Files written before session 74 hold the depths alone.
        runs.append((name, data.get("depths", data), data.get("predicted", {})))
    common = [key for key in runs[0][1] if all(key in depths for _, depths, _ in runs)]
    if not common:
        sys.exit("no position is in every file")
    predicted = runs[0][2]
    groups = [("", common)]
    if predicted:
        groups += [(" the reply %s by %s" % (word, runs[0][0]),
                    [key for key in common if predicted.get(key) is flag])
                   for word, flag in (("predicted", True), ("not predicted", False))]
    for label, keys in groups:
        if not keys:
            continue
        print("%d positions in every file%s" % (len(keys), label))
        for name, depths, _ in runs:
            print("  %s: mean depth %.2f" % (name, sum(depths[key] for key in keys) / len(keys)))


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("run", "compare"):
        sys.exit(__doc__)
    try:
        (run if sys.argv[1] == "run" else compare)(sys.argv[2:])
    except BrainError as error:
        sys.exit(str(error))


if __name__ == "__main__":
    main()
