#!/usr/bin/env python3
"""Soak and fault test of `connect5 serve`, loopback only, bounded in time (about two minutes).

usage: scripts/soak.py [BINARY]      (default: target/release/connect5)

Starts its own server on a free port of 127.0.0.1 and runs, one after the other:

  games      256 clients at once, each playing a whole 20x20 game at 200 ms a move
  idle       600 idle connections and 20 slowloris clients, while 32 clients play 15x15 games
  abandoned  100 clients that send a 20x20 request of 10 hours and hang up at once, then one
             client that asks a normal request
  garbage    50 clients sending random bytes, while 16 clients play
  shutdown   64 requests in flight when a loopback client sends `shutdown`

and prints one table: replies, late replies (over the budget, as the clients measured them from
the request's last byte to the reply, and as the server recorded them), the worst latency, what
happened to the hostile clients, the peak resident memory of the server, and its exit status.
The clients are asyncio coroutines in one process: one waits on a socket without holding up the
others, so the client side is not the bottleneck at these rates.
"""
import asyncio
import os
import random
import re
import socket
import subprocess
import sys
import time

BUDGET_MS = 200


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request_text(board, budget):
    side_rows = len(board)
    side_cols = len(board[0])
    rows = "\n".join("".join(r) for r in board)
    return f"{side_rows} {side_cols}\n{rows}\n{budget}\n"


def five_at(board, row, col, stone):
    """Exactly five through (row, col) for `stone` (Connect5's rule)."""
    n, m = len(board), len(board[0])
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        length = 1
        for sign in (1, -1):
            r, c = row + dr * sign, col + dc * sign
            while 0 <= r < n and 0 <= c < m and board[r][c] == stone:
                length += 1
                r, c = r + dr * sign, c + dc * sign
        if length == 5:
            return True
    return False


class Stats:
    def __init__(self):
        self.latencies = []
        self.bad = []
        self.refused = 0

    def late(self, budget):
        return sum(1 for x in self.latencies if x > budget)

    def worst(self):
        return max(self.latencies) if self.latencies else 0.0


async def open_session(port):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    while True:
        line = await asyncio.wait_for(reader.readline(), 30)
        if not line:
            raise ConnectionError("closed before READY")
        text = line.decode(errors="replace").strip()
        if text.startswith("ERROR busy"):
            raise ConnectionRefusedError(text)
        if text == "READY":
            return reader, writer


async def play_game(port, side, budget, stats, seed, max_moves=60):
    """The client plays random moves near the server's last one; the server answers each."""
    rng = random.Random(seed)
    try:
        reader, writer = await open_session(port)
    except ConnectionRefusedError:
        stats.refused += 1
        return
    except (OSError, asyncio.TimeoutError) as error:
        stats.bad.append(repr(error))
        return
    board = [["0"] * side for _ in range(side)]
    last = (side // 2, side // 2)
    try:
        for move in range(max_moves):
            # The client is black (N): it moves, then asks the server for white's move.
            empty = [
                (r, c)
                for r in range(max(0, last[0] - 2), min(side, last[0] + 3))
                for c in range(max(0, last[1] - 2), min(side, last[1] + 3))
                if board[r][c] == "0"
            ] or [(r, c) for r in range(side) for c in range(side) if board[r][c] == "0"]
            if not empty:
                break
            r, c = rng.choice(empty)
            board[r][c] = "N"
            if five_at(board, r, c, "N"):
                break
            writer.write(request_text(board, budget).encode())
            await writer.drain()
            sent = time.perf_counter()
            line = await asyncio.wait_for(reader.readline(), 30)
            stats.latencies.append((time.perf_counter() - sent) * 1000)
            try:
                row, col = map(int, line.split()[:2])
                assert board[row][col] == "0"
            except (ValueError, AssertionError, IndexError):
                stats.bad.append(line.decode(errors="replace").strip())
                break
            board[row][col] = "B"
            last = (row, col)
            if five_at(board, row, col, "B"):
                break
    except (OSError, asyncio.TimeoutError) as error:
        stats.bad.append(repr(error))
    writer.close()


async def idle_client(port, outcome):
    try:
        reader, writer = await open_session(port)
    except ConnectionRefusedError:
        outcome["refused"] += 1
        return
    except (OSError, asyncio.TimeoutError):
        outcome["failed"] += 1
        return
    line = await reader.readline()
    outcome["closed: " + line.decode(errors="replace").split(":")[0].strip()] += 1
    writer.close()


async def slowloris_client(port, outcome):
    try:
        reader, writer = await open_session(port)
    except (OSError, asyncio.TimeoutError):
        outcome["failed"] += 1
        return
    text = request_text([["0"] * 15 for _ in range(15)], 1000)
    reply = asyncio.ensure_future(reader.readline())
    for byte in text.encode():
        if reply.done():
            break
        try:
            writer.write(bytes([byte]))
            await writer.drain()
        except OSError:
            break
        await asyncio.sleep(1)
    line = await reply
    outcome["closed: " + line.decode(errors="replace").split(":")[0].strip()] += 1
    writer.close()


async def garbage_client(port, seed):
    rng = random.Random(seed)
    try:
        reader, writer = await open_session(port)
        writer.write(bytes(rng.getrandbits(8) for _ in range(20_000)))
        await writer.drain()
        writer.close()
    except (OSError, asyncio.TimeoutError):
        pass


class Server:
    def __init__(self, binary, args):
        self.port = free_port()
        self.log_path = f"/tmp/connect5-soak-{os.getpid()}.log"
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [binary, "serve", "--listen", f"127.0.0.1:{self.port}", *args],
            stdout=subprocess.DEVNULL,
            stderr=self.log,
            env={**os.environ, "RUST_LOG": "info", "NO_COLOR": "1"},
        )
        deadline = time.time() + 10
        while "listening on" not in self.text():
            if time.time() > deadline or self.process.poll() is not None:
                sys.exit(f"the server did not start:\n{self.text()}")
            time.sleep(0.05)

    def text(self):
        with open(self.log_path) as f:
            return f.read()

    def peak_rss_mb(self):
        with open(f"/proc/{self.process.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return float("nan")


def record(server_text):
    found = re.findall(r"stopped: (\d+) replies, (\d+) after their budget, the slowest ([\d.]+) ms", server_text)
    return found[-1] if found else ("?", "?", "?")


async def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/connect5"
    server = Server(
        binary,
        ["--max-connections", "1024", "--idle-timeout", "5", "--request-timeout", "3"],
    )
    port = server.port
    rows = []

    # 1. Whole games, 256 at once.
    games = Stats()
    started = time.time()
    await asyncio.gather(*(play_game(port, 20, BUDGET_MS, games, i) for i in range(256)))
    rows.append(
        ("256 clients, whole 20x20 games, 200 ms", len(games.latencies), games.late(BUDGET_MS),
         f"{games.worst():.0f} ms", f"{len(games.bad)} bad, {games.refused} refused",
         f"{time.time() - started:.0f} s")
    )

    # 2. Idle and slowloris clients while others play.
    outcome = {"refused": 0, "failed": 0}
    outcome = __import__("collections").defaultdict(int, outcome)
    players = Stats()
    started = time.time()
    hostile = [idle_client(port, outcome) for _ in range(600)]
    hostile += [slowloris_client(port, outcome) for _ in range(20)]
    hostile_tasks = [asyncio.ensure_future(h) for h in hostile]
    await asyncio.sleep(0.5)
    await asyncio.gather(*(play_game(port, 15, BUDGET_MS, players, 1000 + i) for i in range(32)))
    await asyncio.gather(*hostile_tasks)
    rows.append(
        ("600 idle + 20 slowloris, 32 clients playing 15x15", len(players.latencies),
         players.late(BUDGET_MS), f"{players.worst():.0f} ms",
         ", ".join(f"{k} {v}" for k, v in sorted(outcome.items()) if v),
         f"{time.time() - started:.0f} s")
    )

    # 3. Abandoned long requests, then a normal one.
    before = server.text()
    big = [["0"] * 20 for _ in range(20)]
    for r, c, s in ((9, 9, "N"), (10, 10, "B"), (9, 11, "N"), (11, 11, "B")):
        big[r][c] = s
    for _ in range(100):
        reader, writer = await open_session(port)
        writer.write(request_text(big, 36_000_000).encode())
        await writer.drain()
        writer.close()
    await asyncio.sleep(1)
    after = server.text()[len(before):]
    stops = [float(x) for x in re.findall(r"stopped_ms=([\d.]+)", after)]
    no_search = after.count("the client left: no search")
    fresh = Stats()
    await play_game(port, 20, BUDGET_MS, fresh, 7, max_moves=3)
    rows.append(
        ("100 abandoned 10-hour 20x20 requests", len(fresh.latencies), fresh.late(BUDGET_MS),
         f"{fresh.worst():.0f} ms",
         f"{len(stops)} searches stopped, slowest {max(stops, default=0):.1f} ms after the client left; "
         f"{no_search} never started", "")
    )

    # 4. Random bytes while others play.
    players = Stats()
    await asyncio.gather(
        *(garbage_client(port, i) for i in range(50)),
        *(play_game(port, 15, BUDGET_MS, players, 2000 + i) for i in range(16)),
    )
    alive = server.process.poll() is None
    rows.append(
        ("50 random-byte sessions, 16 clients playing", len(players.latencies),
         players.late(BUDGET_MS), f"{players.worst():.0f} ms",
         f"server {'up' if alive else 'DOWN'}, {len(players.bad)} bad replies", "")
    )

    # 5. Shutdown with 64 searches in flight.
    peak = server.peak_rss_mb()
    sessions = [await open_session(port) for _ in range(64)]
    board = [["0"] * 15 for _ in range(15)]
    board[7][7] = "N"
    board[7][8] = "B"
    for _, writer in sessions:
        writer.write(request_text(board, 2000).encode())
        await writer.drain()
    reader, writer = await open_session(port)
    writer.write(b"shutdown\n")
    await writer.drain()
    delivered = 0
    for r, _ in sessions:
        line = await asyncio.wait_for(r.readline(), 30)
        try:
            row, col = map(int, line.split()[:2])
            delivered += board[row][col] == "0"
        except ValueError:
            pass
    status = server.process.wait(timeout=30)
    replies, late, slowest = record(server.text())
    rows.append(
        ("shutdown with 64 searches in flight", delivered, "", "",
         f"{delivered} of 64 in-flight replies delivered, exit status {status}", "")
    )

    print("| phase | replies | late (client) | worst (client) | what happened | time |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(x) for x in row) + " |")
    print()
    print(f"Server's own record over the whole run: {replies} replies, {late} after their budget, "
          f"the slowest {slowest} ms after its request; peak resident memory {peak:.1f} MB.")
    print(f"Server log: {server.log_path}")


if __name__ == "__main__":
    asyncio.run(main())
