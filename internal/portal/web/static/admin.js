// tunecon portal, the admin pages: a form with data-confirm asks first.
"use strict";

document.addEventListener("submit", (e) => {
  const ask = e.target.dataset && e.target.dataset.confirm;
  if (ask && !window.confirm(ask)) {
    e.preventDefault();
  }
});
