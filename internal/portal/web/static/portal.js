// tunecon portal: the live parts of its pages, from server-sent events.
// Every page works without this script; it only keeps them current.
"use strict";

// A running job's page: fill each data-field from "progress" events, and
// load the page again when the job is done (it then shows the result).
function watchJob(el) {
  const es = new EventSource(el.dataset.live);
  es.addEventListener("progress", (e) => {
    const p = JSON.parse(e.data);
    for (const dd of el.querySelectorAll("[data-field]")) {
      let v = p[dd.dataset.field];
      if (dd.dataset.field === "score") v = Math.round(v);
      if (dd.dataset.field === "position" && !v) v = "—";
      dd.textContent = String(v);
    }
  });
  es.addEventListener("done", () => { es.close(); location.reload(); });
}

// The leaderboard: rebuild its rows from "board" events. Team names go in
// as text, never as markup.
function watchBoard(table) {
  const es = new EventSource(table.dataset.live);
  const own = document.body.dataset.team;
  es.addEventListener("board", (e) => {
    const rows = JSON.parse(e.data);
    const tbody = table.tBodies[0];
    const fresh = document.createElement("tbody");
    for (const r of rows) {
      const tr = document.createElement("tr");
      if (own && String(r.team_id) === own) tr.className = "own";
      const cells = [r.rank || "—", r.team, r.passed ? Math.round(r.score) : "—", r.runs];
      cells.forEach((c, i) => {
        const td = document.createElement("td");
        if (i >= 2) td.className = "num";
        td.textContent = String(c);
        tr.appendChild(td);
      });
      fresh.appendChild(tr);
    }
    table.replaceChild(fresh, tbody);
  });
}

document.addEventListener("DOMContentLoaded", () => {
  if (!window.EventSource) return;
  const job = document.querySelector("dl.progress[data-live]");
  if (job) watchJob(job);
  const board = document.querySelector("table.board[data-live]");
  if (board) watchBoard(board);
});
