#!/usr/bin/env python3
"""How fast a Gomocup brain finds the long forced wins of real games.

usage:
  scripts/win-suite.py build MATCH_JSON PLAYER TURN_MS OUT_JSON ANALYST_CMD...
  scripts/win-suite.py run SUITE_JSON TURN_MS BRAIN_CMD...

`build` replays the games PLAYER lost in a `connect5 match --json` summary through an analyst
brain (any Gomocup brain whose MESSAGE lines give a mate score: Rapfi's `Eval -M32`, connect5's
`loss in 32 plies`), one search of TURN_MS at each of PLAYER's turns. At the first turn where the
analyst finds PLAYER lost by force, the position after PLAYER's move there is kept: the opponent
is to move and has a forced win that PLAYER's search did not see. The suite is a JSON list of
{game, ply, mate, rows, cols, stones} (`stones` in the order played, black first).

`run` gives each position to BRAIN_CMD (one process, `START` before each, `INFO timeout_turn
TURN_MS`) and counts the positions where the brain's MESSAGE lines report the win (`win in`, or
`Eval +M`) and the time it took; a position not solved counts the whole turn. A brain stops when
it has proved a win, so the mean time is how long its search needs to see one. The figure is the
machine's as much as the engine's, and it is a timed search: run it on an idle machine and
compare variants in turns.
"""
import json
import sys

from gomocup_brain import (Brain, BrainError, game_stones, load_games, mate_against_mover,
                           reports_win)


def build(summary, player, turn_ms, out, analyst_cmd):
    games = load_games(summary)
    analyst = Brain(analyst_cmd)
    suite = []
    for game in games:
        as_black = game["black"] == player
        lost = game["result"] == ("0-1" if as_black else "1-0")
        if not lost:
            continue
        stones = game_stones(game)
        for ply in range(len(game["opening"]), len(stones)):
            if (ply % 2 == 0) != as_black:
                continue
            _, messages, _ = analyst.think(game["rows"], game["cols"], stones[:ply], turn_ms)
            mate = mate_against_mover(messages)
            if mate is not None:
                suite.append({"game": game["game"], "ply": ply, "mate": mate,
                              "rows": game["rows"], "cols": game["cols"],
                              "stones": stones[:ply + 1]})
                print("game %d: lost at ply %d, mate in %d" % (game["game"], ply, mate), flush=True)
                break
    analyst.close()
    with open(out, "w") as f:
        json.dump(suite, f)
    print("%d positions written to %s" % (len(suite), out))


def run(suite_file, turn_ms, brain_cmd):
    with open(suite_file) as f:
        suite = json.load(f)
    brain = Brain(brain_cmd)
    solved = 0
    total_ms = 0.0
    for position in suite:
        _, messages, elapsed = brain.think(position["rows"], position["cols"],
                                           [tuple(s) for s in position["stones"]], turn_ms)
        won = reports_win(messages)
        solved += won
        total_ms += elapsed if won else turn_ms
        print("game %d ply %d (mate in %d): %s in %.0f ms" % (
            position["game"], position["ply"], position["mate"],
            "win found" if won else "no win", elapsed), flush=True)
    brain.close()
    print("solved %d of %d, mean time %.0f ms (a position not solved counts %d ms)" % (
        solved, len(suite), total_ms / len(suite), turn_ms))


def main():
    try:
        if len(sys.argv) >= 7 and sys.argv[1] == "build":
            build(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6:])
        elif len(sys.argv) >= 5 and sys.argv[1] == "run":
            run(sys.argv[2], int(sys.argv[3]), sys.argv[4:])
        else:
            sys.exit(__doc__)
    except BrainError as error:
        sys.exit(str(error))


if __name__ == "__main__":
    main()
