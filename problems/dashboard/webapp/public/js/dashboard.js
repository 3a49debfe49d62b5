// Polls /data every DASHBOARD_REFRESH_MS (set by /user.js) and shows each
// service's answer.
(function () {
  "use strict";
  var list = document.getElementById("services");
  if (!list || typeof DASHBOARD_REFRESH_MS === "undefined") {
    return;
  }
  function show(items) {
    list.textContent = "";
    items.forEach(function (item) {
      var li = document.createElement("li");
      var h = document.createElement("h2");
      h.textContent = item.service;
      var pre = document.createElement("pre");
      pre.textContent = JSON.stringify(item.data, null, 2);
      li.appendChild(h);
      li.appendChild(pre);
      list.appendChild(li);
    });
  }
  function refresh() {
    fetch("/data", { credentials: "same-origin" })
      .then(function (res) { return res.ok ? res.json() : Promise.reject(res.status); })
      .then(show)
      .catch(function (err) { list.textContent = "could not load the services (" + err + ")"; })
      .finally(function () { setTimeout(refresh, DASHBOARD_REFRESH_MS); });
  }
  refresh();
})();
