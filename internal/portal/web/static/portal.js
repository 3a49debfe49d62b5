// tunecon portal: the live parts of its pages, from server-sent events.
// Every page works without this script; it only keeps them current.
"use strict";

// A job's times, counted each second between events from the server's
// clock (data-now, when the page was served): how long it has run and
// about how long it has left, or about how long before it starts. The
// server says them the same way (jobTimes.Text).
function jobTimes(el, bar, served) {
  const skew = served > 0 ? served - Date.now() : 0;
  const clock = (s) => {
    s = Math.max(0, Math.round(s));
    return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
  };
  const show = () => {
    const started = +el.dataset.started, typical = +el.dataset.typical, wait = +el.dataset.wait;
    if (started > 0) {
      const elapsed = (Date.now() + skew - started) / 1000, left = typical - elapsed;
      el.textContent = clock(elapsed) + " elapsed, " + (left >= 0.5 ? "about " + clock(left) + " left" : "finishing");
      if (bar) { bar.hidden = false; bar.max = typical; bar.value = Math.min(elapsed, typical); }
    } else {
      el.textContent = wait > 0 ? "starts in about " + clock(wait) : "—";
    }
  };
  show();
  setInterval(show, 1000);
  return show;
}

// A running job's page: fill each data-field from "progress" events, and
// load the page again when the job is done (it then shows the result).
function watchJob(el) {
  const time = document.getElementById("job-time");
  const showTime = time ? jobTimes(time, document.getElementById("job-bar"), +el.dataset.now) : null;
  const es = new EventSource(el.dataset.live);
  es.addEventListener("progress", (e) => {
    const p = JSON.parse(e.data);
    for (const dd of el.querySelectorAll("[data-field]")) {
      let v = p[dd.dataset.field];
      if (dd.dataset.field === "score") v = Math.round(v);
      if (dd.dataset.field === "position" && !v) v = "—";
      dd.textContent = String(v);
    }
    if (showTime) {
      Object.assign(time.dataset, { started: p.started, wait: p.wait_s, typical: p.typical_s });
      showTime();
    }
  });
  es.addEventListener("done", () => { es.close(); location.reload(); });
}

// The leaderboard: rebuild its rows from "board" events ({frozen, rows}),
// counting the rebuilds in the table's data-updates. Team names go in as
// text, never as markup. During a freeze a team's own
// live score comes in "own" events.
function watchBoard(table, changed) {
  const es = new EventSource(table.dataset.live);
  const own = document.body.dataset.team;
  const brackets = table.dataset.brackets === "1";
  es.addEventListener("board", (e) => {
    const { rows } = JSON.parse(e.data);
    const tbody = table.tBodies[0];
    const fresh = document.createElement("tbody");
    for (const r of rows) {
      const tr = document.createElement("tr");
      if (own && String(r.team_id) === own) tr.className = "own";
      else if (r.hidden) tr.className = "hidden-team";
      if (r.dq) tr.classList.add("dq");
      const cells = [r.dq ? "DQ" : (r.rank || "—"), r.team];
      if (brackets) cells.push(r.bracket || "");
      cells.push(r.passed ? Math.round(r.score) : "—", r.runs);
      cells.forEach((c, i) => {
        const td = document.createElement("td");
        if (i >= cells.length - 2) td.className = "num";
        // A disqualified team's name and score are struck, as on the
        // page the server renders.
        const struck = r.dq && (i === 1 || (i === cells.length - 2 && r.passed));
        (struck ? td.appendChild(document.createElement("s")) : td).textContent = String(c);
        if (i === 1 && r.hidden) td.append(" (hidden)");
        if (i === 1 && r.dq) {
          const note = document.createElement("small");
          note.className = "dq-note";
          // Staff's rows carry every reason; a team sees its own, which
          // the page gave when it was served.
          const reason = r.dq_reason || (tr.className.startsWith("own") ? table.dataset.ownDq : "");
          note.textContent = reason ? "(disqualified: " + reason + ")" : "(disqualified)";
          td.append(" ", note);
        }
        tr.appendChild(td);
      });
      fresh.appendChild(tr);
    }
    table.replaceChild(fresh, tbody);
    table.dataset.updates = String((Number(table.dataset.updates) || 0) + 1);
    changed();
  });
  const note = document.getElementById("own-now");
  es.addEventListener("own", (e) => {
    if (!note) return;
    const o = JSON.parse(e.data);
    note.querySelector("[data-field=score]").textContent = o.passed ? String(Math.round(o.score)) : "—";
    note.querySelector("[data-field=runs]").textContent = String(o.runs);
    changed();
  });
}

// utcLabel is a time axis's label: HH:MM in UTC, with seconds when the
// ticks are less than a minute apart, and the date when a day apart.
function utcLabel(v, incr) {
  const iso = new Date(v * 1000).toISOString();
  if (incr >= 86400) return iso.slice(5, 10);
  return incr < 60 ? iso.slice(11, 19) : iso.slice(11, 16);
}

// freezeMarker draws the board's freeze as a dashed line across the chart
// (its position, in CSS pixels, goes to the element's data-freeze-x).
function freezeMarker(at, el) {
  const color = "#1d4ed8";
  return { hooks: { draw: [(u) => {
    const x = u.valToPos(at, "x", true), { left, top, width, height } = u.bbox;
    if (x < left || x > left + width) { el.dataset.freezeX = ""; return; }
    const ctx = u.ctx, px = uPlot.pxRatio;
    ctx.save();
    ctx.strokeStyle = color;
    ctx.fillStyle = color;
    ctx.lineWidth = 2 * px;
    ctx.setLineDash([6 * px, 3 * px]);
    ctx.beginPath();
    ctx.moveTo(x, top);
    ctx.lineTo(x, top + height);
    ctx.stroke();
    ctx.font = 12 * px + "px system-ui, sans-serif";
    ctx.textAlign = "right";
    ctx.fillText("freeze", x - 4 * px, top + 14 * px);
    ctx.restore();
    el.dataset.freezeX = String(Math.round(x / px));
  }] } };
}

// The score chart: each team's passed scores as a step line over time,
// drawn by uPlot from /leaderboard/history.
const palette = ["#1f5fbf", "#c2410c", "#15803d", "#7e22ce", "#b91c1c", "#0e7490", "#a16207", "#be185d", "#4d7c0f", "#475569", "#0f172a"];
let chart = null;

async function drawChart(el) {
  if (!window.uPlot) return;
  const res = await fetch(el.dataset.history, { credentials: "same-origin" });
  if (!res.ok) return;
  const { series } = await res.json();
  const times = [...new Set((series || []).flatMap((s) => s.points.map((p) => p[0])))].sort((a, b) => a - b);
  // Each line goes on to now at its team's latest score.
  const now = Math.floor(Date.now() / 1000);
  if (times.length && now > times[times.length - 1]) times.push(now);
  const data = [times];
  // The freeze, when it falls within the chart, is marked (and the axis
  // reaches back to it).
  const freeze = +el.dataset.freeze || 0;
  const last = times.length ? times[times.length - 1] : 0;
  const from = freeze && freeze <= last ? Math.min(times[0] - 300, freeze - 60) : times[0] - 300;
  const opts = {
    width: Math.max(280, el.clientWidth), height: 260,
    // From a little before the first score to now: one score alone would
    // otherwise stretch the axis over years.
    scales: { x: { time: true, range: () => [from, last + 60] } },
    // Times in 24-hour UTC, as on every other page, at round UTC times,
    // and never closer than a label's width.
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
    axes: [{ space: 80, label: "UTC", labelSize: 18, values: (u, splits, i, space, incr) => splits.map((v) => utcLabel(v, incr)) }, {}],
    series: [{}],
    legend: { live: false },
    plugins: freeze ? [freezeMarker(freeze, el)] : [],
  };
  (series || []).forEach((s, i) => {
    // The team's score at each time: its latest passed score so far.
    const ys = [];
    let j = 0, last = null;
    for (const t of times) {
      while (j < s.points.length && s.points[j][0] <= t) last = s.points[j++][1];
      ys.push(last);
    }
    data.push(ys);
    opts.series.push({ label: s.team, stroke: palette[i % palette.length], width: s.own ? 4 : 1.5,
      paths: uPlot.paths.stepped({ align: 1 }), spanGaps: false });
  });
  if (chart) chart.destroy();
  chart = times.length ? new uPlot(opts, data, el) : null;
  el.dataset.points = String(times.length);
}

// A team's answered questions, on every page: the badge and the banner
// show how many answers this browser has not yet seen on the
// clarifications page (it keeps the count it saw there); that page marks
// them seen. It returns what "notices" events call with the new count.
function answers() {
  const team = document.body.dataset.team;
  const badge = document.querySelector(".badge[data-answered]");
  if (!team || !badge) return null;
  const key = "tunecon.answered." + team;
  const store = {
    get: () => { try { return +(localStorage.getItem(key) || 0); } catch { return 0; } },
    set: (n) => { try { localStorage.setItem(key, String(n)); } catch { /* kept nowhere */ } },
  };
  const show = (answered) => {
    let seen = store.get();
    if (location.pathname === "/clarifications" || seen > answered) store.set(seen = answered);
    const fresh = answered - seen;
    for (const el of document.querySelectorAll("[data-count=answered-new]")) el.textContent = String(fresh);
    badge.hidden = !fresh;
    const banner = document.getElementById("answer-banner");
    if (banner) banner.hidden = !fresh;
  };
  show(+badge.dataset.answered);
  return show;
}

// Announcements and clarifications, on every page: "notices" events
// ({latest, unread, unanswered, clarifications}) set the counts, and when
// a list on the page shows something older it is read again from the
// server (the page's own address) and put in place. A list whose forms are
// being typed in is left alone: a note offers a reload instead.
function watchNotices(showAnswers) {
  const es = new EventSource("/notices/events");
  let busy = false, again = false;
  const setCounts = (name, n) => {
    for (const el of document.querySelectorAll(`[data-count=${name}]`)) el.textContent = String(n);
    for (const el of document.querySelectorAll(`.badge[data-count=${name}]`)) el.hidden = !n;
    if (name === "unread") {
      const banner = document.getElementById("notice-banner");
      if (banner) banner.hidden = !n;
    }
  };
  const stale = (n) => {
    const out = [];
    const ann = document.getElementById("announcements");
    if (ann && ann.dataset.latest !== String(n.latest)) out.push(ann);
    const clar = document.getElementById("clarifications");
    if (clar && n.clarifications !== undefined && clar.dataset.key !== n.clarifications) out.push(clar);
    return out;
  };
  const refresh = async (n) => {
    if (busy) { again = true; return; }
    busy = true;
    try {
      let lists = stale(n).filter((el) => {
        if (!el.dataset.dirty) return true;
        const note = document.getElementById(el.id + "-changed");
        if (note) note.hidden = false;
        return false;
      });
      if (!lists.length) return;
      const res = await fetch(location.pathname + location.search, { credentials: "same-origin" });
      if (!res.ok) return;
      const doc = new DOMParser().parseFromString(await res.text(), "text/html");
      for (const el of lists) {
        const fresh = doc.getElementById(el.id);
        if (fresh) el.replaceWith(document.importNode(fresh, true));
      }
      // Reading the announcements page marks them read: its counts now.
      for (const name of ["unread", "unanswered"]) {
        const c = doc.querySelector(`[data-count=${name}]`);
        if (c) setCounts(name, +c.textContent);
      }
    } finally {
      busy = false;
      if (again) { again = false; refresh(last); }
    }
  };
  let last = null;
  es.addEventListener("notices", (e) => {
    last = JSON.parse(e.data);
    setCounts("unread", last.unread);
    setCounts("unanswered", last.unanswered);
    if (showAnswers) showAnswers(last.answered);
    refresh(last);
  });
  // Typing in a live list's form holds its updates back.
  document.addEventListener("input", (e) => {
    const list = e.target.closest && e.target.closest("[data-live-list]");
    if (list) list.dataset.dirty = "1";
  });
  // A canned answer, chosen, fills the answer's box.
  document.addEventListener("change", (e) => {
    if (!e.target.matches || !e.target.matches("form.answer-form select[name=canned]") || !e.target.value) return;
    e.target.form.querySelector("textarea[name=answer]").value = e.target.value;
  });
}

// The team's dashboard: its standing and last jobs are read again from
// the page's own address each time the board changes (a job ended
// somewhere), or, during a freeze, the team's own line does; the first
// board, which the page already shows, is skipped.
function watchStanding(el) {
  const es = new EventSource(el.dataset.live);
  let first = true;
  const reread = async () => {
    const res = await fetch(location.pathname, { credentials: "same-origin" });
    if (!res.ok) return;
    const doc = new DOMParser().parseFromString(await res.text(), "text/html");
    for (const id of ["standing", "recent-jobs"]) {
      const fresh = doc.getElementById(id), cur = document.getElementById(id);
      if (fresh && cur) cur.replaceWith(document.importNode(fresh, true));
    }
    document.body.dataset.standingUpdates = String((+document.body.dataset.standingUpdates || 0) + 1);
  };
  es.addEventListener("board", () => { if (first) first = false; else reread(); });
  es.addEventListener("own", () => reread());
}

// The countdown in every page's header: the time left to the contest's
// next event (from the server's clock: data-in, when the page was served),
// and that event's time in the viewer's own time zone. The dashboard,
// left alone, loads again when the event comes: its buttons follow it.
function countdown(el) {
  const end = Date.now() + (+el.dataset.in);
  const local = el.querySelector("[data-local]");
  if (local) {
    const at = new Date(+el.dataset.at);
    local.textContent = " (" + at.toLocaleString([], { weekday: "short", hour: "2-digit", minute: "2-digit", hourCycle: "h23" }) + " your time)";
  }
  const out = el.querySelector("[data-countdown]");
  const pad = (n) => String(n).padStart(2, "0");
  const timer = setInterval(() => {
    const s = Math.max(0, Math.round((end - Date.now()) / 1000));
    const hms = pad(Math.floor(s / 3600) % 24) + ":" + pad(Math.floor(s / 60) % 60) + ":" + pad(s % 60);
    out.textContent = s >= 86400 ? Math.floor(s / 86400) + "d " + hms : hms;
    if (s > 0) return;
    clearInterval(timer);
    const busy = document.activeElement && document.activeElement.matches("input, textarea, select");
    if (location.pathname === "/" && !busy) setTimeout(() => location.reload(), 1500);
  }, 1000);
}

document.addEventListener("DOMContentLoaded", () => {
  const clock = document.getElementById("countdown");
  if (clock) countdown(clock);
  const chartEl = document.getElementById("chart");
  if (chartEl) {
    drawChart(chartEl);
    // The chart takes its box's width: a window turned or resized draws
    // it again at the new width.
    let width = chartEl.clientWidth;
    window.addEventListener("resize", () => {
      if (chart && chartEl.clientWidth !== width) {
        width = chartEl.clientWidth;
        chart.setSize({ width: Math.max(280, width), height: 260 });
      }
    });
  }
  const showAnswers = answers();
  if (!window.EventSource) return;
  const job = document.querySelector("dl.progress[data-live]");
  if (job) watchJob(job);
  const standing = document.querySelector("#standing[data-live]");
  if (standing) watchStanding(standing);
  const board = document.querySelector("table.board[data-live]");
  if (board) watchBoard(board, () => { if (chartEl) drawChart(chartEl); });
  watchNotices(showAnswers);
});
