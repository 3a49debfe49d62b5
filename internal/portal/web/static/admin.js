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
