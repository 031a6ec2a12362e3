// zero serve: the panels beside the board, over the page's state and helpers (app.js): the
// solver's review of a game, the perfect-play overlay, and the training page.
"use strict";

// ---------- the solver's review ----------

async function reviewGame() {
  const view = state.game;
  if (!view) return;
  const box = $("review-box");
  box.hidden = false;
  box.textContent = "";
  const started = Date.now();
  const note = el("p", "hint", "The solver is grading every move…");
  box.appendChild(note);
  const tick = setInterval(() => { note.textContent = "The solver is grading every move… " + Math.floor((Date.now() - started) / 1000) + " s"; }, 500);
  $("review").disabled = true;
  try {
    const r = await api("GET", "/api/games/" + view.id + "/review");
    state.review = { id: view.id, position: view.position, r };
  } catch (e) {
    state.review = { id: view.id, position: view.position, error: e.message };
  } finally {
    clearInterval(tick);
    $("review").disabled = false;
  }
  if (state.game) drawReview(state.game);
}

function drawReview(view) {
  const box = $("review-box");
  const rv = state.review;
  if (!rv || rv.id !== view.id) { box.hidden = true; return; }
  box.hidden = false;
  box.textContent = "";
  if (rv.error) { box.appendChild(el("p", "message", rv.error)); return; }
  const r = rv.r;
  if (rv.position !== view.position) box.appendChild(el("p", "hint", "For the moves up to " + r.position.length + " characters of the position; ask again for the rest."));
  box.appendChild(el("p", "summary", r.summary));
  const list = el("ul", "mistakes");
  for (const m of r.mistakes) {
    const li = el("li");
    li.textContent = m.move_number + ". " + m.side_name + " " + m.played + ": " + m.before + " → " + m.after +
      (m.best.length ? " (" + m.best.join(" or ") + " kept the " + m.before + ")" : "");
    li.title = "Click to see the board before this move";
    li.addEventListener("click", () => stepTo(m.move_number - 1));
    list.appendChild(li);
  }
  box.appendChild(list);
  if (r.note) box.appendChild(el("p", "hint", r.note));
}

// ---------- perfect play overlay ----------

function perfectNote(view, p) {
  if (p.note) return p.note;
  const side = view.to_move === null ? "" : " for " + view.sides[view.to_move].name;
  return "Perfect play" + side + ": each move's exact result, and the plies until the game ends with best play.";
}

// Solved only when a person is to move (or a watched game is paused): an engine's turn
// would take the solvers, and the cores, from the engine while it thinks.
function perfectWanted(view) {
  if (view.result || state.replay) return false;
  return humanToMove(view) || (state.mode === "watch" && state.paused);
}

async function requestPerfect(view) {
  const note = $("perfect-note");
  if (!$("perfect").checked || view.result) {
    note.hidden = true;
    return;
  }
  note.hidden = false;
  if (!perfectWanted(view)) {
    note.textContent = state.replay ? "Perfect play shows on the game's current position." : "Perfect play shows on your turn.";
    return;
  }
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
