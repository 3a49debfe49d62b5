// leagues: a small single-page app over the JSON API, to use the service by hand. No framework, no build step.
(function () {
  "use strict";

  var $ = function (id) { return document.getElementById(id); };
  var state = { me: null, tenantPages: [], rankCompetition: null, rankAfter: 0 };

  function show(message) { $("message").textContent = message || ""; }

  // api sends a request and returns the decoded answer; an error answer rejects with its status and text.
  function api(method, path, body, isForm) {
    var init = { method: method, credentials: "same-origin", headers: {} };
    if (body !== undefined) {
      if (isForm) {
        init.body = body;
      } else {
        init.body = JSON.stringify(body);
        init.headers["Content-Type"] = "application/json";
      }
    }
    return fetch(path, init).then(function (res) {
      return res.json().then(function (data) {
        if (!res.ok) {
          var err = new Error(res.status + ": " + (data.error || res.statusText));
          err.status = res.status;
          throw err;
        }
        return data;
      });
    });
  }

  function cell(row, text, className) {
    var td = document.createElement("td");
    td.textContent = text;
    if (className) { td.className = className; }
    row.appendChild(td);
    return td;
  }

  function button(label, onClick) {
    var b = document.createElement("button");
    b.textContent = label;
    b.addEventListener("click", onClick);
    return b;
  }

  function fill(tbody, items, addRow) {
    tbody.textContent = "";
    items.forEach(function (item) {
      var tr = document.createElement("tr");
      addRow(tr, item);
      tbody.appendChild(tr);
    });
  }

  // Admin.

  function loadTenants(before) {
    var path = "/api/admin/billing" + (before ? "?before=" + before : "");
    return api("GET", path).then(function (data) {
      fill($("tenants"), data.tenants, function (tr, t) {
        cell(tr, t.id, "num"); cell(tr, t.name); cell(tr, t.display_name); cell(tr, t.billing, "num");
      });
      var last = data.tenants[data.tenants.length - 1];
      $("tenants-next").disabled = !last;
      $("tenants-next").dataset.before = last ? last.id : "";
    });
  }

  // Organizer.

  function loadOrganizer() {
    return Promise.all([
      api("GET", "/api/organizer/competitions").then(function (data) {
        fill($("org-competitions"), data.competitions, function (tr, c) {
          cell(tr, c.id, "num"); cell(tr, c.title); cell(tr, c.is_finished ? "finished" : "running");
          var td = cell(tr, "");
          var actions = cell(tr, "");
          if (!c.is_finished) {
            var file = document.createElement("input");
            file.type = "file";
            file.accept = ".csv,text/csv";
            td.appendChild(file);
            td.appendChild(button("upload", function () {
              if (!file.files[0]) { show("choose a CSV file first"); return; }
              var form = new FormData();
              form.append("scores", file.files[0]);
              api("POST", "/api/organizer/competitions/" + c.id + "/scores", form, true).then(function (r) {
                show(r.rows + " rows uploaded");
                return loadOrganizer();
              }, fail);
            }));
            actions.appendChild(button("finish", function () {
              api("POST", "/api/organizer/competitions/" + c.id + "/finish").then(loadOrganizer, fail);
            }));
          }
        });
      }),
      api("GET", "/api/organizer/players").then(function (data) {
        fill($("players"), data.players, function (tr, p) {
          cell(tr, p.id, "num"); cell(tr, p.display_name);
          cell(tr, p.is_disqualified ? "disqualified" : "", p.is_disqualified ? "disqualified" : "");
          var actions = cell(tr, "");
          if (!p.is_disqualified) {
            actions.appendChild(button("disqualify", function () {
              api("POST", "/api/organizer/players/" + p.id + "/disqualify").then(loadOrganizer, fail);
            }));
          }
        });
      }),
      api("GET", "/api/organizer/billing").then(function (data) {
        $("billing-total").textContent = data.billing.total;
        fill($("billing"), data.billing.competitions, function (tr, b) {
          cell(tr, b.title); cell(tr, b.is_finished ? "yes" : "no");
          cell(tr, b.scored, "num"); cell(tr, b.viewed, "num"); cell(tr, b.billing, "num");
        });
      })
    ]);
  }

  // Player.

  function loadCompetitions() {
    return api("GET", "/api/player/competitions").then(function (data) {
      var ul = $("competitions");
      ul.textContent = "";
      data.competitions.forEach(function (c) {
        var li = document.createElement("li");
        var a = document.createElement("a");
        a.textContent = c.title + (c.is_finished ? " (finished)" : "");
        a.addEventListener("click", function () { state.rankCompetition = c.id; loadRanking(0); });
        li.appendChild(a);
        ul.appendChild(li);
      });
    });
  }

  function loadRanking(after) {
    state.rankAfter = after;
    var path = "/api/player/competitions/" + state.rankCompetition + "/ranking?rank_after=" + after;
    return api("GET", path).then(function (data) {
      $("ranking").hidden = false;
      $("ranking-title").textContent = data.competition.title;
      fill($("ranks"), data.ranks, function (tr, r) {
        cell(tr, r.rank, "num");
        var a = document.createElement("a");
        a.textContent = r.display_name;
        a.addEventListener("click", function () { loadProfile(r.player_id); });
        cell(tr, "").appendChild(a);
        cell(tr, r.score, "num");
      });
      $("ranks-prev").disabled = after === 0;
      $("ranks-next").disabled = data.ranks.length < 100;
      if (data.ranks.length === 0) { show("no scores yet"); }
    }, fail);
  }

  function loadProfile(id) {
    return api("GET", "/api/player/players/" + id).then(function (data) {
      $("profile").hidden = false;
      $("profile-name").textContent = data.player.display_name + (data.player.is_disqualified ? " (disqualified)" : "");
      fill($("profile-scores"), data.scores, function (tr, s) { cell(tr, s.title); cell(tr, s.score, "num"); });
    }, fail);
  }

  function fail(err) {
    show(err.message);
    if (err.status === 401) { start(); }
  }

  function start() {
    ["signin", "admin", "organizer", "player"].forEach(function (id) { $(id).hidden = true; });
    api("GET", "/api/me").then(function (me) {
      state.me = me;
      $("signout").hidden = false;
      $("whoami").textContent = me.role + " " + (me.player ? me.player.display_name : me.subject) +
        (me.tenant ? " at " + me.tenant.display_name : "");
      $("title").textContent = me.tenant ? me.tenant.display_name : "leagues admin";
      $(me.role).hidden = false;
      if (me.role === "admin") { return loadTenants(); }
      if (me.role === "organizer") { return loadOrganizer(); }
      return loadCompetitions();
    }).catch(function (err) {
      $("signout").hidden = true;
      $("whoami").textContent = "";
      $("signin").hidden = false;
      if (err.status !== 401) { show(err.message); }
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    $("token-form").addEventListener("submit", function (e) {
      e.preventDefault();
      document.cookie = "leagues_token=" + $("token").value.trim() + "; path=/; SameSite=Lax";
      show("");
      start();
    });
    $("signout").addEventListener("click", function () {
      document.cookie = "leagues_token=; path=/; max-age=0";
      start();
    });
    $("tenants-first").addEventListener("click", function () { loadTenants().catch(fail); });
    $("tenants-next").addEventListener("click", function () { loadTenants($("tenants-next").dataset.before).catch(fail); });
    $("tenant-form").addEventListener("submit", function (e) {
      e.preventDefault();
      api("POST", "/api/admin/tenants", { name: $("tenant-name").value, display_name: $("tenant-display").value })
        .then(function (r) { show("added tenant " + r.tenant.id); return loadTenants(); }, fail);
    });
    $("competition-form").addEventListener("submit", function (e) {
      e.preventDefault();
      api("POST", "/api/organizer/competitions", { title: $("competition-title").value }).then(loadOrganizer, fail);
    });
    $("players-form").addEventListener("submit", function (e) {
      e.preventDefault();
      var names = $("player-names").value.split("\n").map(function (s) { return s.trim(); }).filter(Boolean);
      api("POST", "/api/organizer/players", { display_names: names }).then(loadOrganizer, fail);
    });
    $("ranks-prev").addEventListener("click", function () { loadRanking(Math.max(0, state.rankAfter - 100)); });
    $("ranks-next").addEventListener("click", function () { loadRanking(state.rankAfter + 100); });
    start();
  });
})();
