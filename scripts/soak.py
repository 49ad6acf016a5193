#!/usr/bin/env python3
"""Soak and fault test of `connect5 serve`, loopback only, bounded in time (under a minute).

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
import collections
import os
import random
import re
import socket
import struct
import subprocess
import sys
import time

BUDGET_MS = 200
# Small enough that the searches of the soak compete for it: the bar is peak RSS within it.
MEMORY_MB = 128
# How long the 256 clients of the first phase play games, one after the other.
GAMES_SECONDS = 20


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request_text(board, budget):
    side_rows = len(board)
    side_cols = len(board[0])
    rows = "\n".join("".join(r) for r in board)
    return f"{side_rows} {side_cols}\n{rows}\n{budget}\n"


DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))


def run_through(board, row, col, dr, dc, stone):
    """Length of the run of `stone` through (row, col) along (dr, dc), the cell counted as `stone`."""
    n, m = len(board), len(board[0])
    length = 1
    for sign in (1, -1):
        r, c = row + dr * sign, col + dc * sign
        while 0 <= r < n and 0 <= c < m and board[r][c] == stone:
            length += 1
            r, c = r + dr * sign, c + dc * sign
    return length


def five_at(board, row, col, stone):
    """Exactly five through (row, col) for `stone` (Connect5's rule)."""
    return any(run_through(board, row, col, dr, dc, stone) == 5 for dr, dc in DIRECTIONS)


def completes_five(board, row, col, dr, dc, stone):
    """Would `stone` on the empty cell (row, col) make exactly five along (dr, dc)?"""
    return run_through(board, row, col, dr, dc, stone) == 5


class Stats:
    def __init__(self):
        self.latencies = []
        self.bad = []
        self.refused = 0
        self.games = 0

    def late(self, budget):
        return sum(1 for x in self.latencies if x > budget)

    def worst(self):
        return max(self.latencies) if self.latencies else 0.0


# Linux's SO_TIMESTAMPNS (the socket module does not name it): the kernel stamps each received
# segment with the time it arrived.
SO_TIMESTAMPNS = 35


class Connection:
    """A client connection whose replies are timed by the kernel: each carries the moment it
    reached the client's socket, so a busy event loop in this process (hundreds of clients in one
    interpreter) does not count against the server."""

    def __init__(self, sock):
        self.sock = sock
        self.buffer = b""
        self.lines = asyncio.Queue()
        self.closed = False
        asyncio.get_running_loop().add_reader(sock.fileno(), self._readable)

    @classmethod
    async def open(cls, port):
        sock = socket.socket()
        sock.setblocking(False)
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        try:
            await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
        except OSError:
            sock.close()
            raise
        return cls(sock)

    def _readable(self):
        try:
            data, ancillary, _, _ = self.sock.recvmsg(65536, socket.CMSG_SPACE(16))
        except BlockingIOError:
            return
        except OSError:
            data, ancillary = b"", []
        arrived = time.time()
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                seconds, nanoseconds = struct.unpack("qq", payload[:16])
                arrived = seconds + nanoseconds / 1e9
        if not data:
            self._stop_reading()
            self.lines.put_nowait((arrived, None))
            return
        self.buffer += data
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            self.lines.put_nowait((arrived, line))

    def _stop_reading(self):
        if not self.closed:
            self.closed = True
            asyncio.get_running_loop().remove_reader(self.sock.fileno())

    async def readline(self, timeout=30):
        """(arrival time, line); the line is None once the server has closed the connection."""
        return await asyncio.wait_for(self.lines.get(), timeout)

    async def write(self, data):
        """Sends `data`; returns the time the last byte went (small requests go at once)."""
        await asyncio.get_running_loop().sock_sendall(self.sock, data)
        return time.time()

    def close(self):
        self._stop_reading()
        self.sock.close()


async def open_session(port):
    connection = await Connection.open(port)
    while True:
        _, line = await connection.readline()
        if line is None:
            raise ConnectionError("closed before READY")
        text = line.decode(errors="replace").strip()
        if text.startswith("ERROR busy"):
            connection.close()
            raise ConnectionRefusedError(text)
        if text == "READY":
            return connection


async def play_game(port, side, budget, stats, seed, max_moves=60):
    """The client blocks the server's five when it can, else plays at random near the server's
    last move; the server answers each move."""
    rng = random.Random(seed)
    try:
        connection = await open_session(port)
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
            # Kept cheap: the client shares the machine's two cores with the server.
            blocks = [
                (r, c)
                for dr, dc in DIRECTIONS
                for step in range(-4, 5)
                for r, c in [(last[0] + dr * step, last[1] + dc * step)]
                if 0 <= r < side and 0 <= c < side and board[r][c] == "0"
                and completes_five(board, r, c, dr, dc, "B")
            ]
            close = [
                (r, c)
                for r in range(max(0, last[0] - 2), min(side, last[0] + 3))
                for c in range(max(0, last[1] - 2), min(side, last[1] + 3))
                if board[r][c] == "0"
            ]
            empty = blocks or close or [
                (r, c) for r in range(side) for c in range(side) if board[r][c] == "0"
            ]
            if not empty:
                break
            r, c = rng.choice(empty)
            board[r][c] = "N"
            if five_at(board, r, c, "N"):
                break
            sent = await connection.write(request_text(board, budget).encode())
            arrived, line = await connection.readline()
            if line is None:
                stats.bad.append("connection closed")
                break
            stats.latencies.append((arrived - sent) * 1000)
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
    connection.close()


def closing_reason(line):
    if line is None:
        return "closed without a word"
    return "closed: " + line.decode(errors="replace").split(":")[0].split(";")[0].strip()


async def idle_client(port, outcome):
    try:
        connection = await open_session(port)
    except ConnectionRefusedError:
        outcome["refused"] += 1
        return
    except (OSError, asyncio.TimeoutError):
        outcome["failed"] += 1
        return
    _, line = await connection.readline(timeout=60)
    outcome[closing_reason(line)] += 1
    connection.close()


async def slowloris_client(port, outcome):
    try:
        connection = await open_session(port)
    except (OSError, asyncio.TimeoutError):
        outcome["failed"] += 1
        return
    text = request_text([["0"] * 15 for _ in range(15)], 1000)
    for byte in text.encode():
        if not connection.lines.empty() or connection.closed:
            break
        try:
            await connection.write(bytes([byte]))
        except OSError:
            break
        await asyncio.sleep(1)
    _, line = await connection.readline(timeout=60)
    outcome[closing_reason(line)] += 1
    connection.close()


async def garbage_client(port, seed):
    rng = random.Random(seed)
    try:
        connection = await open_session(port)
        await connection.write(bytes(rng.getrandbits(8) for _ in range(20_000)))
        connection.close()
    except (OSError, asyncio.TimeoutError):
        pass


class Server:
    def __init__(self, binary, args):
        self.port = free_port()
        self.log_path = f"/tmp/connect5-soak-{os.getpid()}-{self.port}.log"
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

    def wait(self, timeout):
        """Exit status and peak resident memory (MB) over the server's whole life."""
        deadline = time.time() + timeout
        while True:
            pid, status, usage = os.wait4(self.process.pid, os.WNOHANG)
            if pid:
                self.process.returncode = os.waitstatus_to_exitcode(status)
                return self.process.returncode, usage.ru_maxrss / 1024
            if time.time() > deadline:
                self.process.kill()
                return "killed after time-out", float("nan")
            time.sleep(0.05)


def record(server_text):
    found = re.findall(r"stopped: (\d+) replies, (\d+) after their budget, the slowest ([\d.]+) ms", server_text)
    return found[-1] if found else ("?", "?", "?")


async def play_games(port, side, budget, stats, seed, until):
    """Whole games, one after the other, until `until` (time.time())."""
    game = 0
    while time.time() < until:
        await play_game(port, side, budget, stats, seed * 1000 + game)
        game += 1
        stats.games += 1


async def stop(server, port):
    """`shutdown` from a loopback client; the server's exit status, peak RSS and record."""
    connection = await open_session(port)
    await connection.write(b"shutdown\n")
    status, peak = server.wait(timeout=30)
    return status, peak, record(server.text())


SERVER_ARGS = ["--max-connections", "1024", "--idle-timeout", "5", "--request-timeout", "3",
               "--memory", str(MEMORY_MB)]


async def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/connect5"
    rows = []

    # 1. Whole games, 256 clients at once, on a server of their own so that its record is theirs.
    server = Server(binary, SERVER_ARGS)
    games = Stats()
    started = time.time()
    await asyncio.gather(
        *(play_games(server.port, 20, BUDGET_MS, games, i, started + GAMES_SECONDS) for i in range(256))
    )
    status, peak_games, (replies, late, slowest) = await stop(server, server.port)
    rows.append(
        (f"256 clients, whole 20x20 games, {BUDGET_MS} ms a move", len(games.latencies),
         games.late(BUDGET_MS), f"{games.worst():.0f} ms",
         f"{games.games} games, {len(games.bad)} bad, {games.refused} refused; the server's record: "
         f"{replies} replies, {late} late, slowest {slowest} ms; exit {status}",
         f"{time.time() - started:.0f} s")
    )

    server = Server(binary, SERVER_ARGS)
    port = server.port

    # 2. Idle and slowloris clients while others play.
    outcome = collections.defaultdict(int)
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
        connection = await open_session(port)
        await connection.write(request_text(big, 36_000_000).encode())
        connection.close()
    fresh = Stats()
    await play_game(port, 20, BUDGET_MS, fresh, 7, max_moves=3)
    after = server.text()[len(before):]
    stops = [float(x) for x in re.findall(r"stopped_ms=([\d.]+)", after)]
    no_search = after.count("the client left: no search")
    rows.append(
        ("100 abandoned 10-hour 20x20 requests, then a client playing", len(fresh.latencies),
         fresh.late(BUDGET_MS), f"{fresh.worst():.0f} ms",
         f"{len(stops)} searches stopped, the slowest {max(stops, default=0):.1f} ms after its "
         f"client left; {no_search} never started", "")
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
    sessions = [await open_session(port) for _ in range(64)]
    board = [["0"] * 15 for _ in range(15)]
    board[7][7] = "N"
    board[7][8] = "B"
    for connection in sessions:
        await connection.write(request_text(board, 2000).encode())
    status, peak, (replies, late, slowest) = await stop(server, port)
    delivered = 0
    undelivered = []
    for connection in sessions:
        _, line = await connection.readline()
        try:
            row, col = map(int, line.split()[:2])
            delivered += board[row][col] == "0"
        except (ValueError, AttributeError):
            undelivered.append(line)
    rows.append(
        ("shutdown with 64 searches in flight", delivered, "", "",
         f"{delivered} of 64 in-flight replies delivered, exit status {status}"
         + (f"; instead: {undelivered[:3]}" if undelivered else ""), "")
    )

    print("| phase | replies | late (client) | worst (client) | what happened | time |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(x) for x in row) + " |")
    print()
    print(f"Server of phases 2-5, its own record: {replies} replies, {late} after their budget, "
          f"the slowest {slowest} ms after its request (the 2000 ms requests of the shutdown).")
    print(f"Peak resident memory: {peak_games:.1f} MB (phase 1), {peak:.1f} MB (phases 2-5), "
          f"with --memory {MEMORY_MB}.")
    print(f"Server log: {server.log_path}")


if __name__ == "__main__":
    asyncio.run(main())
