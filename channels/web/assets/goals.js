// clawedge dashboard, the goals page: live without a reload. The event
// stream /api/goals/events says, after every change, each goal's id, state
// and last change; the goals whose last change differs from what the page
// shows are taken from the page fetched again (the server's one renderer,
// every value escaped there) and swapped in; the others are left alone, so
// an answer being typed into one is not lost. Nothing here builds markup
// from strings.
"use strict";
(function () {
  var list = document.getElementById("goals");
  if (!list || !window.EventSource || !window.fetch || !window.DOMParser) { return; }
  var status = document.getElementById("status");
  var busy = false, again = false;

  function shown() {
    var m = {};
    list.querySelectorAll("section[data-goal]").forEach(function (s) { m[s.dataset.goal] = s; });
    return m;
  }

  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch("/goals", { credentials: "same-origin" }).then(function (r) {
      if (!r.ok) { throw new Error("the goals page answered " + r.status); }
      return r.text();
    }).then(function (html) {
      var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("goals");
      if (!fresh) { return; }
      var old = shown(), keep = [];
      fresh.childNodes.forEach(function (n) {
        var o = n.dataset && n.dataset.goal && old[n.dataset.goal];
        if (o && o.dataset.updated === n.dataset.updated) { keep.push(o); return; }
        if (o && o.dataset.state !== n.dataset.state && status) {
          status.textContent = "goal " + n.dataset.goal + " is " + n.dataset.state;
        }
        keep.push(document.importNode(n, true));
      });
      list.replaceChildren.apply(list, keep);
    }).catch(function (e) { if (status) { status.textContent = e.message; } })
      .then(function () {
        busy = false;
        if (again) { again = false; refresh(); }
      });
  }

  var es = new EventSource("/api/goals/events");
  es.addEventListener("goals", function (ev) {
    var marks = JSON.parse(ev.data), old = shown(), stale = marks.length !== Object.keys(old).length;
    marks.forEach(function (m) {
      var s = old[m.id];
      if (!s || s.dataset.updated !== m.updated) { stale = true; }
    });
    if (stale) { refresh(); }
  });
})();
