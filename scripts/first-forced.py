#!/usr/bin/env python3
"""Who first reaches a forced win in a match's games, and whether that side then wins.

usage:
  scripts/first-forced.py scan MATCH_JSON GAMES NODES OUT_JSONL ANALYST_CMD...
  scripts/first-forced.py report PLAYER SCAN_JSONL...

`scan` gives the first GAMES games of a `connect5 match --json` summary (gzipped or not) to an
analyst brain (any Gomocup brain whose MESSAGE lines report forced results: Rapfi's `Eval +M25`,
connect5's `win in 25 plies`), one search limited to NODES nodes at each ply from the end of the
opening, and stops a game at the first position where the analyst reports a forced result for
either side. Each game is one JSON line: the game's number, colours and result, the opening's
length and the analyst's score at each ply scanned (as it printed it). A node limit makes the scan
the same on any machine and load; the analyst is one process, so what its table keeps from one
position to the next is part of the measure (positions come in the order played).

`report` reads scans and counts, for PLAYER: in how many games the first forced win was its own
or its opponent's, at which ply (median), and how many of those games the side with that win
went on to win. It separates the two halves of a result: reaching a won position first (the
quiet play before any forced result), and converting it (the play after).
"""
import json
import statistics
import sys

from gomocup_brain import (Brain, BrainError, analyst_score, forced_sign, game_stones,
                           load_games)


def scan(summary, count, nodes, out, analyst_cmd):
    games = load_games(summary)[:count]
    analyst = Brain(analyst_cmd)
    with open(out, "w") as f:
        for game in games:
            stones = game_stones(game)
            opening = len(game["opening"])
            scores = []
            for ply in range(opening, len(stones)):
                _, messages, _ = analyst.think(game["rows"], game["cols"], stones[:ply], 600000,
                                               max_nodes=nodes)
                score = analyst_score(messages)
                scores.append(score)
                if forced_sign(score) != 0:
                    break
            line = {"game": game["game"], "black": game["black"], "white": game["white"],
                    "result": game["result"], "opening": opening, "scores": scores}
            f.write(json.dumps(line) + "\n")
            f.flush()
            print("game %d: %s" % (game["game"], scores[-1] if scores else "no move"), flush=True)
    analyst.close()


def report(player, scans):
    first = {"own": [], "opponent's": []}
    converted = {"own": 0, "opponent's": 0}
    unresolved = 0
    for path in scans:
        try:
            with open(path) as f:
                lines = [json.loads(text) for text in f if text.strip()]
        except (OSError, ValueError) as error:
            sys.exit("%s is not a scan of first-forced.py: %s" % (path, error))
        for line in lines:
            if player not in (line["black"], line["white"]):
                sys.exit("%s: game %d has no player %r" % (path, line["game"], player))
            sign = forced_sign(line["scores"][-1] if line["scores"] else None)
            if sign == 0:
                unresolved += 1
                continue
            ply = line["opening"] + len(line["scores"]) - 1
            black_to_move = ply % 2 == 0
            winner_is_black = black_to_move == (sign > 0)
            winner = line["black"] if winner_is_black else line["white"]
            side = "own" if winner == player else "opponent's"
            first[side].append(ply)
            game_winner = {"1-0": line["black"], "0-1": line["white"]}.get(line["result"])
            converted[side] += game_winner == winner
    games = len(first["own"]) + len(first["opponent's"]) + unresolved
    print("%s, %d games:" % (player, games))
    for side in ("own", "opponent's"):
        plies = first[side]
        median = "ply %g" % statistics.median(plies) if plies else "-"
        print("  first forced win %-10s %3d games (median %s), converted in %d" % (
            side, len(plies), median, converted[side]))
    print("  no forced result before the end: %d" % unresolved)


def main():
    try:
        if len(sys.argv) >= 7 and sys.argv[1] == "scan":
            scan(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6:])
        elif len(sys.argv) >= 4 and sys.argv[1] == "report":
            report(sys.argv[2], sys.argv[3:])
        else:
            sys.exit(__doc__)
    except BrainError as error:
        sys.exit(str(error))
    except ValueError as error:
        sys.exit("a number was expected: %s" % error)


if __name__ == "__main__":
    main()
