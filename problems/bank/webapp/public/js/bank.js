// bank.js: small conveniences for the tunecon bank login. Every page works without it.
//  - the login form gets labels as placeholders, a Caps Lock warning on the password and one submit per click;
//  - the last login time on my page ("YYYY-MM-DD HH:MM:SS", UTC) gets a tooltip with the local time.
(function () {
  "use strict";

  function enhanceLoginForm(form) {
    var login = form.elements.login;
    var password = form.elements.password;
    if (!login || !password) {
      return;
    }
    login.placeholder = "Login (u and seven digits)";
    login.autocomplete = "username";
    login.spellcheck = false;
    password.placeholder = "Password";
    password.autocomplete = "current-password";

    var caps = document.createElement("p");
    caps.className = "caps-warning";
    caps.textContent = "Caps Lock is on.";
    caps.hidden = true;
    password.insertAdjacentElement("afterend", caps);
    function checkCaps(event) {
      if (event.getModifierState) {
        caps.hidden = !event.getModifierState("CapsLock");
      }
    }
    password.addEventListener("keydown", checkCaps);
    password.addEventListener("keyup", checkCaps);
    password.addEventListener("blur", function () {
      caps.hidden = true;
    });

    form.addEventListener("submit", function (event) {
      login.value = login.value.trim();
      if (login.value === "" || password.value === "") {
        event.preventDefault();
        (login.value === "" ? login : password).focus();
        return;
      }
      var button = form.querySelector("button[type=submit]");
      if (button) {
        button.disabled = true; // one click, one attempt: a double click would count twice
      }
    });

    if (!document.getElementById("notice")) {
      login.focus();
    } else {
      password.focus();
    }
  }

  function localTime(node) {
    var m = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/.exec(node.textContent.trim());
    if (m) {
      var date = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]));
      node.title = "Your local time: " + date.toLocaleString();
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    var form = document.getElementById("login-form");
    if (form) {
      enhanceLoginForm(form);
    }
    var at = document.getElementById("last-login-at");
    if (at) {
      localTime(at);
    }
  });
})();
