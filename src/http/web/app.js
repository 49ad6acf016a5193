// connect5 web board: play the engine, analyse a position, the morpion lab.
//
// Plain JavaScript, no build step, no dependency: it talks to the JSON API of docs/http.md on
// the same origin (POST /v1/move, POST /v1/analyse as server-sent events read with fetch,
// POST /v1/morpion/move, GET /healthz).
//
// Stable hooks for tests (tests/web_board.rs drives the page through WebDriver with them):
//   #board                 the board (focusable; arrows move the cursor, Enter/Space plays)
//   [data-row][data-col]   every cell, inside #board (row 0 at the top, as the protocol)
//     data-stone="black|white"   on an occupied cell (in the morpion lab X is black, O white)
//     class "last"          the last move of the shown position
//     class "win"           the cells of the winning line (one line of exactly K stones)
//     class "best"          the analysis' best move (analyse mode)
//     class "cursor"        the keyboard cursor
//     data-beads / data-value    morpion lab: MENACE's bead count / the perfect player's value
//                           on the cells of the position the agent moved from
//   #status                the status line (aria-live); when a game ends it contains
//                          "Black wins", "White wins" or "Draw" (morpion lab: "X wins",
//                          "O wins" or "Draw")
//   #engine-info           the engine's last answer: score or mate, depth, nodes, time
//   #new-game #undo #resign #engine-move           buttons
//   #rows #cols #colour (black|white) #time #overline   the new game's settings
//   #mode                  select: play | analyse | morpion
//   #analysis              analysis panel, with #analysis-depth, #analysis-score,
//                          #analysis-pv, #analysis-nps; #analyse-start, #analyse-stop,
//                          #analysis-time; #edit-tool (play | cycle | black | white | erase)
//   #position-text         textarea; #paste-position loads it, #copy-position fills it
//   #import-file           file input (.psq, .sgf, or position text)
//   #step-first #step-prev #step-next #step-last   step through the game's moves
//   #moves                 the move list (buttons with data-ply jump to a position)
//   #morpion-agent #morpion-side   the morpion lab's agent and your symbol (X|O)
//   document.body.dataset.engineBusy   "1" while a /v1/move or /v1/morpion/move request is in
//                          flight, "0" otherwise
//   document.body.dataset.analysing    "1" while an analysis stream is open, "0" otherwise

"use strict";

// ---------------------------------------------------------------------------------------------
// Rules and coordinates

const EMPTY = 0;
const BLACK = 1;
const WHITE = 2;
const STONE_NAMES = ["", "black", "white"];
const MAX_SIDE = 128;
const DIRECTIONS = [
  [0, 1],
  [1, 0],
  [1, 1],
  [1, -1],
];

/** The line length that wins on a rows×cols board: 5, unless both sides are shorter than 5. */
function defaultK(rows, cols) {
  return rows < 5 && cols < 5 ? Math.min(rows, cols) : 5;
}

/** Column letters as gomoku players write them: a … z, then aa, ab … */
function columnName(col) {
  let n = col + 1;
  let name = "";
  while (n > 0) {
    n -= 1;
    name = String.fromCharCode(97 + (n % 26)) + name;
    n = Math.floor(n / 26);
  }
  return name;
}

/** `h8`: column letter from the left, row number from the bottom. */
function cellName(row, col, rows) {
  return columnName(col) + String(rows - row);
}

/** `h8 (7 7)`: the gomoku name and the protocol's `row col`. */
function bothNames(row, col, rows) {
  return `${cellName(row, col, rows)} (${row} ${col})`;
}

function capitalise(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function other(stone) {
  return stone === BLACK ? WHITE : BLACK;
}

function countStones(grid) {
  let black = 0;
  let white = 0;
  for (const cell of grid) {
    if (cell === BLACK) black += 1;
    else if (cell === WHITE) white += 1;
  }
  return { black, white };
}

/** Black moves when the counts are equal, white when black has one more; else null. */
function sideToMove(grid) {
  const { black, white } = countStones(grid);
  if (black === white) return BLACK;
  if (black === white + 1) return WHITE;
  return null;
}

/**
 * The winning line of a position, or null: a run of exactly k stones (k or more when overlines
 * win). Prefers a line through `prefer` (the last move) when there is one.
 */
function findWin(grid, rows, cols, k, overline, prefer) {
  let found = null;
  for (let row = 0; row < rows; row += 1) {
    for (let col = 0; col < cols; col += 1) {
      const stone = grid[row * cols + col];
      if (stone === EMPTY) continue;
      for (const [dr, dc] of DIRECTIONS) {
        const pr = row - dr;
        const pc = col - dc;
        if (pr >= 0 && pr < rows && pc >= 0 && pc < cols && grid[pr * cols + pc] === stone) {
          continue; // not the start of its run
        }
        const cells = [];
        let r = row;
        let c = col;
        while (r >= 0 && r < rows && c >= 0 && c < cols && grid[r * cols + c] === stone) {
          cells.push([r, c]);
          r += dr;
          c += dc;
        }
        const wins = overline ? cells.length >= k : cells.length === k;
        if (!wins) continue;
        const line = { stone, cells };
        if (prefer && cells.some(([a, b]) => a === prefer.row && b === prefer.col)) return line;
        if (found === null) found = line;
      }
    }
  }
  return found;
}

// ---------------------------------------------------------------------------------------------
// Position text, Piskvork .psq and SGF

class InputError extends Error {}

function newGrid(rows, cols) {
  return new Uint8Array(rows * cols);
}

function checkSize(rows, cols) {
  if (!Number.isInteger(rows) || !Number.isInteger(cols) || rows < 1 || cols < 1 ||
      rows > MAX_SIDE || cols > MAX_SIDE) {
    throw new InputError(`board size ${rows}×${cols} out of range (each side 1 to ${MAX_SIDE})`);
  }
}

function cleanLine(line) {
  return line.replace(/^\uFEFF/, "").replace(/\0/g, "").trim();
}

const CELL_CODES = { "0": EMPTY, ".": EMPTY, "-": EMPTY, N: BLACK, n: BLACK, X: BLACK, x: BLACK,
  B: WHITE, b: WHITE, O: WHITE, o: WHITE };

/**
 * The protocol's text form: `L C` (or `L C K`), L rows of `0`/`N`/`B`, optionally a time line.
 * Returns a record { rows, cols, k, start, moves: [], time }.
 */
function parsePositionText(text) {
  const lines = text.split(/\r?\n/).map(cleanLine);
  let i = 0;
  while (i < lines.length && lines[i] === "") i += 1;
  if (i >= lines.length) throw new InputError("the position text is empty");
  const dims = lines[i].split(/\s+/);
  if ((dims.length !== 2 && dims.length !== 3) || !dims.every((t) => /^\d+$/.test(t))) {
    throw new InputError(`the first line must be "L C" or "L C K", not "${lines[i]}"`);
  }
  const rows = Number(dims[0]);
  const cols = Number(dims[1]);
  checkSize(rows, cols);
  let k = defaultK(rows, cols);
  if (dims.length === 3) {
    k = Number(dims[2]);
    if (k < 1 || k > Math.max(rows, cols)) {
      throw new InputError(`K = ${k} out of range (1 to ${Math.max(rows, cols)})`);
    }
  }
  i += 1;
  const start = newGrid(rows, cols);
  for (let row = 0; row < rows; row += 1, i += 1) {
    if (i >= lines.length) throw new InputError(`expected ${rows} rows, got ${row}`);
    const cells = lines[i].replace(/\s+/g, "");
    if (cells.length !== cols) {
      throw new InputError(`row ${row} has ${cells.length} cells instead of ${cols}`);
    }
    for (let col = 0; col < cols; col += 1) {
      const code = CELL_CODES[cells[col]];
      if (code === undefined) {
        throw new InputError(`unknown character "${cells[col]}" at row ${row}, column ${col}`);
      }
      start[row * cols + col] = code;
    }
  }
  while (i < lines.length && lines[i] === "") i += 1;
  let time = null;
  if (i < lines.length) {
    if (!/^\d+(\.\d+)?$/.test(lines[i])) {
      throw new InputError(`after the rows only a time line may come, not "${lines[i]}"`);
    }
    time = Math.round(Number(lines[i]));
    i += 1;
    while (i < lines.length && lines[i] === "") i += 1;
    if (i < lines.length) throw new InputError(`unexpected line after the time: "${lines[i]}"`);
  }
  return { rows, cols, k, start, moves: [], time };
}

function positionText(rows, cols, k, grid) {
  const lines = [k === defaultK(rows, cols) ? `${rows} ${cols}` : `${rows} ${cols} ${k}`];
  for (let row = 0; row < rows; row += 1) {
    let line = "";
    for (let col = 0; col < cols; col += 1) line += "0NB"[grid[row * cols + col]];
    lines.push(line);
  }
  return lines.join("\n") + "\n";
}

/** Adds a move to a record being imported, checking it fits and its cell is free. */
function importMove(record, occupied, row, col, stone, what) {
  if (row < 0 || row >= record.rows || col < 0 || col >= record.cols) {
    throw new InputError(`${what}: cell (${row} ${col}) is outside the ${record.rows}×${record.cols} board`);
  }
  if (occupied[row * record.cols + col] !== EMPTY) {
    throw new InputError(`${what}: cell ${bothNames(row, col, record.rows)} is already taken`);
  }
  occupied[row * record.cols + col] = stone;
  record.moves.push({ row, col, stone });
}

/** Piskvork: `Piskvork 15x15, 11:11, 0` then `x,y,t` lines (1-based column, row from the top). */
function parsePsq(text) {
  const lines = text.split(/\r?\n/).map(cleanLine);
  const header = /^piskvork\w*\s+(\d+)\s*x\s*(\d+)/i.exec(lines[0] || "");
  if (!header) throw new InputError("not a Piskvork file (no \"Piskvork WxH\" first line)");
  const cols = Number(header[1]);
  const rows = Number(header[2]);
  checkSize(rows, cols);
  const record = { rows, cols, k: defaultK(rows, cols), start: newGrid(rows, cols), moves: [] };
  const occupied = newGrid(rows, cols);
  let stone = BLACK;
  for (let i = 1; i < lines.length; i += 1) {
    const move = /^(-?\d+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)$/.exec(lines[i]);
    if (!move) break;
    importMove(record, occupied, Number(move[2]) - 1, Number(move[1]) - 1, stone, `line ${i + 1}`);
    stone = other(stone);
  }
  return record;
}

function sgfCoordinate(ch) {
  if (ch >= "a" && ch <= "z") return ch.charCodeAt(0) - 97;
  if (ch >= "A" && ch <= "Z") return ch.charCodeAt(0) - 65 + 26;
  return -1;
}

/** An SGF game's main line: SZ[n] or SZ[cols:rows], AB/AW setup stones, B[..]/W[..] moves. */
function parseSgf(text) {
  const props = []; // [ident, [values]] in order, main line only
  let i = 0;
  let opened = false;
  const n = text.length;
  scan: while (i < n) {
    const ch = text[i];
    if (ch === "(") {
      opened = true;
      i += 1;
    } else if (ch === ")") {
      break scan; // the first closing parenthesis ends the main line
    } else if (/[A-Za-z]/.test(ch)) {
      let ident = "";
      while (i < n && /[A-Za-z]/.test(text[i])) ident += text[i++];
      const values = [];
      for (;;) {
        while (i < n && /\s/.test(text[i])) i += 1;
        if (text[i] !== "[") break;
        i += 1;
        let value = "";
        while (i < n && text[i] !== "]") {
          if (text[i] === "\\" && i + 1 < n) i += 1;
          value += text[i++];
        }
        if (i >= n) throw new InputError("SGF: a property value is not closed with ]");
        i += 1;
        values.push(value);
      }
      if (values.length === 0) throw new InputError(`SGF: property ${ident} has no value`);
      props.push([ident.replace(/[a-z]/g, ""), values]);
    } else {
      i += 1;
    }
  }
  if (!opened) throw new InputError("not an SGF file (no game tree)");
  let rows = 15;
  let cols = 15;
  let k = null;
  for (const [ident, values] of props) {
    if (ident === "SZ") {
      const size = /^\s*(\d+)\s*(?::\s*(\d+)\s*)?$/.exec(values[0]);
      if (!size) throw new InputError(`SGF: bad size SZ[${values[0]}]`);
      cols = Number(size[1]);
      rows = size[2] === undefined ? cols : Number(size[2]);
    } else if (ident === "RU") {
      const exactly = /exactly\s+(\d+)\s+in a row/i.exec(values[0]);
      if (exactly) k = Number(exactly[1]);
    }
  }
  checkSize(rows, cols);
  if (k === null || k < 1 || k > Math.max(rows, cols)) k = defaultK(rows, cols);
  const record = { rows, cols, k, start: newGrid(rows, cols), moves: [] };
  const occupied = newGrid(rows, cols);
  let number = 0;
  for (const [ident, values] of props) {
    if (ident === "AB" || ident === "AW") {
      if (record.moves.length > 0) throw new InputError("SGF: setup stones after moves are not supported");
      for (const value of values) {
        const col = sgfCoordinate(value[0] || "");
        const row = sgfCoordinate(value[1] || "");
        if (row < 0 || col < 0 || row >= rows || col >= cols) {
          throw new InputError(`SGF: bad setup point ${ident}[${value}]`);
        }
        record.start[row * cols + col] = ident === "AB" ? BLACK : WHITE;
        occupied[row * cols + col] = ident === "AB" ? BLACK : WHITE;
      }
    } else if (ident === "B" || ident === "W") {
      const value = values[0].trim();
      number += 1;
      if (value === "" || (value === "tt" && rows <= 19 && cols <= 19)) continue; // a pass
      if (value.length !== 2) throw new InputError(`SGF: bad move ${ident}[${value}]`);
      const col = sgfCoordinate(value[0]);
      const row = sgfCoordinate(value[1]);
      importMove(record, occupied, row, col, ident === "B" ? BLACK : WHITE, `SGF move ${number}`);
    }
  }
  return record;
}

/** A .psq, an SGF or the protocol's text, by its content. */
function parseGameFile(text) {
  const trimmed = text.replace(/^\uFEFF/, "").trimStart();
  if (/^piskvork/i.test(trimmed)) return parsePsq(trimmed);
  if (trimmed.startsWith("(")) return parseSgf(trimmed);
  return parsePositionText(trimmed);
}

// ---------------------------------------------------------------------------------------------
// The API

class ApiError extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

function isAbort(error) {
  return error !== null && typeof error === "object" && error.name === "AbortError";
}

/** The `{"error": {"kind", "message"}}` body of a failed answer, or a generic error. */
function apiErrorFrom(status, text) {
  let data = null;
  try {
    data = JSON.parse(text);
  } catch (_) {
    data = null;
  }
  const error = data && typeof data === "object" ? data.error : null;
  if (error && typeof error === "object" && typeof error.message === "string") {
    return new ApiError(typeof error.kind === "string" ? error.kind : "error", error.message);
  }
  const snippet = text.length > 120 ? text.slice(0, 120) + "…" : text;
  return new ApiError("http", `HTTP ${status}${snippet ? ": " + snippet : ""}`);
}

async function send(path, body, signal) {
  try {
    return await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: JSON.stringify(body),
      signal,
    });
  } catch (error) {
    if (isAbort(error)) throw error;
    throw new ApiError("network", `cannot reach the server (${error && error.message ? error.message : error})`);
  }
}

async function postJson(path, body, signal) {
  const response = await send(path, body, signal);
  const text = await response.text();
  if (!response.ok) throw apiErrorFrom(response.status, text);
  let data;
  try {
    data = JSON.parse(text);
  } catch (_) {
    throw new ApiError("bad-answer", `the server's answer to ${path} is not JSON`);
  }
  if (data === null || typeof data !== "object") {
    throw new ApiError("bad-answer", `the server's answer to ${path} is not an object`);
  }
  return data;
}

/**
 * POSTs and reads the answer as server-sent events, calling onEvent(name, data) for each one
 * whose data is JSON. Resolves when the stream ends.
 */
async function postEventStream(path, body, signal, onEvent) {
  const response = await send(path, body, signal);
  if (!response.ok) throw apiErrorFrom(response.status, await response.text());
  if (!response.body || typeof response.body.getReader !== "function") {
    throw new ApiError("stream", "this browser cannot read a streamed answer");
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let eventName = "message";
  let dataLines = [];
  const dispatch = () => {
    if (dataLines.length > 0) {
      const text = dataLines.join("\n");
      let data = null;
      try {
        data = JSON.parse(text);
      } catch (_) {
        data = null;
      }
      if (data !== null && typeof data === "object") onEvent(eventName, data);
    }
    eventName = "message";
    dataLines = [];
  };
  const takeLines = () => {
    let newline;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      let line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      if (line.endsWith("\r")) line = line.slice(0, -1);
      if (line === "") {
        dispatch();
        continue;
      }
      if (line.startsWith(":")) continue; // a comment (keep-alive)
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") eventName = value;
      else if (field === "data") dataLines.push(value);
    }
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    takeLines();
  }
  buffer += decoder.decode();
  if (buffer !== "") buffer += "\n";
  takeLines();
  dispatch();
}

/** A move object of an answer, checked: { row, col, name } with the row and col in the board. */
function answerMove(value, rows, cols) {
  if (!value || typeof value !== "object") return null;
  const { row, col } = value;
  if (!Number.isInteger(row) || !Number.isInteger(col)) return null;
  if (row < 0 || row >= rows || col < 0 || col >= cols) return null;
  const name = typeof value.name === "string" ? value.name : cellName(row, col, rows);
  return { row, col, name };
}

function numberOr(value, fallback) {
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

function formatCount(n) {
  return Math.round(n).toLocaleString("en-US");
}

/** Score or mate as text, from the side to move's point of view. */
function formatScore(answer) {
  const mate = answer.mate;
  if (typeof mate === "number" && Number.isFinite(mate)) {
    if (mate > 0) return `win in ${mate} ${mate === 1 ? "ply" : "plies"}`;
    if (mate < 0) return `loss in ${-mate} ${mate === -1 ? "ply" : "plies"}`;
    return "decided";
  }
  const score = answer.score;
  if (typeof score !== "number" || !Number.isFinite(score)) return "–";
  return score > 0 ? `+${score}` : String(score);
}

function pvNames(answer, rows, cols) {
  const names = [];
  if (Array.isArray(answer.pv)) {
    for (const step of answer.pv) {
      const move = answerMove(step, rows, cols);
      if (move === null) break;
      names.push(move.name);
    }
  }
  if (names.length === 0) {
    const move = answerMove(answer.move, rows, cols);
    if (move !== null) names.push(move.name);
  }
  return names;
}

// ---------------------------------------------------------------------------------------------
// State

const MORPION_AGENT_NAMES = { menace: "MENACE", perfect: "The perfect player", rl: "The RL agent",
  random: "The random player", attractor: "The attractor player" };

function agentName(agent) {
  if (MORPION_AGENT_NAMES[agent]) return MORPION_AGENT_NAMES[agent];
  if (agent.startsWith("heuristic:")) return `The heuristic player (depth ${agent.slice(10)})`;
  return agent;
}

function emptyRecord(rows, cols) {
  return { rows, cols, k: defaultK(rows, cols), start: newGrid(rows, cols), moves: [] };
}

const state = {
  mode: "play",
  // The main board: a start position, the moves played from it (each with its colour), and the
  // number of moves shown (ply).
  game: { ...emptyRecord(15, 15), ply: 0, human: BLACK, resigned: null, overline: false },
  morpion: { cells: Array(9).fill(EMPTY), moves: [], history: [], human: BLACK, notes: null,
    resigned: null, started: false, lastAgent: null },
  cursor: { row: 7, col: 7 },
  hover: null,
  keyboard: false,
  error: "",
  engine: { controller: null, epoch: 0, last: null },
  analysis: { on: false, controller: null, epoch: 0, timer: null, result: null, done: false,
    running: false, note: "" },
  server: "",
};

const el = {};
const ELEMENT_IDS = ["mode", "status", "engine-info", "board", "rank-labels", "file-labels",
  "cursor-info", "last-info", "rows", "cols", "colour", "time", "overline", "new-game", "undo",
  "resign", "engine-move", "rule-info", "analysis", "analyse-start", "analyse-stop",
  "analysis-time", "analysis-depth", "analysis-score", "analysis-nps", "analysis-pv",
  "analysis-state", "edit-tool", "position-text", "paste-position", "copy-position",
  "import-file", "step-first", "step-prev", "step-next", "step-last", "moves", "morpion-agent",
  "morpion-side", "morpion-notes", "position-note"];

/** The stones after the first `ply` moves of the main record. */
function gridAt(game, ply) {
  const grid = game.start.slice();
  for (let i = 0; i < ply && i < game.moves.length; i += 1) {
    const move = game.moves[i];
    grid[move.row * game.cols + move.col] = move.stone;
  }
  return grid;
}

/** What the board shows now: size, stones, last move, winning line, notes. */
function currentView() {
  if (state.mode === "morpion") {
    const m = state.morpion;
    const grid = Uint8Array.from(m.cells);
    const lastMove = m.moves.length > 0 ? m.moves[m.moves.length - 1] : null;
    const last = lastMove ? { row: Math.floor(lastMove.cell / 3), col: lastMove.cell % 3 } : null;
    return { rows: 3, cols: 3, k: 3, overline: false, grid, last,
      win: findWin(grid, 3, 3, 3, false, last) };
  }
  const g = state.game;
  const grid = gridAt(g, g.ply);
  const lastMove = g.ply > 0 ? g.moves[g.ply - 1] : null;
  const last = lastMove ? { row: lastMove.row, col: lastMove.col } : null;
  return { rows: g.rows, cols: g.cols, k: g.k, overline: g.overline, grid, last,
    win: findWin(grid, g.rows, g.cols, g.k, g.overline, last) };
}

/** Whether a view's game is over, and how: { winner: stone|null, reason } or null. */
function outcome(view, resigned) {
  if (view.win) return { winner: view.win.stone, reason: "line" };
  if (resigned) return { winner: other(resigned), reason: "resign" };
  if (!view.grid.includes(EMPTY)) return { winner: null, reason: "full" };
  return null;
}

function engineBusy() {
  return state.engine.controller !== null;
}

function setBusy(busy) {
  document.body.dataset.engineBusy = busy ? "1" : "0";
}

function positionBody(view) {
  const rows = [];
  for (let row = 0; row < view.rows; row += 1) {
    let line = "";
    for (let col = 0; col < view.cols; col += 1) line += "0NB"[view.grid[row * view.cols + col]];
    rows.push(line);
  }
  const body = { rows, overline_wins: view.overline };
  if (view.k !== defaultK(view.rows, view.cols)) body.k = view.k;
  return body;
}

function readWholeNumber(input, what, min, max) {
  const text = input.value.trim();
  if (!/^\d+$/.test(text)) throw new InputError(`${what} must be a whole number`);
  const value = Number(text);
  if (value < min || value > max) throw new InputError(`${what} must be from ${min} to ${max}`);
  return value;
}

function showError(error) {
  if (isAbort(error)) return;
  if (error instanceof ApiError) state.error = `Error (${error.kind}): ${error.message}`;
  else if (error instanceof InputError) state.error = `Error: ${error.message}`;
  else state.error = `Error: ${error && error.message ? error.message : String(error)}`;
  render();
}

// ---------------------------------------------------------------------------------------------
// The engine (play mode, and "Engine move" in analyse mode)

function cancelEngine() {
  if (state.engine.controller !== null) {
    state.engine.controller.abort();
    state.engine.controller = null;
    state.engine.epoch += 1;
    setBusy(false);
  }
}

async function engineMove() {
  const g = state.game;
  const view = currentView();
  if (outcome(view, g.ply === g.moves.length ? g.resigned : null)) return;
  const side = sideToMove(view.grid);
  if (side === null) {
    showError(new InputError("black must have as many stones as white, or one more"));
    return;
  }
  let time;
  try {
    time = readWholeNumber(el.time, "the engine's time", 1, 3600000);
  } catch (error) {
    showError(error);
    return;
  }
  cancelEngine();
  g.moves.length = g.ply;
  g.resigned = null;
  const epoch = state.engine.epoch + 1;
  state.engine.epoch = epoch;
  const controller = new AbortController();
  state.engine.controller = controller;
  state.error = "";
  setBusy(true);
  render();
  try {
    const answer = await postJson("/v1/move", { ...positionBody(view), time_ms: time }, controller.signal);
    if (epoch !== state.engine.epoch) return;
    const move = answerMove(answer.move, g.rows, g.cols);
    if (move === null) throw new ApiError("bad-answer", "the engine's answer has no move on the board");
    if (view.grid[move.row * g.cols + move.col] !== EMPTY) {
      throw new ApiError("bad-answer", `the engine answered ${bothNames(move.row, move.col, g.rows)}, which is taken`);
    }
    g.moves.push({ row: move.row, col: move.col, stone: side });
    g.ply = g.moves.length;
    state.engine.last = { answer, side, rows: g.rows, cols: g.cols };
  } catch (error) {
    if (epoch !== state.engine.epoch || isAbort(error)) return;
    showError(error);
  } finally {
    if (epoch === state.engine.epoch) {
      state.engine.controller = null;
      setBusy(false);
      render();
      positionChanged();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Analysis

function stopAnalysisStream() {
  const a = state.analysis;
  if (a.timer !== null) {
    clearTimeout(a.timer);
    a.timer = null;
  }
  if (a.controller !== null) {
    a.controller.abort();
    a.controller = null;
  }
  a.epoch += 1;
  a.running = false;
  document.body.dataset.analysing = "0";
}

/** The position changed: forget the old analysis, start a new one when analysis is on. */
function positionChanged() {
  const a = state.analysis;
  stopAnalysisStream();
  a.result = null;
  a.done = false;
  if (state.mode === "analyse" && a.on) {
    a.note = "Waiting to analyse the new position…";
    a.timer = setTimeout(() => {
      a.timer = null;
      startAnalysis();
    }, 150);
  }
  render();
}

async function startAnalysis() {
  const a = state.analysis;
  stopAnalysisStream();
  a.result = null;
  a.done = false;
  const g = state.game;
  const view = currentView();
  const over = outcome(view, g.ply === g.moves.length ? g.resigned : null);
  if (over) {
    a.note = "The game is over in this position: nothing to analyse.";
    render();
    return;
  }
  if (sideToMove(view.grid) === null) {
    a.note = "Nothing to analyse: black must have as many stones as white, or one more.";
    render();
    return;
  }
  const body = positionBody(view);
  const timeText = el["analysis-time"].value.trim();
  if (timeText !== "") {
    try {
      body.time_ms = readWholeNumber(el["analysis-time"], "the analysis time", 1, 86400000);
    } catch (error) {
      a.note = error.message;
      render();
      return;
    }
  }
  const epoch = a.epoch;
  const controller = new AbortController();
  a.controller = controller;
  a.running = true;
  a.note = "Analysing…";
  document.body.dataset.analysing = "1";
  render();
  const rows = view.rows;
  const cols = view.cols;
  try {
    await postEventStream("/v1/analyse", body, controller.signal, (name, data) => {
      if (epoch !== a.epoch) return;
      if (name === "progress" || name === "done") {
        a.result = { answer: data, rows, cols };
        if (name === "done") {
          a.done = true;
          a.note = `Done: depth ${numberOr(data.depth, 0)} in ${formatCount(numberOr(data.time_ms, 0))} ms.`;
        } else {
          a.note = "Analysing…";
        }
        renderAnalysis();
        paintBoard();
      } else if (name === "error") {
        const error = data.error && typeof data.error === "object" ? data.error : data;
        a.note = `Error (${typeof error.kind === "string" ? error.kind : "error"}): ${typeof error.message === "string" ? error.message : "the analysis failed"}`;
        renderAnalysis();
      }
    });
    if (epoch === a.epoch && !a.done && !a.note.startsWith("Error")) {
      a.note = "The analysis stream ended early.";
    }
  } catch (error) {
    if (epoch !== a.epoch || isAbort(error)) return;
    a.note = error instanceof ApiError ? `Error (${error.kind}): ${error.message}` : `Error: ${error.message}`;
  } finally {
    if (epoch === a.epoch) {
      a.controller = null;
      a.running = false;
      document.body.dataset.analysing = "0";
      render();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Morpion lab

function morpionToMove(cells) {
  let x = 0;
  let o = 0;
  for (const c of cells) {
    if (c === BLACK) x += 1;
    else if (c === WHITE) o += 1;
  }
  return x === o ? BLACK : WHITE;
}

function symbol(stone) {
  return stone === BLACK ? "X" : "O";
}

function newMorpion() {
  cancelEngine();
  const m = state.morpion;
  m.cells = Array(9).fill(EMPTY);
  m.moves = [];
  m.history = [];
  m.notes = null;
  m.resigned = null;
  m.started = true;
  m.human = el["morpion-side"].value === "O" ? WHITE : BLACK;
  state.error = "";
  render();
  if (m.human === WHITE) morpionAgentMove();
}

function morpionPlay(cell) {
  const m = state.morpion;
  if (engineBusy() || m.cells[cell] !== EMPTY) return;
  if (outcome(currentView(), m.resigned)) return;
  const toMove = morpionToMove(m.cells);
  if (toMove !== m.human) {
    morpionAgentMove();
    return;
  }
  m.history.push({ cells: m.cells.slice(), moves: m.moves.slice(), notes: m.notes });
  m.cells[cell] = toMove;
  m.moves.push({ cell, stone: toMove });
  state.error = "";
  render();
  if (!outcome(currentView(), null)) morpionAgentMove();
}

async function morpionAgentMove() {
  const m = state.morpion;
  const agent = el["morpion-agent"].value;
  const from = m.cells.slice();
  const toMove = morpionToMove(from);
  const grid = from.map((c) => ".XO"[c]).join("");
  cancelEngine();
  const epoch = state.engine.epoch + 1;
  state.engine.epoch = epoch;
  const controller = new AbortController();
  state.engine.controller = controller;
  m.lastAgent = agent;
  setBusy(true);
  render();
  try {
    const answer = await postJson("/v1/morpion/move", { grid, agent }, controller.signal);
    if (epoch !== state.engine.epoch) return;
    const cell = answer.cell;
    if (!Number.isInteger(cell) || cell < 0 || cell > 8 || from[cell] !== EMPTY) {
      throw new ApiError("bad-answer", "the agent's answer is not a free cell");
    }
    const numbers = (value) => (Array.isArray(value) && value.length === 9 ? value.map((v) =>
      (typeof v === "number" && Number.isFinite(v) ? v : null)) : null);
    m.cells[cell] = toMove;
    m.moves.push({ cell, stone: toMove });
    m.notes = { agent: typeof answer.agent === "string" ? answer.agent : agent, cell, from,
      beads: numbers(answer.beads), values: numbers(answer.values) };
  } catch (error) {
    if (epoch !== state.engine.epoch || isAbort(error)) return;
    showError(error);
  } finally {
    if (epoch === state.engine.epoch) {
      state.engine.controller = null;
      setBusy(false);
      render();
    }
  }
}

function morpionUndo() {
  cancelEngine();
  const m = state.morpion;
  const previous = m.history.pop();
  if (previous) {
    m.cells = previous.cells;
    m.moves = previous.moves;
    m.notes = previous.notes;
  }
  m.resigned = null;
  state.error = "";
  render();
}

// ---------------------------------------------------------------------------------------------
// Actions on the main board

function newGame() {
  cancelEngine();
  let rows;
  let cols;
  try {
    rows = readWholeNumber(el.rows, "rows", 1, MAX_SIDE);
    cols = readWholeNumber(el.cols, "cols", 1, MAX_SIDE);
  } catch (error) {
    showError(error);
    return;
  }
  const g = state.game;
  Object.assign(g, emptyRecord(rows, cols));
  g.ply = 0;
  g.resigned = null;
  g.overline = el.overline.checked;
  g.human = el.colour.value === "white" ? WHITE : BLACK;
  state.engine.last = null;
  state.error = "";
  state.cursor = { row: Math.floor(rows / 2), col: Math.floor(cols / 2) };
  buildBoard();
  positionChanged();
  if (state.mode === "play" && g.human === WHITE) engineMove();
}

/** Loads a record (pasted or imported), showing its last position. */
function loadRecord(record) {
  cancelEngine();
  const g = state.game;
  g.rows = record.rows;
  g.cols = record.cols;
  g.k = record.k;
  g.start = record.start;
  g.moves = record.moves;
  g.ply = record.moves.length;
  g.resigned = null;
  el.rows.value = String(record.rows);
  el.cols.value = String(record.cols);
  // In play mode you take the side to move of the loaded position.
  const side = sideToMove(gridAt(g, g.ply));
  if (side !== null && state.mode === "play") {
    g.human = side;
    el.colour.value = STONE_NAMES[side];
  }
  state.engine.last = null;
  state.error = "";
  state.cursor = { row: Math.floor(record.rows / 2), col: Math.floor(record.cols / 2) };
  buildBoard();
  positionChanged();
}

function undo() {
  if (state.mode === "morpion") {
    morpionUndo();
    return;
  }
  const g = state.game;
  cancelEngine();
  state.error = "";
  if (g.resigned !== null && g.ply === g.moves.length) {
    g.resigned = null;
    render();
    return;
  }
  g.moves.length = g.ply;
  if (state.mode === "play") {
    // Take back the human's last move, and the engine's reply after it.
    let index = g.moves.length - 1;
    while (index >= 0 && g.moves[index].stone !== g.human) index -= 1;
    if (index >= 0) g.moves.length = index;
  } else if (g.moves.length > 0) {
    g.moves.length -= 1;
  }
  g.ply = g.moves.length;
  positionChanged();
}

function resign() {
  if (state.mode === "morpion") {
    const m = state.morpion;
    if (outcome(currentView(), m.resigned)) return;
    cancelEngine();
    m.resigned = m.human;
    render();
    return;
  }
  const g = state.game;
  if (outcome(currentView(), g.ply === g.moves.length ? g.resigned : null)) return;
  cancelEngine();
  g.moves.length = g.ply;
  g.resigned = g.human;
  render();
}

function step(to) {
  if (state.mode === "morpion") return;
  cancelEngine();
  const g = state.game;
  const ply = Math.max(0, Math.min(g.moves.length, to));
  if (ply === g.ply) return;
  g.ply = ply;
  state.error = "";
  positionChanged();
}

/** A click (or Enter) on a cell of the board. */
function activate(row, col) {
  state.cursor = { row, col };
  if (state.mode === "morpion") {
    morpionPlay(row * 3 + col);
    return;
  }
  const g = state.game;
  if (row >= g.rows || col >= g.cols) return;
  const view = currentView();
  const index = row * g.cols + col;
  if (state.mode === "analyse" && el["edit-tool"].value !== "play") {
    editCell(row, col, el["edit-tool"].value);
    return;
  }
  if (engineBusy()) return;
  if (outcome(view, g.ply === g.moves.length ? g.resigned : null)) {
    render();
    return;
  }
  if (view.grid[index] !== EMPTY) {
    render();
    return;
  }
  const side = sideToMove(view.grid);
  if (side === null) {
    showError(new InputError("black must have as many stones as white, or one more"));
    return;
  }
  if (state.mode === "play" && side !== g.human) {
    state.error = "It is the engine's turn here: press Engine move.";
    render();
    return;
  }
  g.moves.length = g.ply;
  g.moves.push({ row, col, stone: side });
  g.ply = g.moves.length;
  g.resigned = null;
  state.error = "";
  positionChanged();
  if (state.mode === "play" && !outcome(currentView(), null)) engineMove();
}

/** Edit mode: the shown position becomes the start position, then the cell changes. */
function editCell(row, col, tool) {
  cancelEngine();
  const g = state.game;
  const grid = gridAt(g, g.ply);
  const index = row * g.cols + col;
  if (tool === "cycle") grid[index] = (grid[index] + 1) % 3;
  else if (tool === "black") grid[index] = grid[index] === BLACK ? EMPTY : BLACK;
  else if (tool === "white") grid[index] = grid[index] === WHITE ? EMPTY : WHITE;
  else grid[index] = EMPTY;
  g.start = grid;
  g.moves = [];
  g.ply = 0;
  g.resigned = null;
  state.error = "";
  positionChanged();
}

function applyMode(mode) {
  state.mode = mode;
  el.mode.value = mode;
  document.body.classList.remove("mode-play", "mode-analyse", "mode-morpion");
  document.body.classList.add(`mode-${mode}`);
  state.analysis.on = mode === "analyse";
}

function setMode(mode) {
  if (!["play", "analyse", "morpion"].includes(mode)) return;
  cancelEngine();
  stopAnalysisStream();
  applyMode(mode);
  state.error = "";
  state.cursor = mode === "morpion" ? { row: 1, col: 1 } :
    { row: Math.floor(state.game.rows / 2), col: Math.floor(state.game.cols / 2) };
  buildBoard();
  if (mode === "morpion" && !state.morpion.started) {
    newMorpion();
    return;
  }
  positionChanged();
}

async function importFile() {
  const input = el["import-file"];
  const file = input.files && input.files[0];
  if (!file) return;
  try {
    if (file.size > 4 * 1024 * 1024) throw new InputError("the file is larger than 4 MiB");
    const text = await file.text();
    const record = parseGameFile(text);
    if (state.mode === "morpion") setMode("analyse");
    loadRecord(record);
    setNote(`Imported ${file.name}: ${record.moves.length} moves on a ${record.rows}×${record.cols} board.`);
  } catch (error) {
    showError(error);
  } finally {
    input.value = "";
  }
}

function setNote(text) {
  el["position-note"].textContent = text;
}

function pastePosition() {
  try {
    const record = parsePositionText(el["position-text"].value);
    if (record.time !== null && record.time > 0) el.time.value = String(record.time);
    loadRecord(record);
    setNote(`Loaded a ${record.rows}×${record.cols} position.`);
  } catch (error) {
    setNote("");
    showError(error);
  }
}

function copyPosition() {
  const view = currentView();
  const text = positionText(view.rows, view.cols, view.k, view.grid);
  el["position-text"].value = text;
  setNote("The board's position is in the text box.");
  if (navigator.clipboard && typeof navigator.clipboard.writeText === "function") {
    navigator.clipboard.writeText(text).catch(() => {});
  }
}

// ---------------------------------------------------------------------------------------------
// Rendering

let built = { rows: 0, cols: 0, mode: "" };
let cellElements = [];

function buildBoard() {
  const view = currentView();
  if (built.rows === view.rows && built.cols === view.cols && built.mode === state.mode) {
    render();
    return;
  }
  built = { rows: view.rows, cols: view.cols, mode: state.mode };
  const board = el.board;
  board.textContent = "";
  board.style.setProperty("--rows", String(view.rows));
  board.style.setProperty("--cols", String(view.cols));
  el["rank-labels"].style.setProperty("--rows", String(view.rows));
  el["file-labels"].style.setProperty("--cols", String(view.cols));
  document.documentElement.style.setProperty("--board-cols", String(view.cols));
  document.documentElement.style.setProperty("--board-rows", String(view.rows));
  board.setAttribute("aria-rowcount", String(view.rows));
  board.setAttribute("aria-colcount", String(view.cols));
  cellElements = [];
  const fragment = document.createDocumentFragment();
  for (let row = 0; row < view.rows; row += 1) {
    const rowElement = document.createElement("div");
    rowElement.className = "board-row";
    rowElement.setAttribute("role", "row");
    for (let col = 0; col < view.cols; col += 1) {
      const cell = document.createElement("div");
      cell.className = "cell";
      cell.id = `cell-${row}-${col}`;
      cell.setAttribute("role", "gridcell");
      cell.dataset.row = String(row);
      cell.dataset.col = String(col);
      const note = document.createElement("span");
      note.className = "note";
      note.setAttribute("aria-hidden", "true");
      cell.appendChild(note);
      rowElement.appendChild(cell);
      cellElements.push(cell);
    }
    fragment.appendChild(rowElement);
  }
  board.appendChild(fragment);
  const ranks = el["rank-labels"];
  ranks.textContent = "";
  for (let row = 0; row < view.rows; row += 1) {
    const label = document.createElement("span");
    label.textContent = String(view.rows - row);
    ranks.appendChild(label);
  }
  const files = el["file-labels"];
  files.textContent = "";
  for (let col = 0; col < view.cols; col += 1) {
    const label = document.createElement("span");
    label.textContent = columnName(col);
    files.appendChild(label);
  }
  state.cursor.row = Math.min(state.cursor.row, view.rows - 1);
  state.cursor.col = Math.min(state.cursor.col, view.cols - 1);
  render();
}

function setClass(element, name, on) {
  if (element.classList.contains(name) !== on) element.classList.toggle(name, on);
}

function setData(element, key, value) {
  if (value === null) {
    if (key in element.dataset) delete element.dataset[key];
  } else if (element.dataset[key] !== value) {
    element.dataset[key] = value;
  }
}

function paintBoard() {
  const view = currentView();
  if (cellElements.length !== view.rows * view.cols) return;
  const winCells = new Set(view.win ? view.win.cells.map(([r, c]) => r * view.cols + c) : []);
  let best = -1;
  const a = state.analysis;
  if (state.mode === "analyse" && a.result) {
    const move = answerMove(a.result.answer.move, view.rows, view.cols);
    if (move !== null && view.grid[move.row * view.cols + move.col] === EMPTY) {
      best = move.row * view.cols + move.col;
    }
  }
  const lastIndex = view.last ? view.last.row * view.cols + view.last.col : -1;
  const cursorIndex = state.cursor.row * view.cols + state.cursor.col;
  const notes = state.mode === "morpion" ? state.morpion.notes : null;
  for (let index = 0; index < cellElements.length; index += 1) {
    const cell = cellElements[index];
    const stone = view.grid[index];
    const row = Math.floor(index / view.cols);
    const col = index % view.cols;
    setData(cell, "stone", stone === EMPTY ? null : STONE_NAMES[stone]);
    setClass(cell, "last", index === lastIndex);
    setClass(cell, "win", winCells.has(index));
    setClass(cell, "best", index === best);
    setClass(cell, "cursor", index === cursorIndex);
    let beads = null;
    let value = null;
    if (notes !== null && notes.from[index] === EMPTY) {
      if (notes.beads !== null && notes.beads[index] !== null) beads = notes.beads[index];
      if (notes.values !== null && notes.values[index] !== null) value = notes.values[index];
    }
    setData(cell, "beads", beads === null ? null : String(beads));
    setData(cell, "value", value === null ? null : String(value));
    const noteText = beads !== null ? String(beads) :
      value !== null ? (value > 0 ? `+${value}` : value < 0 ? `−${-value}` : "0") : "";
    const note = cell.firstChild;
    if (note && note.textContent !== noteText) note.textContent = noteText;
    let label = state.mode === "morpion" ? `${cellName(row, col, 3)}, cell ${index}` :
      bothNames(row, col, view.rows);
    if (stone !== EMPTY) label += state.mode === "morpion" ? `, ${symbol(stone)}` : `, ${STONE_NAMES[stone]}`;
    if (index === lastIndex) label += ", last move";
    if (winCells.has(index)) label += ", winning line";
    if (index === best) label += ", best move";
    if (beads !== null) label += `, ${beads} beads`;
    if (value !== null) label += `, value ${value}`;
    if (cell.getAttribute("aria-label") !== label) cell.setAttribute("aria-label", label);
  }
  el.board.setAttribute("aria-activedescendant", `cell-${state.cursor.row}-${state.cursor.col}`);
  setClass(el.board, "keyboard", state.keyboard);
  setClass(el.board, "busy", engineBusy());
  renderCellInfo();
}

function describeCell(row, col) {
  const view = currentView();
  if (row >= view.rows || col >= view.cols) return "–";
  const names = bothNames(row, col, view.rows);
  return state.mode === "morpion" ? `${names}, cell ${row * 3 + col}` : names;
}

function renderCellInfo() {
  const view = currentView();
  const spot = state.hover || state.cursor;
  el["cursor-info"].textContent = `${state.hover ? "Pointer" : "Cursor"}: ${describeCell(spot.row, spot.col)}.`;
  if (view.last) {
    const stone = view.grid[view.last.row * view.cols + view.last.col];
    const who = state.mode === "morpion" ? symbol(stone) : STONE_NAMES[stone];
    el["last-info"].textContent = `Last move: ${describeCell(view.last.row, view.last.col)} by ${who}.`;
  } else {
    el["last-info"].textContent = "Last move: –";
  }
}

function resultText(over, view, human, morpion) {
  const name = (stone) => (morpion ? symbol(stone) : capitalise(STONE_NAMES[stone]));
  if (over.winner === null) return morpion ? "Draw." : "Draw: the board is full.";
  let text;
  if (over.reason === "resign") {
    text = `${name(other(over.winner))} resigned: ${name(over.winner)} wins.`;
  } else {
    const cells = view.win.cells;
    const first = cells[0];
    const lastCell = cells[cells.length - 1];
    text = `${name(over.winner)} wins: ${view.k} in a row, ${cellName(first[0], first[1], view.rows)}–${cellName(lastCell[0], lastCell[1], view.rows)}.`;
  }
  if (human !== null) text += over.winner === human ? " You win!" : morpion ? " The agent wins." : " The engine wins.";
  return text;
}

function statusText() {
  const view = currentView();
  if (state.mode === "morpion") {
    const m = state.morpion;
    const over = outcome(view, m.resigned);
    if (over) return resultText(over, view, m.human, true);
    const toMove = morpionToMove(m.cells);
    if (engineBusy()) return `${agentName(m.lastAgent || el["morpion-agent"].value)} is choosing a move for ${symbol(toMove)}…`;
    if (toMove === m.human) return `Your move (${symbol(toMove)}).`;
    return `The agent's turn (${symbol(toMove)}): click the board to ask it again.`;
  }
  const g = state.game;
  const atEnd = g.ply === g.moves.length;
  const over = outcome(view, atEnd ? g.resigned : null);
  const prefix = atEnd || g.moves.length === 0 ? "" : `Move ${g.ply} of ${g.moves.length}. `;
  if (over) return prefix + resultText(over, view, state.mode === "play" ? g.human : null, false);
  const side = sideToMove(view.grid);
  if (side === null) return `${prefix}Impossible position: black must have as many stones as white, or one more.`;
  if (engineBusy()) return `${prefix}The engine (${STONE_NAMES[side]}) is thinking…`;
  if (state.mode === "analyse") return `${prefix}${capitalise(STONE_NAMES[side])} to move.`;
  if (side === g.human) return `${prefix}Your move (${STONE_NAMES[side]}).`;
  return `${prefix}The engine's turn (${STONE_NAMES[side]}): press Engine move.`;
}

function engineInfoText() {
  if (state.mode === "morpion") {
    const notes = state.morpion.notes;
    if (!notes) return "";
    return `${agentName(notes.agent)} played ${describeCell(Math.floor(notes.cell / 3), notes.cell % 3)}.`;
  }
  const last = state.engine.last;
  if (!last) return "";
  const { answer, side, rows, cols } = last;
  const move = answerMove(answer.move, rows, cols);
  const parts = [];
  if (move) parts.push(`Engine (${STONE_NAMES[side]}) played ${bothNames(move.row, move.col, rows)}`);
  parts.push(`score ${formatScore(answer)}`);
  parts.push(`depth ${numberOr(answer.depth, 0)}`);
  parts.push(`${formatCount(numberOr(answer.nodes, 0))} nodes`);
  parts.push(`${formatCount(numberOr(answer.time_ms, 0))} ms`);
  if (typeof answer.source === "string") parts.push(answer.source);
  return parts.join(" · ");
}

function renderAnalysis() {
  const a = state.analysis;
  const result = a.result;
  if (result) {
    const answer = result.answer;
    el["analysis-depth"].textContent = String(numberOr(answer.depth, 0));
    el["analysis-score"].textContent = formatScore(answer);
    const nps = numberOr(answer.nps, 0);
    el["analysis-nps"].textContent = `${formatCount(nps)} nodes/s (${formatCount(numberOr(answer.nodes, 0))} nodes, ${formatCount(numberOr(answer.time_ms, 0))} ms)`;
    el["analysis-pv"].textContent = pvNames(answer, result.rows, result.cols).join(" ") || "–";
  } else {
    for (const id of ["analysis-depth", "analysis-score", "analysis-nps", "analysis-pv"]) el[id].textContent = "–";
  }
  el["analysis-state"].textContent = a.on ? a.note : "Stopped. Press Analyse to analyse the position.";
  el["analyse-stop"].disabled = !a.on;
}

/** The morpion lab's panel: what the agent saw in the position it moved from. */
function morpionNotesText() {
  const notes = state.morpion.notes;
  if (!notes) {
    return "MENACE's bead counts and the perfect player's values appear on the cells of the position the agent moved from.";
  }
  const parts = [];
  const listed = (values, format) => {
    const items = [];
    values.forEach((value, cell) => {
      if (value !== null && notes.from[cell] === EMPTY) {
        items.push(`${cellName(Math.floor(cell / 3), cell % 3, 3)} ${format(value)}`);
      }
    });
    return items.join(", ");
  };
  const played = cellName(Math.floor(notes.cell / 3), notes.cell % 3, 3);
  if (notes.beads !== null) {
    parts.push(`${agentName(notes.agent)}'s beads in the box of the position it moved from: ${listed(notes.beads, String)} (cells alike by symmetry share one pile); it drew ${played}.`);
  }
  if (notes.values !== null) {
    parts.push(`Values (+1 win, 0 draw, −1 loss for the agent): ${listed(notes.values, (v) => (v > 0 ? `+${v}` : v < 0 ? `−${-v}` : "0"))}; it played ${played}.`);
  }
  if (parts.length === 0) parts.push(`${agentName(notes.agent)} shows no beads or values; it played ${played}.`);
  return parts.join(" ");
}

function renderMoves() {
  const list = el.moves;
  list.textContent = "";
  const items = [];
  if (state.mode === "morpion") {
    state.morpion.moves.forEach((move, i) => {
      items.push({ text: `${symbol(move.stone)} ${cellName(Math.floor(move.cell / 3), move.cell % 3, 3)}, cell ${move.cell}`,
        stone: move.stone, ply: null, current: i === state.morpion.moves.length - 1 });
    });
  } else {
    const g = state.game;
    if (g.moves.length > 0) items.push({ text: "start", stone: EMPTY, ply: 0, current: g.ply === 0 });
    g.moves.forEach((move, i) => {
      items.push({ text: bothNames(move.row, move.col, g.rows), stone: move.stone, ply: i + 1,
        current: g.ply === i + 1 });
    });
  }
  let current = null;
  for (const item of items) {
    const li = document.createElement("li");
    li.className = item.stone === EMPTY ? "start" : STONE_NAMES[item.stone];
    if (item.ply === 0) li.classList.add("no-number");
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = item.text;
    if (item.ply === null) button.disabled = true;
    else button.dataset.ply = String(item.ply);
    if (item.current) {
      li.classList.add("current");
      button.setAttribute("aria-current", "step");
      current = li;
    }
    li.appendChild(button);
    list.appendChild(li);
  }
  if (current !== null) {
    const top = current.offsetTop - list.offsetTop;
    if (top < list.scrollTop || top + current.offsetHeight > list.scrollTop + list.clientHeight) {
      list.scrollTop = Math.max(0, top - list.clientHeight / 2);
    }
  }
}

function render() {
  paintBoard();
  const status = statusText() + (state.error ? ` — ${state.error}` : "");
  if (el.status.textContent !== status) el.status.textContent = status;
  const info = engineInfoText();
  if (el["engine-info"].textContent !== info) el["engine-info"].textContent = info;
  renderAnalysis();
  renderMoves();
  const notesText = morpionNotesText();
  if (el["morpion-notes"].textContent !== notesText) el["morpion-notes"].textContent = notesText;
  const g = state.game;
  const view = currentView();
  const k = view.k;
  el["rule-info"].textContent = state.mode === "morpion"
    ? "Three in a row wins. X moves first." + (state.server ? ` ${state.server}` : "")
    : `${view.rows}×${view.cols}: ${view.overline ? `${k} or more` : `exactly ${k}`} in a row wins` +
      (view.overline || k === 1 ? "." : " (more does not).") + (state.server ? ` ${state.server}` : "");
  const morpion = state.mode === "morpion";
  el.undo.disabled = morpion ? state.morpion.history.length === 0 && !engineBusy() && state.morpion.resigned === null
    : g.moves.length === 0 && g.resigned === null && !engineBusy();
  el.resign.disabled = state.mode === "analyse";
  el["engine-move"].disabled = morpion || engineBusy();
  el["step-first"].disabled = g.ply === 0;
  el["step-prev"].disabled = g.ply === 0;
  el["step-next"].disabled = g.ply >= g.moves.length;
  el["step-last"].disabled = g.ply >= g.moves.length;
}

// ---------------------------------------------------------------------------------------------
// Events

function cellFromEvent(event) {
  const target = event.target instanceof Element ? event.target.closest("[data-row][data-col]") : null;
  if (!target) return null;
  const row = Number(target.dataset.row);
  const col = Number(target.dataset.col);
  return Number.isInteger(row) && Number.isInteger(col) ? { row, col } : null;
}

function onBoardKey(event) {
  const view = currentView();
  const moves = {
    ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1],
  };
  if (moves[event.key]) {
    const [dr, dc] = moves[event.key];
    state.cursor = {
      row: Math.max(0, Math.min(view.rows - 1, state.cursor.row + dr)),
      col: Math.max(0, Math.min(view.cols - 1, state.cursor.col + dc)),
    };
  } else if (event.key === "Home") {
    state.cursor = { row: state.cursor.row, col: 0 };
  } else if (event.key === "End") {
    state.cursor = { row: state.cursor.row, col: view.cols - 1 };
  } else if (event.key === "Enter" || event.key === " ") {
    state.keyboard = true;
    event.preventDefault();
    activate(state.cursor.row, state.cursor.col);
    return;
  } else {
    return;
  }
  event.preventDefault();
  state.keyboard = true;
  state.hover = null;
  paintBoard();
}

function init() {
  const missing = [];
  for (const id of ELEMENT_IDS) {
    const element = document.getElementById(id);
    if (element) el[id] = element;
    else missing.push(id);
  }
  if (missing.length > 0) {
    const status = document.getElementById("status");
    if (status) status.textContent = `The page is incomplete (missing ${missing.join(", ")}).`;
    return;
  }
  document.body.dataset.engineBusy = "0";
  document.body.dataset.analysing = "0";

  el.mode.addEventListener("change", () => setMode(el.mode.value));
  el["new-game"].addEventListener("click", () => (state.mode === "morpion" ? newMorpion() : newGame()));
  el.undo.addEventListener("click", undo);
  el.resign.addEventListener("click", resign);
  el["engine-move"].addEventListener("click", () => {
    if (state.mode !== "morpion" && !engineBusy()) engineMove();
  });
  el.overline.addEventListener("change", () => {
    state.game.overline = el.overline.checked;
    positionChanged();
  });
  el.rows.addEventListener("input", render);
  el.cols.addEventListener("input", render);
  el["morpion-side"].addEventListener("change", () => {
    if (state.mode === "morpion") newMorpion();
  });

  el.board.addEventListener("click", (event) => {
    const cell = cellFromEvent(event);
    if (cell === null) return;
    state.keyboard = false;
    activate(cell.row, cell.col);
  });
  el.board.addEventListener("pointerdown", () => {
    state.keyboard = false;
  });
  el.board.addEventListener("mouseover", (event) => {
    const cell = cellFromEvent(event);
    if (cell === null) return;
    state.hover = cell;
    renderCellInfo();
  });
  el.board.addEventListener("mouseleave", () => {
    state.hover = null;
    renderCellInfo();
  });
  el.board.addEventListener("keydown", onBoardKey);
  el.board.addEventListener("focus", () => paintBoard());

  el["analyse-start"].addEventListener("click", () => {
    if (state.mode !== "analyse") setMode("analyse");
    state.analysis.on = true;
    startAnalysis();
  });
  el["analyse-stop"].addEventListener("click", () => {
    state.analysis.on = false;
    stopAnalysisStream();
    render();
  });

  el["paste-position"].addEventListener("click", pastePosition);
  el["copy-position"].addEventListener("click", copyPosition);
  el["import-file"].addEventListener("change", importFile);
  el["step-first"].addEventListener("click", () => step(0));
  el["step-prev"].addEventListener("click", () => step(state.game.ply - 1));
  el["step-next"].addEventListener("click", () => step(state.game.ply + 1));
  el["step-last"].addEventListener("click", () => step(state.game.moves.length));
  el.moves.addEventListener("click", (event) => {
    const button = event.target instanceof Element ? event.target.closest("button[data-ply]") : null;
    if (button) step(Number(button.dataset.ply));
  });

  // The mode may come from the address (/#analyse, /#morpion), else from the select (which the
  // browser may have restored).
  const wanted = location.hash.replace(/^#/, "");
  const mode = ["play", "analyse", "morpion"].includes(wanted) ? wanted : el.mode.value;
  applyMode(["play", "analyse", "morpion"].includes(mode) ? mode : "play");
  newGame();
  if (state.mode === "morpion") newMorpion();

  fetch("/healthz")
    .then((response) => response.json())
    .then((health) => {
      if (health && typeof health === "object" && typeof health.version === "string") {
        state.server = `Server connect5 ${health.version}.`;
        render();
      }
    })
    .catch(() => {});
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
else init();
