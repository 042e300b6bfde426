// The setup page after a write: the daemon restarts with the new config;
// poll /api/setup until the daemon that answers started after the one that
// wrote it, then say so. Reads only; without JavaScript the page links back.
(function () {
  "use strict";
  var el = document.getElementById("restart");
  if (!el) { return; }
  var before = el.dataset.started, deadline = Date.now() + 120000;
  function poll() {
    // A request caught in the restart may never be answered: each gets 3 s.
    var ctl = new AbortController(), timer = setTimeout(function () { ctl.abort(); }, 3000);
    fetch("/api/setup", { credentials: "same-origin", cache: "no-store", signal: ctl.signal }).then(function (r) {
      return r.ok ? r.json() : null;
    }).then(function (j) {
      clearTimeout(timer);
      if (j && j.started && j.started !== before) {
        el.textContent = "The daemon is back, running the new config.";
        el.dataset.back = "true";
        return;
      }
      again();
    }, function () { clearTimeout(timer); again(); });
  }
  function again() {
    if (Date.now() > deadline) {
      el.textContent = "The daemon has not come back within two minutes: look at the board's console.";
      return;
    }
    setTimeout(poll, 500);
  }
  poll();
})();
