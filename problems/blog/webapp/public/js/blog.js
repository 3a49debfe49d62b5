// blog.js: small conveniences for the tunecon blog. Every page works without it.
//  - times ("YYYY-MM-DD HH:MM:SS", UTC) get a tooltip with the local time and how long ago it was;
//  - the article and comment forms get placeholders, a character counter and a check before sending.
(function () {
  "use strict";

  // The limits the server enforces, in characters.
  var forms = {
    "post-form": {
      title: { max: 128, min: 1, placeholder: "Title" },
      body: { max: 4096, min: 1, placeholder: "Write your article here" }
    },
    "comment-form": {
      name: { max: 64, min: 0, placeholder: "Name (optional)" },
      body: { max: 1024, min: 1, placeholder: "Your comment" }
    }
  };

  // length counts characters as the server does (code points, not UTF-16 units).
  function length(s) {
    return Array.from(s).length;
  }

  function parseUTC(text) {
    var m = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/.exec(text.trim());
    if (!m) {
      return null;
    }
    return new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]));
  }

  function ago(date, now) {
    var seconds = Math.round((now - date) / 1000);
    var units = [
      ["year", 365 * 24 * 3600],
      ["month", 30 * 24 * 3600],
      ["day", 24 * 3600],
      ["hour", 3600],
      ["minute", 60]
    ];
    if (seconds < 0) {
      return "in the future";
    }
    if (seconds < 60) {
      return "just now";
    }
    for (var i = 0; i < units.length; i++) {
      var n = Math.floor(seconds / units[i][1]);
      if (n >= 1) {
        return n + " " + units[i][0] + (n > 1 ? "s" : "") + " ago";
      }
    }
    return "just now";
  }

  function decorateTimes() {
    var now = Date.now();
    var nodes = document.querySelectorAll(".article-created, .comment-created");
    for (var i = 0; i < nodes.length; i++) {
      var date = parseUTC(nodes[i].textContent);
      if (date) {
        nodes[i].title = date.toLocaleString() + " (" + ago(date, now) + ")";
      }
    }
  }

  function addCounter(field, rule) {
    var counter = document.createElement("span");
    counter.className = "char-count";
    field.insertAdjacentElement("afterend", counter);
    function update() {
      var n = length(field.value);
      counter.textContent = n + " / " + rule.max;
      counter.classList.toggle("over", n > rule.max);
    }
    field.addEventListener("input", update);
    update();
  }

  function problems(form, rules) {
    var found = [];
    Object.keys(rules).forEach(function (name) {
      var n = length(form.elements[name].value);
      var rule = rules[name];
      if (n < rule.min) {
        found.push(rule.placeholder + " is empty.");
      } else if (n > rule.max) {
        found.push(rule.placeholder + " is longer than " + rule.max + " characters.");
      }
    });
    if (form.id === "post-form" && /[\r\n]/.test(form.elements.title.value)) {
      found.push("The title must be one line.");
    }
    return found;
  }

  function enhanceForm(form, rules) {
    var message = document.createElement("p");
    message.className = "form-error";
    message.hidden = true;
    form.insertBefore(message, form.firstChild);
    Object.keys(rules).forEach(function (name) {
      var field = form.elements[name];
      if (field) {
        field.placeholder = rules[name].placeholder;
        addCounter(field, rules[name]);
      }
    });
    form.addEventListener("submit", function (event) {
      var found = problems(form, rules);
      if (found.length > 0) {
        event.preventDefault();
        message.textContent = found.join(" ");
        message.hidden = false;
        return;
      }
      var button = form.querySelector("button[type=submit]");
      if (button) {
        button.disabled = true; // one click, one post
      }
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    decorateTimes();
    Object.keys(forms).forEach(function (id) {
      var form = document.getElementById(id);
      if (form) {
        enhanceForm(form, forms[id]);
      }
    });
  });
})();
