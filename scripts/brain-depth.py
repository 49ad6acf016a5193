#!/usr/bin/env python3
"""Depth a Gomocup brain reaches on the positions of recorded games, position by position, so
that two engines, two turn times or a kept and a new table compare on the same positions
(docs/engine.md, "Issue 13, session 73").

usage: scripts/brain-depth.py run [--turn MS] [--depth D] [--games N] [--new] OUT_JSON MATCH_JSON BRAIN_CMD...
       scripts/brain-depth.py compare OUT_JSON...

`run` replays one side's positions of the first N games (default 3) of a `connect5 match --json`
summary, each side in a brain process of its own as in a match (its table kept from move to
move), or with `--new` in a new process for every position (a new table every search). Each
position is sent as `BOARD` with `INFO timeout_turn MS` (default 1000) and exact five. The depth
is read from the brain's MESSAGE line: connect5's `depth N`, Rapfi's `Depth N-M`; a search that
took less than a tenth of the turn (a forced or instant answer) is left out. OUT_JSON holds
`depths`, "game,ply" to the depth, and `predicted`, "game,ply" to whether the game went the way
the same brain's search two plies before expected: the move played there and the opponent's reply
are the first two moves of its principal variation (connect5's `pv`, Rapfi's `Bestline`), where
that search reported one (until session 82, the reply alone). `compare`
prints each file's mean depth over the positions all of them hold, and again over those the
first file's brain had predicted and those it had not: a table kept from move to move can only
know the position well when the game went as it expected (docs/engine.md, "session 74"). Run it on an
idle machine, one brain at a time.

With `--depth D` each search is limited to D plies instead (`INFO max_depth D`, a turn of an hour
unless `--turn` says otherwise) and every search counts: the measure is then the nodes it took
(connect5's `nodes N`, Rapfi's `Node N`, which Rapfi rounds to thousands), the same on any
machine, and `compare` prints each file's nodes beside the first file's, in total and the median
of the position by position ratios (over the positions the first file's brain searched in at
least 10,000 nodes; docs/engine.md, "session 82").
"""
import json
import re
import statistics
import sys

from gomocup_brain import Brain, BrainError, game_stones, load_games

CONNECT5 = re.compile(r"\bdepth (\d+)\b.*\btime (\d+) ms")
RAPFI = re.compile(r"\bDepth (\d+)-\d+\b.*\bTime (\d+)ms")
# The median of the node ratios counts the positions whose search in the first file took this many.
MEDIAN_FROM_NODES = 10_000
CONNECT5_NODES = re.compile(r"\bnodes (\d+)\b")
RAPFI_NODES = re.compile(r"\bNode (\d+)([KM]?) ")
CONNECT5_PV = re.compile(r"\bpv ((?:\d+,\d+ ?)+)")
RAPFI_PV = re.compile(r"\bBestline ((?:[A-Z]\d+ ?)+)")


def searched_depth(messages, turn_ms):
    """The depth of the search the MESSAGE lines report; None for one shorter than a tenth of
    the turn (or, with `turn_ms` None, for none reported)."""
    for message in reversed(messages):
        found = CONNECT5.search(message) or RAPFI.search(message)
        if found:
            depth, ms = int(found.group(1)), int(found.group(2))
            return depth if turn_ms is None or ms > turn_ms // 10 else None
    return None


def searched_nodes(messages):
    """The nodes of the search the MESSAGE lines report, None without a count."""
    for message in reversed(messages):
        connect5, rapfi = CONNECT5_NODES.search(message), RAPFI_NODES.search(message)
        if connect5:
            return int(connect5.group(1))
        if rapfi:
            return int(rapfi.group(1)) * {"": 1, "K": 1000, "M": 1000000}[rapfi.group(2)]
    return None


def expected_line(messages):
    """The first two moves of the last principal variation the MESSAGE lines report, as
    [(row, col), (row, col)]: the search's move and the reply it expects (Rapfi writes a cell as
    its column's letter from A and its row from 1); None without them."""
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
        return line[:2] if len(line) > 1 else None
    return None


def run(args):
    turn_ms, games_wanted, new, max_depth = None, 3, False, None
    while args and args[0].startswith("--"):
        option = args.pop(0)
        if option == "--new":
            new = True
        elif option in ("--turn", "--games", "--depth") and args:
            try:
                value = int(args.pop(0))
            except ValueError:
                sys.exit("%s needs a whole number\n%s" % (option, __doc__))
            if option == "--turn":
                turn_ms = value
            elif option == "--games":
                games_wanted = value
            else:
                max_depth = value
        else:
            sys.exit(__doc__)
    if turn_ms is None:
        turn_ms = 3_600_000 if max_depth is not None else 1000
    if len(args) < 3:
        sys.exit(__doc__)
    out, summary, command = args[0], args[1], args[2:]
    games = load_games(summary)[:games_wanted]
    depths = {}
    nodes = {}
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
                    if max_depth is not None:
                        brain.send("INFO max_depth %d" % max_depth)
                try:
                    _, messages, _ = brain.play(stones[:ply])
                except BrainError as error:
                    raise BrainError("game %d, ply %d: %s" % (game["game"], ply, error))
                key = "%d,%d" % (game["game"], ply)
                depth = searched_depth(messages, None if max_depth is not None else turn_ms)
                if depth is not None:
                    depths[key] = depth
                    searched = searched_nodes(messages)
                    if max_depth is not None and searched is not None:
                        nodes[key] = searched
                if expected is not None:
                    predicted[key] = expected == stones[ply - 2:ply]
                expected = expected_line(messages)
        if brain is not None:
            brain.close()
    with open(out, "w") as f:
        json.dump({"depths": depths, "nodes": nodes, "predicted": predicted}, f)
    if depths:
        print("%s: %d searches, mean depth %.2f%s"
              % (out, len(depths), sum(depths.values()) / len(depths),
                 ", %d nodes" % sum(nodes.values()) if nodes else ""))


def compare(files):
    runs = []
    for name in files:
        with open(name) as f:
            data = json.load(f)
        # Files written before session 74 hold the depths alone.
        runs.append((name, data.get("depths", data), data.get("predicted", {}),
                     data.get("nodes", {})))
    common = [key for key in runs[0][1] if all(key in depths for _, depths, _, _ in runs)]
    if not common:
        sys.exit("no position is in every file")
    predicted = runs[0][2]
    # Node counts compare only where every file has them (runs with `--depth`).
    counted = all(all(key in nodes for key in common) for _, _, _, nodes in runs)
    groups = [("", common)]
    if predicted:
        groups += [(label % runs[0][0], [key for key in common if predicted.get(key) is flag])
                   for label, flag in ((", where the game went as %s's brain expected", True),
                                       (", where it did not (%s)", False))]
    for label, keys in groups:
        if not keys:
            continue
        print("%d positions in every file%s" % (len(keys), label))
        first_nodes = runs[0][3]
        for name, depths, _, nodes in runs:
            line = "  %s: mean depth %.2f" % (name, sum(depths[key] for key in keys) / len(keys))
            if counted:
                total = sum(nodes[key] for key in keys)
                # Searches of a few nodes (a forced win read at once) would hide the rest.
                ratios = [nodes[key] / first_nodes[key] for key in keys
                          if first_nodes[key] >= MEDIAN_FROM_NODES]
                line += ", %d nodes (%.3f of the first file's; %s)" % (
                    total, total / max(1, sum(first_nodes[key] for key in keys)),
                    "median ratio %.2f" % statistics.median(ratios) if ratios
                    else "no search of %d nodes for a median" % MEDIAN_FROM_NODES)
            print(line)


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("run", "compare"):
        sys.exit(__doc__)
    try:
        (run if sys.argv[1] == "run" else compare)(sys.argv[2:])
    except BrainError as error:
        sys.exit(str(error))


if __name__ == "__main__":
    main()
