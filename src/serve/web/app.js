// zero serve: the page. Plain JavaScript over the server's JSON API (/api/...); the server
// decides everything (legality, results), the page shows what it answers. It knows no game:
// each game's board (layout, size, colours), sides and move names come from /api/info.
"use strict";

const $ = (id) => document.getElementById(id);
const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

const state = {
  mode: "play",      // play | watch
  info: null,        // GET /api/info
  game: null,        // the game's view, as the server last sent it
  busy: false,       // an engine-move request is out
  paused: false,     // watch mode
  perfectFor: null,  // the position the overlay shows
  perfect: null,
  timer: null,
};

async function api(method, path, body) {
  const options = { method, headers: {} };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, options);
  } catch (e) {
    throw new Error("the server cannot be reached (" + e.message + ")");
  }
  if (response.status === 204) return null;
  let data = null;
  try { data = await response.json(); } catch (e) { data = null; }
  if (!response.ok) {
    const message = data && data.error ? data.error : response.status + " " + response.statusText;
    const err = new Error(message);
    err.status = response.status;
    throw err;
  }
  return data;
}

function showMessage(text) {
  const m = $("message");
  m.textContent = text;
  m.hidden = !text;
}

// ---------- setup ----------

// The game's facts as /api/info gives them.
function gameInfo(game) {
  return (state.info && state.info.games.find((x) => x.game === game)) || null;
}

function modelsOf(game) {
  const g = gameInfo(game);
  return g ? g.models : [];
}

// The engines the game proposes: [opponent (and first engine), second engine].
function pageEngines(game) {
  const g = gameInfo(game);
  return g ? g.page_engines : ["solver", "mcts:800"];
}

// A run's best where there is one, else the network shipped with zero.
function defaultOpponent(game) {
  for (const m of ["best", "pretrained"]) if (modelsOf(game).includes(m)) return m;
  return pageEngines(game)[0];
}

function fillGames() {
  const select = $("game");
  select.textContent = "";
  for (const g of state.info ? state.info.games : []) {
    const o = el("option", "", g.title);
    o.value = g.game;
    select.appendChild(o);
  }
}

function fillPlayers() {
  const game = $("game").value;
  const g = gameInfo(game);
  const list = $("players");
  list.textContent = "";
  const named = ["best", "latest", "pretrained"];
  const names = named.filter((m) => modelsOf(game).includes(m));
  for (const m of modelsOf(game)) if (!named.includes(m)) names.push("model:" + m);
  names.push("solver", "minimax:4", "minimax:6", "mcts:800", "mcts:2000", "random", "human");
  if (g && g.rules_player) names.push("rules");
  for (const n of names) { const o = el("option"); o.value = n; list.appendChild(o); }
  $("opponent").value = defaultOpponent(game);
  $("engine-a").value = defaultOpponent(game);
  $("engine-b").value = pageEngines(game)[1];
}

async function loadInfo() {
  try {
    state.info = await api("GET", "/api/info");
    $("players-help").textContent = "Players: " + state.info.players + ".";
  } catch (e) {
    showMessage(e.message);
  }
  fillGames();
  fillPlayers();
}

function simsValue(id) {
  const v = $(id).value.trim();
  return v === "" ? null : Number(v);
}

async function startGame() {
  showMessage("");
  stopWatching();
  const game = $("game").value;
  let body;
  if (state.mode === "play") {
    const human = document.querySelector("input[name=side]:checked").value;
    const engine = $("opponent").value.trim();
    body = {
      game,
      first: human === "first" ? "human" : engine,
      second: human === "first" ? engine : "human",
      sims: simsValue("sims"),
    };
  } else {
    body = {
      game, first: $("engine-a").value.trim(), second: $("engine-b").value.trim(),
      first_sims: simsValue("sims-a"), second_sims: simsValue("sims-b"),
    };
  }
  body.position = $("position").value.trim();
  try {
    const view = await api("POST", "/api/games", body);
    sessionStorage.setItem("zero-game-" + state.mode, view.id);
    state.paused = false;
    $("pause").textContent = "Pause";
    show(view);
    next();
  } catch (e) {
    showMessage(e.message);
  }
}

// ---------- moves ----------

function engineToMove(view) {
  return view && !view.result && view.to_move !== null && !view.sides[view.to_move].human;
}

// Asks the engine to move when it is its turn (in watch mode, after the pause).
function next() {
  const view = state.game;
  if (!engineToMove(view) || state.busy) return;
  if (state.mode === "watch") {
    if (state.paused) return;
    clearTimeout(state.timer);
    state.timer = setTimeout(engineMove, Math.max(0, Number($("delay").value) || 0));
  } else {
    engineMove();
  }
}

async function engineMove() {
  const view = state.game;
  if (!engineToMove(view) || state.busy) return;
  state.busy = true;
  document.body.classList.add("thinking");
  const side = view.sides[view.to_move];
  $("status").textContent = side.name + " (" + side.player + ") is thinking";
  const id = view.id;
  try {
    const after = await api("POST", "/api/games/" + id + "/engine-move");
    if (state.game && state.game.id === id) show(after);
  } catch (e) {
    showMessage(e.message);
    refresh();
  } finally {
    state.busy = false;
    document.body.classList.remove("thinking");
  }
  if (state.game && state.game.id === id) next();
}

async function humanMove(move) {
  const view = state.game;
  if (!view) { showMessage("start a game first"); return; }
  try {
    const after = await api("POST", "/api/games/" + view.id + "/move", { move });
    showMessage("");
    show(after);
    next();
  } catch (e) {
    showMessage(e.message);
  }
}

async function undo() {
  const view = state.game;
  if (!view) return;
  try {
    show(await api("POST", "/api/games/" + view.id + "/undo"));
    showMessage("");
  } catch (e) {
    showMessage(e.message);
  }
}

async function refresh() {
  if (!state.game) return;
  try { show(await api("GET", "/api/games/" + state.game.id)); } catch (e) { /* shown already */ }
}

function stopWatching() {
  clearTimeout(state.timer);
  state.timer = null;
}

// ---------- drawing ----------

function humanToMove(view) {
  return view.to_move !== null && view.sides[view.to_move].human;
}

function show(view) {
  state.game = view;
  drawStatus(view);
  drawBoard(view);
  drawMoves(view);
  drawAnalysis(view);
  drawOtherMoves(view);
  drawKeysHint(view);
  requestPerfect(view);
}

// A button for each move off the board (a pass) that a person to move can play.
function drawOtherMoves(view) {
  const box = $("other-moves");
  box.textContent = "";
  const g = gameInfo(view.game);
  if (!g || !humanToMove(view)) return;
  for (const move of g.other_moves) {
    if (!view.legal.includes(move)) continue;
    const b = el("button", "", move.charAt(0).toUpperCase() + move.slice(1));
    b.type = "button";
    b.dataset.move = move;
    b.addEventListener("click", () => humanMove(move));
    box.appendChild(b);
  }
}

// Keys play the columns of a board of columns whose moves are single keys.
function keyMoves(view) {
  const g = view && gameInfo(view.game);
  if (!g || g.layout !== "columns" || !g.moves.every((m) => m.length === 1)) return [];
  return g.moves;
}

function drawKeysHint(view) {
  const keys = keyMoves(view);
  $("keys-hint").hidden = keys.length === 0;
  if (keys.length) $("keys-hint").textContent = "Keys " + keys[0] + "–" + keys[keys.length - 1] + " drop a stone in a column.";
}

// The game's colours, as CSS variables on an element: the board's, an empty cell's, and
// each side's (--p1, --p2).
function paint(e, g) {
  e.style.setProperty("--board", g.board.colour);
  e.style.setProperty("--cell", g.board.cell);
  e.style.setProperty("--p1", g.sides[0].colour);
  e.style.setProperty("--p2", g.sides[1].colour);
}

function drawStatus(view) {
  $("status").textContent = view.status;
  const dot = $("turn-dot");
  const g = gameInfo(view.game);
  dot.textContent = "";
  dot.className = "dot";
  if (g && view.to_move !== null) {
    paint(dot, g);
    dot.classList.add(g.board.stones, "p" + (view.to_move + 1));
    if (g.board.stones === "marks") dot.textContent = g.sides[view.to_move].mark;
  }
  const result = $("result");
  if (view.result) {
    let text = view.result.text;
    const humans = view.sides.filter((s) => s.human).length;
    if (humans === 1 && view.result.winner !== null) {
      text += view.sides[view.result.winner].human ? ": you win!" : ": you lose.";
    }
    result.textContent = text;
    result.hidden = false;
  } else {
    result.hidden = true;
  }
}

function lastCell(view) {
  const last = view.moves[view.moves.length - 1];
  return last ? last.cell : null;
}

function perfectBadge(move) {
  const p = state.perfect;
  if (!p || !state.game || p.position !== state.game.position) return null;
  const found = p.moves.find((m) => m.move === move);
  if (!found) return null;
  const result = found.result || "unknown";
  let text = { win: "win", draw: "draw", loss: "loss", unknown: "?" }[result];
  if (found.plies !== null && found.plies !== undefined) text += " " + found.plies;
  const b = el("span", "badge " + result, text);
  b.title = found.result
    ? found.result + (found.plies ? ", the game ends " + found.plies + " plies from now with best play" : " with best play")
    : "not solved in time";
  return b;
}

function drawBoard(view) {
  const board = $("board");
  board.textContent = "";
  const g = gameInfo(view.game);
  const row = $("perfect-row");
  if (row) row.remove();
  if (!g) return;
  // The game's name is a class too, for whoever styles or tests one game.
  board.className = "board " + g.layout + " " + g.board.stones + " " + view.game;
  board.dataset.position = view.position;
  paint(board, g);
  board.style.setProperty("--cols", String(view.cols));
  const size = g.layout === "columns" ? Math.min(64, Math.floor(448 / view.cols)) : Math.min(110, Math.floor(336 / view.cols));
  board.style.setProperty("--size", size + "px");
  if (g.layout === "columns") drawColumns(view, g, board); else drawCells(view, g, board);
}

// A board of columns: a click drops a stone in the column; the overlay's badges go below it.
function drawColumns(view, g, board) {
  const last = lastCell(view);
  for (let c = 0; c < view.cols; c++) {
    const move = g.moves[c];
    const col = el("div", "column");
    col.dataset.move = move;
    col.title = "column " + move;
    for (let r = 0; r < view.rows; r++) {
      const i = r * view.cols + c;
      const slot = el("div", "slot");
      const hole = el("div", "hole" + (view.cells[i] ? " p" + view.cells[i] : "") + (i === last ? " last" : ""));
      hole.dataset.cell = String(i);
      slot.appendChild(hole);
      col.appendChild(slot);
    }
    col.addEventListener("click", () => humanMove(move));
    board.appendChild(col);
  }
  const row = el("div", "column-badges");
  row.id = "perfect-row";
  row.style.setProperty("--cols", String(view.cols));
  row.style.setProperty("--size", board.style.getPropertyValue("--size"));
  if ($("perfect").checked) {
    for (let c = 0; c < view.cols; c++) {
      const slot = el("div");
      const b = perfectBadge(g.moves[c]);
      if (b) slot.appendChild(b);
      row.appendChild(slot);
    }
  }
  board.after(row);
}

// A board of cells: a click plays the cell's move. Legal cells are marked when some empty
// cell is not legal (Othello's), not when every one is (tic-tac-toe's).
function drawCells(view, g, board) {
  const last = lastCell(view);
  const humanTurn = humanToMove(view);
  const empty = view.cells.filter((v) => !v).length;
  const onBoard = view.legal.filter((m) => g.moves.includes(m)).length;
  const markLegal = humanTurn && onBoard < empty;
  for (let r = 0; r < view.rows; r++) {
    for (let c = 0; c < view.cols; c++) {
      const i = r * view.cols + c;
      const move = g.moves[i];
      const v = view.cells[i];
      const cell = el("button", "cell" + (v ? " p" + v : "") + (i === last ? " last" : ""));
      if (v && g.board.stones === "marks") cell.textContent = g.sides[v - 1].mark;
      if (v && g.board.stones === "discs") cell.appendChild(el("div", "disc p" + v));
      if (!v && markLegal && view.legal.includes(move)) cell.classList.add("legal");
      cell.type = "button";
      cell.dataset.move = move;
      cell.dataset.cell = String(i);
      cell.title = move;
      if (!v && $("perfect").checked) {
        const b = perfectBadge(move);
        if (b) { b.classList.add("cell-badge"); cell.appendChild(b); }
      }
      cell.addEventListener("click", () => humanMove(move));
      board.appendChild(cell);
    }
  }
}

function drawMoves(view) {
  const list = $("moves");
  list.textContent = "";
  view.moves.forEach((m, k) => {
    const li = el("li", k === view.moves.length - 1 ? "last" : "");
    li.appendChild(el("span", "n", m.ply + "."));
    li.appendChild(document.createTextNode(view.sides[m.side].name + " " + m.move));
    li.title = m.by_engine ? "engine" + (m.seconds !== null ? ", " + m.seconds.toFixed(2) + " s" : "") : "person";
    list.appendChild(li);
  });
  list.scrollTop = list.scrollHeight;
}

function pct(x) { return Math.round(100 * x) + "%"; }

function drawAnalysis(view) {
  const box = $("analysis");
  box.textContent = "";
  const last = [...view.moves].reverse().find((m) => m.by_engine);
  if (!last) {
    box.appendChild(el("p", "hint", "After each engine move: its value and its top moves."));
    return;
  }
  const side = view.sides[last.side];
  box.appendChild(el("div", "who", side.name + " (" + side.player + ") played " + last.move));
  const a = last.analysis;
  if (!a) {
    box.appendChild(el("p", "hint", "This player does not report what it thinks." +
      " The perfect play overlay shows every move's exact result."));
    return;
  }
  const bar = el("div", "score-bar");
  const mine = el("span", "engine", side.name + " " + pct(a.expected_score));
  const theirs = el("span", "you", view.sides[1 - last.side].name + " " + pct(1 - a.expected_score));
  mine.style.width = pct(a.expected_score);
  theirs.style.width = pct(1 - a.expected_score);
  bar.append(mine, theirs);
  box.appendChild(bar);
  box.appendChild(el("p", "verdict",
    "Expected score (a draw counts ½), value " + (a.value >= 0 ? "+" : "") + a.value.toFixed(2) + ": it " + a.verdict + "."));
  const basis = a.visits > 0 ? "share of " + a.visits + " visits" : "network policy (no search)";
  box.appendChild(el("div", "hint", "Top moves, " + basis + ":"));
  const list = el("ul", "top-moves");
  for (const t of a.top) {
    const li = el("li");
    li.appendChild(el("span", "", t.move));
    const share = el("div", "share");
    const fill = el("i");
    fill.style.width = pct(t.share);
    share.appendChild(fill);
    li.appendChild(share);
    li.appendChild(el("span", "", pct(t.share)));
    list.appendChild(li);
  }
  box.appendChild(list);
}

// ---------- perfect play overlay ----------

function perfectNote(view, p) {
  if (p.note) return p.note;
  const side = view.to_move === null ? "" : " for " + view.sides[view.to_move].name;
  return "Perfect play" + side + ": each move's exact result, and the plies until the game ends with best play.";
}

async function requestPerfect(view) {
  const note = $("perfect-note");
  if (!$("perfect").checked || view.result) {
    note.hidden = true;
    return;
  }
  note.hidden = false;
  if (state.perfect && state.perfect.position === view.position) {
    note.textContent = perfectNote(view, state.perfect);
    return;
  }
  if (state.perfectFor === view.position + "@" + view.id) return;
  state.perfectFor = view.position + "@" + view.id;
  note.textContent = "Solving every move…";
  try {
    const p = await api("GET", "/api/games/" + view.id + "/analysis");
    state.perfect = p;
    // A move was played meanwhile: this answer is for an older position.
    if (state.game && state.game.position === p.position) {
      drawBoard(state.game);
      note.textContent = perfectNote(state.game, p);
    }
  } catch (e) {
    note.textContent = "Perfect play: " + e.message;
  } finally {
    state.perfectFor = null;
  }
}

// ---------- training ----------

async function showTraining() {
  const box = $("runs");
  box.textContent = "Loading…";
  try {
    const data = await api("GET", "/api/training");
    box.textContent = "";
    if (data.runs.length === 0) {
      const game = state.info && state.info.games.length ? state.info.games[0].game : "GAME";
      box.appendChild(el("p", "", "No run in the server's models directory yet. Train one with ./zero cycle --game " + game + ", then reload."));
    }
    for (const run of data.runs) {
      const card = el("div", "run");
      const count = run.iterations === 1 ? "1 iteration" : run.iterations + " iterations";
      card.appendChild(el("h3", "", run.game + (run.iterations ? " — " + count : "")));
      if (run.error) {
        card.appendChild(el("p", "message", run.error));
      } else {
        const img = el("img");
        img.src = run.chart + "?t=" + Date.now();
        img.alt = run.game + " run chart";
        card.appendChild(img);
        card.appendChild(el("pre", "", run.table));
      }
      box.appendChild(card);
    }
  } catch (e) {
    box.textContent = e.message;
  }
}

// ---------- views and events ----------

async function route() {
  const view = (location.hash || "#play").slice(1);
  const training = view === "training";
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.dataset.view === view);
  $("game-view").hidden = training;
  $("training-view").hidden = !training;
  if (training) { stopWatching(); showTraining(); return; }
  const mode = view === "watch" ? "watch" : "play";
  if (mode !== state.mode || !state.game) {
    stopWatching();
    state.mode = mode;
    document.body.className = "mode-" + mode;
    $("setup-title").textContent = mode === "watch" ? "Two engines" : "New game";
    state.game = null;
    state.perfect = null;
    $("board").textContent = "";
    $("moves").textContent = "";
    $("status").textContent = mode === "watch" ? "Choose two engines and press Start." : "Choose a game and press Start.";
    $("result").hidden = true;
    showMessage("");
    await resume();
  }
}

// A reload finds the game it showed, if the server still has it.
async function resume() {
  const id = sessionStorage.getItem("zero-game-" + state.mode);
  if (!id) return;
  try {
    const view = await api("GET", "/api/games/" + id);
    $("game").value = view.game;
    show(view);
    if (view.thinking) setTimeout(waitForEngine, 1000); else next();
  } catch (e) {
    sessionStorage.removeItem("zero-game-" + state.mode);
  }
}

// The engine was already thinking when the page loaded: look again until it has moved.
async function waitForEngine() {
  await refresh();
  if (state.game && state.game.thinking) setTimeout(waitForEngine, 1000); else next();
}

document.addEventListener("DOMContentLoaded", async () => {
  $("setup").addEventListener("submit", (e) => { e.preventDefault(); startGame(); });
  $("again").addEventListener("click", startGame);
  $("undo").addEventListener("click", undo);
  $("pause").addEventListener("click", () => {
    state.paused = !state.paused;
    $("pause").textContent = state.paused ? "Resume" : "Pause";
    if (state.paused) stopWatching(); else next();
  });
  $("game").addEventListener("change", fillPlayers);
  $("perfect").addEventListener("change", () => { if (state.game) { drawBoard(state.game); requestPerfect(state.game); } });
  document.addEventListener("keydown", (e) => {
    if (state.mode !== "play" || !state.game) return;
    if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement) return;
    if (keyMoves(state.game).includes(e.key)) humanMove(e.key);
  });
  window.addEventListener("hashchange", route);
  await loadInfo();
  await route();
});
