// tunecon portal, the admin pages: a form with data-confirm asks first.
"use strict";

document.addEventListener("submit", (e) => {
  const ask = e.target.dataset && e.target.dataset.confirm;
  if (ask && !window.confirm(ask)) {
    e.preventDefault();
  }
});

// The settings form of a contest that has started (data-problem, the
// problem now) asks before it changes the problem, and says it was asked.
document.addEventListener("submit", (e) => {
  const form = e.target;
  const was = form.dataset && form.dataset.problem;
  if (!was || e.defaultPrevented || !form.problem || form.problem.value === was) {
    return;
  }
  if (window.confirm("The contest has started. Change the problem from " + was + " to " + form.problem.value +
      "? Every score so far is one of the old problem.")) {
    form.problem_change.value = "yes";
  } else {
    e.preventDefault();
  }
});

// The queue's summary (data-live-queue) reads the queue again every few
// seconds.
document.addEventListener("DOMContentLoaded", () => {
  const box = document.querySelector("[data-live-queue]");
  if (!box) {
    return;
  }
  const set = (name, text) => {
    const el = box.querySelector(`[data-queue="${name}"]`);
    if (el) {
      el.textContent = text;
    }
  };
  setInterval(async () => {
    try {
      const res = await fetch("/admin/queue.json", { cache: "no-store" });
      if (!res.ok) {
        return;
      }
      const q = await res.json();
      set("queued", q.queued);
      set("running", q.running);
      set("oldest_wait", q.oldest_wait);
      set("by_worker", (q.by_worker || []).map((w, i) => (i ? ", " : ": ") + w.Worker + " " + w.Jobs).join(""));
    } catch (e) {
      // the next tick tries again
    }
  }, 5000);
});
