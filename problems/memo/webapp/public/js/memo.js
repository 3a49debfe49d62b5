// memo: asks before leaving a memo half written, and counts what is typed.
(function () {
  "use strict";
  document.addEventListener("DOMContentLoaded", function () {
    var form = document.getElementById("new-memo");
    if (!form) {
      return;
    }
    var area = form.querySelector("textarea");
    var count = document.createElement("span");
    count.className = "memo-count";
    area.parentNode.insertBefore(count, area.nextSibling);
    var dirty = false;
    area.addEventListener("input", function () {
      dirty = area.value.length > 0;
      count.textContent = area.value.length + " / 10000";
    });
    form.addEventListener("submit", function () {
      dirty = false;
    });
    window.addEventListener("beforeunload", function (e) {
      if (dirty) {
        e.preventDefault();
        e.returnValue = "";
      }
    });
  });
})();
