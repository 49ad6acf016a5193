#!/usr/bin/env python3
"""Speed of connect5 as a Gomocup brain on the positions of real games: nodes per second and
depth of timed searches, where `connect5 bench` measures fixed-depth searches of six positions.

usage: scripts/brain-speed.py BINARY MATCH_JSON [GAMES] [TURN_MS]

Replays the first GAMES (default 6) games of a `connect5 match --json` summary through one
`BINARY gomocup` process: for each game a `START`, then every other position from the one after
the opening (those of the side to move there), sent as `BOARD` with `INFO timeout_turn TURN_MS`
(default 300), so the brain keeps its table from move to move as in a match. Reads the
`MESSAGE depth .. nodes .. time ..` line the brain prints before each move and sums the searches
that took over 20 ms (instant answers, such as forced blocks, say nothing of speed). Run it on an
idle machine: the figure is the machine's as much as the engine's; compare two binaries on the
same summary, in turns.
"""
import sys

from gomocup_brain import Brain, BrainError, game_stones, load_games


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, summary = sys.argv[1], sys.argv[2]
    games_wanted = int(sys.argv[3]) if len(sys.argv) > 3 else 6
    turn_ms = int(sys.argv[4]) if len(sys.argv) > 4 else 300
    try:
        brain = Brain([binary, "gomocup"])
        nodes = elapsed_ms = searches = depth_sum = 0
        for game in load_games(summary)[:games_wanted]:
            brain.start(game["rows"], game["cols"], turn_ms)
            stones = game_stones(game)
            for ply in range(len(game["opening"]), len(stones), 2):
                _, messages, _ = brain.play(stones[:ply])
                for words in (message.split() for message in messages):
                    if "nodes" not in words or "time" not in words:
                        continue
                    ms = int(words[words.index("time") + 1])
                    if ms > 20:
                        nodes += int(words[words.index("nodes") + 1])
                        elapsed_ms += ms
                        depth_sum += int(words[words.index("depth") + 1])
                        searches += 1
        brain.close()
    except BrainError as error:
        sys.exit(str(error))
    if searches == 0:
        sys.exit("no search over 20 ms in these games")
    print("%s: %d searches, %d nodes in %d ms, %.0f nodes/s, mean depth %.2f"
          % (binary, searches, nodes, elapsed_ms, nodes / elapsed_ms * 1000, depth_sum / searches))


if __name__ == "__main__":
    main()
