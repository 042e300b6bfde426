// The setup page's two waits, both read through GET /api/setup:
// after a write, the daemon restarts with the new config: poll until the
// daemon that answers started after the one that wrote it, then say so;
// while a model downloads, show its progress, and reload the page once it
// ended (the model is then offered as downloaded). Without JavaScript the
// page says to reload it.
(function () {
  "use strict";
  function get(then, fail) {
    // A request caught in the restart may never be answered: each gets 3 s.
    var ctl = new AbortController(), timer = setTimeout(function () { ctl.abort(); }, 3000);
    fetch("/api/setup", { credentials: "same-origin", cache: "no-store", signal: ctl.signal }).then(function (r) {
      return r.ok ? r.json() : null;
    }).then(function (j) { clearTimeout(timer); then(j); }, function () { clearTimeout(timer); fail(); });
  }

  var el = document.getElementById("restart");
  if (el) {
    var before = el.dataset.started, deadline = Date.now() + 120000;
    var again = function () {
      if (Date.now() > deadline) {
        el.textContent = "The daemon has not come back within two minutes: look at the board's console.";
        return;
      }
      setTimeout(poll, 500);
    };
    var poll = function () {
      get(function (j) {
        if (j && j.started && j.started !== before) {
          el.textContent = "The daemon is back, running the new config.";
          el.dataset.back = "true";
          return;
        }
        again();
      }, again);
    };
    poll();
  }

  var pull = document.getElementById("pull");
  if (pull && pull.dataset.finished !== "true") {
    var bar = pull.querySelector("progress"), text = pull.querySelector(".pulled");
    var mib = function (n) { return n < 0 ? "?" : (n / 1048576).toFixed(1) + " MiB"; };
    var tick = function () {
      get(function (j) {
        var p = j && j.pull;
        if (!p) { setTimeout(tick, 1000); return; }
        if (p.finished || p.error) { location.reload(); return; }
        if (p.total > 0) { bar.max = p.total; }
        bar.value = p.done;
        text.textContent = mib(p.done) + " of " + mib(p.total);
        setTimeout(tick, 1000);
      }, function () { setTimeout(tick, 2000); });
    };
    tick();
  }
})();
