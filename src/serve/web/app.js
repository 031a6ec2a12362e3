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
  busyFor: null,     // the game whose engine-move request is out
  thinkingSince: 0,  // when that request went out (the page's clock)
  tick: null,        // the timer that shows the seconds since
  paused: false,     // watch mode
  perfectFor: null,  // the position the overlay is being solved for
  perfect: null,
  timer: null,
  replay: null,      // stepping through the game: the board after some ply (view only)
  review: null,      // the solver's review, for the game and position it was asked for
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
    throw new Error("The server cannot be reached. Is zero serve still running?");
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

// Network players are the ones that take a number of simulations.
function isNetwork(spec) {
  return /^\s*(best|latest|model:)/.test(spec);
}

// Each Simulations field shows only while its player is a network.
function showSimsFields() {
  for (const label of document.querySelectorAll(".sims-field")) {
    label.hidden = !isNetwork($(label.dataset.for).value);
  }
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
  $("position-hint").textContent = "(optional: the moves so far" + (g ? ", e.g. " + g.example_position : "") + ")";
  showSimsFields();
}

async function loadInfo() {
  try {
    state.info = await api("GET", "/api/info");
    $("players-help").textContent = "Players: " + state.info.players + ".";
    for (const id of ["sims", "sims-a", "sims-b"]) $(id).max = String(state.info.limits.network_sims);
  } catch (e) {
    showMessage(e.message);
  }
  fillGames();
  fillPlayers();
}

// The number in a Simulations field: none when empty or when it does not apply.
function simsValue(id, spec) {
  const v = $(id).value.trim();
  if (v === "" || !isNetwork(spec)) return null;
  return Number(v);
}

// What the form asks for, as POST /api/games reads it.
function newGameBody() {
  const game = $("game").value;
  let body;
  if (state.mode === "play") {
    const human = document.querySelector("input[name=side]:checked").value;
    const engine = $("opponent").value.trim();
    body = {
      game,
      first: human === "first" ? "human" : engine,
      second: human === "first" ? engine : "human",
      sims: simsValue("sims", engine),
    };
  } else {
    const a = $("engine-a").value.trim(), b = $("engine-b").value.trim();
    body = { game, first: a, second: b, first_sims: simsValue("sims-a", a), second_sims: simsValue("sims-b", b) };
  }
  const sims = [body.sims, body.first_sims, body.second_sims].find((s) => s !== undefined && s !== null && !(Number.isInteger(s) && s >= 0));
  if (sims !== undefined) throw new Error("Simulations: give a whole number from 0 up.");
  body.position = $("position").value.trim();
  return body;
}

// The game this mode shows ends on the server: a page that moves on leaves nothing behind.
function endGame(id) {
  if (!id) return;
  fetch("/api/games/" + id, { method: "DELETE", keepalive: true }).catch(() => {});
}

function remember(view, body) {
  const saved = JSON.parse(sessionStorage.getItem("zero-game-" + state.mode) || "null");
  const spec = body || (saved && saved.id === view.id ? saved.spec : null);
  sessionStorage.setItem("zero-game-" + state.mode, JSON.stringify({ id: view.id, spec, position: view.position }));
}

async function startGame() {
  showMessage("");
  stopWatching();
  let body;
  try { body = newGameBody(); } catch (e) { showMessage(e.message); return; }
  const previous = state.game;
  try {
    const view = await api("POST", "/api/games", body);
    // The game it replaces ends (its engine, if thinking, is stopped): it is not shown again.
    if (previous) endGame(previous.id);
    state.game = null;
    remember(view, body);
    state.paused = false;
    state.replay = null;
    state.review = null;
    $("pause").textContent = "Pause";
    show(view);
    // On a narrow screen the form is under the board: bring the board back into view.
    document.querySelector(".board-area").scrollIntoView({ block: "nearest" });
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
  if (!engineToMove(view) || state.busyFor === view.id) return;
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
  if (!engineToMove(view) || state.busyFor === view.id) return;
  const id = view.id;
  state.busyFor = id;
  thinking(view);
  // Done with this request; another game's may be out by now, and keeps its display.
  const done = () => { if (state.busyFor === id) { state.busyFor = null; thinking(null); } };
  try {
    const after = await api("POST", "/api/games/" + id + "/engine-move");
    done();
    if (state.game && state.game.id === id) show(after);
  } catch (e) {
    done();
    if (state.game && state.game.id === id) { showMessage(e.message); refresh(); }
  }
  next();
}

// While the engine thinks: who, for how long, and the Stop button.
function thinking(view) {
  clearInterval(state.tick);
  const on = !!view;
  document.body.classList.toggle("thinking", on);
  $("stop").hidden = !on;
  $("stop").disabled = false;
  $("elapsed").hidden = !on;
  if (!on) return;
  const side = view.sides[view.to_move];
  $("status").textContent = side.name + " (" + side.player + ") is thinking";
  state.thinkingSince = Date.now() - 1000 * ((view.thinking && view.thinking.seconds) || 0);
  const show = () => { $("elapsed").textContent = Math.floor((Date.now() - state.thinkingSince) / 1000) + " s"; };
  show();
  state.tick = setInterval(show, 250);
}

async function stopEngine() {
  const view = state.game;
  if (!view) return;
  $("stop").disabled = true;
  $("status").textContent = "Moving now…";
  try {
    await api("POST", "/api/games/" + view.id + "/stop");
  } catch (e) {
    // It had already moved: the move is on its way.
    if (e.status !== 409) showMessage(e.message);
  }
}

async function humanMove(move) {
  const view = state.game;
  if (!view) { showMessage("Start a game first: press New game or Start."); return; }
  if (state.replay) { showMessage("You are looking at an earlier move: press Back to the game (or Esc) to play."); return; }
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
    state.replay = null;
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

// ---------- stepping through the game (view only) ----------

async function stepTo(ply) {
  const view = state.game;
  if (!view) return;
  const plies = view.moves.length;
  ply = Math.max(0, Math.min(plies, ply));
  if (ply === plies) { state.replay = null; show(view); return; }
  try {
    const board = await api("GET", "/api/games/" + view.id + "/board?ply=" + ply);
    if (state.game !== view) return;
    state.replay = board;
    show(view);
  } catch (e) {
    showMessage(e.message);
  }
}

function shownPly(view) {
  return state.replay ? state.replay.ply : view.moves.length;
}

// ---------- drawing ----------

function humanToMove(view) {
  return view.to_move !== null && view.sides[view.to_move].human;
}

function show(view) {
  if (state.game && state.game.id !== view.id) { state.replay = null; state.review = null; }
  if (state.replay && state.replay.ply >= view.moves.length) state.replay = null;
  state.game = view;
  remember(view);
  drawStatus(view);
  drawBoard(view);
  drawMoves(view);
  drawAnalysis(view);
  drawOtherMoves(view);
  drawKeysHint(view);
  drawPosition(view);
  drawReview(view);
  requestPerfect(view);
}

// A button for each move off the board (a pass) that a person to move can play.
function drawOtherMoves(view) {
  const box = $("other-moves");
  box.textContent = "";
  const g = gameInfo(view.game);
  if (!g || !humanToMove(view) || state.replay) return;
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
  if (keys.length) $("keys-hint").textContent = "Keys " + keys[0] + "–" + keys[keys.length - 1] + " drop a stone in a column; ← and → step through the moves.";
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
  if (state.busyFor !== view.id) $("status").textContent = view.status;
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
    // The banner's room stays (see the CSS), so the board never moves when it shows.
    result.textContent = "";
    result.hidden = true;
  }
  const replay = $("replay");
  replay.hidden = !state.replay;
  if (state.replay) {
    replay.textContent = state.replay.ply === 0
      ? "The start of the game (view only)"
      : "After move " + state.replay.ply + " of " + view.moves.length + " (view only)";
  }
}

function perfectBadge(move) {
  const p = state.perfect;
  if (!p || !state.game || p.position !== state.game.position || state.replay) return null;
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

// What the board shows: the game now, or the board after an earlier ply.
function shownBoard(view) {
  if (state.replay) return state.replay;
  const last = view.moves[view.moves.length - 1];
  return { cells: view.cells, last_cell: last ? last.cell : null, winning_cells: view.winning_cells };
}

function drawBoard(view) {
  const board = $("board");
  board.textContent = "";
  const g = gameInfo(view.game);
  const row = $("perfect-row");
  if (row) row.remove();
  if (!g) return;
  // The game's name is a class too, for whoever styles or tests one game.
  board.className = "board " + g.layout + " " + g.board.stones + " " + view.game + (state.replay ? " replaying" : "");
  board.dataset.position = view.position;
  paint(board, g);
  // The columns, and the largest a cell gets: the CSS makes cells smaller to fit the width
  // (the board and the overlay's row below it alike).
  const area = board.parentElement;
  area.style.setProperty("--cols", String(view.cols));
  area.style.setProperty("--max-size", (g.layout === "columns" ? 64 : Math.min(110, Math.floor(336 / view.cols))) + "px");
  const shown = shownBoard(view);
  if (g.layout === "columns") drawColumns(view, g, board, shown); else drawCells(view, g, board, shown);
}

function holeClass(shown, i) {
  const v = shown.cells[i];
  return (v ? " p" + v : "") + (i === shown.last_cell ? " last" : "") + (shown.winning_cells.includes(i) ? " win" : "");
}

// A board of columns: a click drops a stone in the column; the overlay's badges go below it.
function drawColumns(view, g, board, shown) {
  for (let c = 0; c < view.cols; c++) {
    const move = g.moves[c];
    const col = el("div", "column");
    col.dataset.move = move;
    col.title = "column " + move;
    for (let r = 0; r < view.rows; r++) {
      const i = r * view.cols + c;
      const slot = el("div", "slot");
      const hole = el("div", "hole" + holeClass(shown, i));
      hole.dataset.cell = String(i);
      slot.appendChild(hole);
      col.appendChild(slot);
    }
    col.addEventListener("click", () => humanMove(move));
    board.appendChild(col);
  }
  const row = el("div", "column-badges");
  row.id = "perfect-row";
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
function drawCells(view, g, board, shown) {
  const humanTurn = humanToMove(view) && !state.replay;
  const empty = view.cells.filter((v) => !v).length;
  const onBoard = view.legal.filter((m) => g.moves.includes(m)).length;
  const markLegal = humanTurn && onBoard < empty;
  for (let r = 0; r < view.rows; r++) {
    for (let c = 0; c < view.cols; c++) {
      const i = r * view.cols + c;
      const move = g.moves[i];
      const v = shown.cells[i];
      const cell = el("button", "cell" + holeClass(shown, i));
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
  const at = shownPly(view);
  view.moves.forEach((m, k) => {
    const li = el("li", (k === at - 1 ? "last" : "") + (k < view.opening_plies ? " given" : ""));
    li.appendChild(el("span", "n", m.ply + "."));
    li.appendChild(document.createTextNode(view.sides[m.side].name + " " + m.move));
    let title = m.by_engine ? "engine" + (m.seconds !== null ? ", " + m.seconds.toFixed(2) + " s" : "") : (k < view.opening_plies ? "given at the start" : "person");
    if (m.stopped) title += ", stopped early";
    li.title = title + ": click to see the board after it";
    li.dataset.ply = String(m.ply);
    li.addEventListener("click", () => stepTo(m.ply));
    list.appendChild(li);
  });
  if (!state.replay) list.scrollTop = list.scrollHeight;
  $("step-back").disabled = at === 0;
  $("step-forward").disabled = at >= view.moves.length;
  $("step-live").hidden = !state.replay;
}

function drawPosition(view) {
  $("position-string").value = view.position;
  $("copy").disabled = !view.position;
}

async function copyPosition() {
  const input = $("position-string");
  const text = input.value;
  let copied = false;
  try {
    await navigator.clipboard.writeText(text);
    copied = true;
  } catch (e) {
    // Without clipboard access (an insecure origin, a test browser): the old way.
    input.focus();
    input.select();
    try { copied = document.execCommand("copy"); } catch (e2) { copied = false; }
  }
  $("copy").textContent = copied ? "Copied" : "Select and copy";
  setTimeout(() => { $("copy").textContent = "Copy"; }, 1500);
}

function pct(x) { return Math.round(100 * x) + "%"; }

// The network's win/draw/loss figures for the side that moved, as a bar and in words.
function wdlBar(a, side) {
  const box = el("div", "wdl");
  const bar = el("div", "wdl-bar");
  for (const [key, word] of [["win", "win"], ["draw", "draw"], ["loss", "loss"]]) {
    const part = el("span", key, a.wdl[key] >= 0.12 ? word + " " + pct(a.wdl[key]) : "");
    part.style.width = pct(a.wdl[key]);
    part.title = word + " " + pct(a.wdl[key]);
    bar.appendChild(part);
  }
  box.appendChild(bar);
  box.appendChild(el("p", "hint", "The network's own prediction for " + side.name + " before its search: win " +
    pct(a.wdl.win) + ", draw " + pct(a.wdl.draw) + ", loss " + pct(a.wdl.loss) + "."));
  return box;
}

function drawAnalysis(view) {
  const box = $("analysis");
  box.textContent = "";
  const upTo = view.moves.slice(0, shownPly(view));
  const last = [...upTo].reverse().find((m) => m.by_engine);
  if (!last) {
    box.appendChild(el("p", "hint", "After each engine move: its value and its top moves."));
    return;
  }
  const side = view.sides[last.side];
  box.appendChild(el("div", "who", side.name + " (" + side.player + ") played " + last.move));
  if (last.stopped) {
    box.appendChild(el("p", "stopped", "Stopped after " + (last.seconds || 0).toFixed(1) + " s: it moved with what it had found" +
      (last.analysis ? " (" + last.analysis.visits + " simulations)." : ".")));
  }
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
    "Expected score after the search (a draw counts ½), value " + (a.value >= 0 ? "+" : "") + a.value.toFixed(2) + ": it " + a.verdict + "."));
  if (a.wdl) box.appendChild(wdlBar(a, side));
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
    state.replay = null;
    state.review = null;
    thinking(null);
    $("board").textContent = "";
    $("moves").textContent = "";
    $("review-box").hidden = true;
    $("status").textContent = mode === "watch" ? "Choose two engines and press Start." : "Choose a game and press Start.";
    $("result").hidden = true;
    showMessage("");
    await resume();
  }
}

// A reload finds the game it showed: still on the server, or started again from its moves
// (the page ends its games when it closes).
async function resume() {
  const saved = JSON.parse(sessionStorage.getItem("zero-game-" + state.mode) || "null");
  if (!saved || !saved.id) return;
  try {
    if (saved.ended) throw new Error("ended");
    const view = await api("GET", "/api/games/" + saved.id);
    $("game").value = view.game;
    show(view);
    if (view.thinking) waitForEngine(view); else next();
    return;
  } catch (e) {
    if (!saved.spec) { sessionStorage.removeItem("zero-game-" + state.mode); return; }
  }
  try {
    const view = await api("POST", "/api/games", Object.assign({}, saved.spec, { position: saved.position }));
    $("game").value = view.game;
    remember(view, saved.spec);
    show(view);
    next();
  } catch (e) {
    sessionStorage.removeItem("zero-game-" + state.mode);
  }
}

// The engine was already thinking when the page loaded: look again until it has moved.
async function waitForEngine(view) {
  state.busyFor = view.id;
  thinking(view);
  while (state.game && state.game.id === view.id && state.game.thinking) {
    await new Promise((r) => setTimeout(r, 1000));
    await refresh();
  }
  if (state.busyFor === view.id) { state.busyFor = null; thinking(null); }
  if (state.game) drawStatus(state.game);
  next();
}

// The games this page shows end when it goes away; a reload starts them again from their
// moves (marked ended, so that it does not find them still there before the ending lands).
function endGamesOnLeave() {
  for (const mode of ["play", "watch"]) {
    const key = "zero-game-" + mode;
    const saved = JSON.parse(sessionStorage.getItem(key) || "null");
    if (!saved || !saved.id || saved.ended) continue;
    endGame(saved.id);
    sessionStorage.setItem(key, JSON.stringify(Object.assign(saved, { ended: true })));
  }
}

function onKey(e) {
  if (!state.game || $("game-view").hidden) return;
  if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement) return;
  if (e.key === "ArrowLeft") { stepTo(shownPly(state.game) - 1); return; }
  if (e.key === "ArrowRight") { stepTo(shownPly(state.game) + 1); return; }
  if (e.key === "Escape" && state.replay) { stepTo(state.game.moves.length); return; }
  if (state.mode === "play" && keyMoves(state.game).includes(e.key)) humanMove(e.key);
}

document.addEventListener("DOMContentLoaded", async () => {
  $("setup").addEventListener("submit", (e) => { e.preventDefault(); startGame(); });
  $("again").addEventListener("click", startGame);
  $("undo").addEventListener("click", undo);
  $("stop").addEventListener("click", stopEngine);
  $("copy").addEventListener("click", copyPosition);
  $("review").addEventListener("click", reviewGame);
  $("step-back").addEventListener("click", () => state.game && stepTo(shownPly(state.game) - 1));
  $("step-forward").addEventListener("click", () => state.game && stepTo(shownPly(state.game) + 1));
  $("step-live").addEventListener("click", () => state.game && stepTo(state.game.moves.length));
  $("pause").addEventListener("click", () => {
    state.paused = !state.paused;
    $("pause").textContent = state.paused ? "Resume" : "Pause";
    if (state.paused) stopWatching(); else next();
    if (state.game) requestPerfect(state.game);
  });
  $("game").addEventListener("change", fillPlayers);
  for (const id of ["opponent", "engine-a", "engine-b"]) $(id).addEventListener("input", showSimsFields);
  $("perfect").addEventListener("change", () => { if (state.game) { drawBoard(state.game); requestPerfect(state.game); } });
  document.addEventListener("keydown", onKey);
  window.addEventListener("pagehide", endGamesOnLeave);
  // Back from the browser's cache after its games were ended: start them again.
  window.addEventListener("pageshow", (e) => { if (e.persisted) { state.game = null; route(); } });
  window.addEventListener("hashchange", route);
  await loadInfo();
  await route();
});
