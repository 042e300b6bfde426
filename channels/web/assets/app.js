// clawedge dashboard: live pins (server-sent events) and the buttons.
// Server strings go into the page only as textContent, never as markup.
"use strict";
(function () {
  var csrf = (document.querySelector('meta[name="csrf"]') || {}).content || "";
  var status = document.getElementById("status");

  function say(text) { if (status) { status.textContent = text; } }

  function post(url, body) {
    return fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(body)
    }).then(function (r) {
      return r.json().then(function (j) {
        if (!r.ok) { throw new Error(j.error || j.text || r.statusText); }
        return j;
      });
    });
  }

  function call(tool, args) {
    say("running " + tool + "…");
    return post("/api/call", { tool: tool, args: args }).then(function (j) { say(j.text); return j; },
      function (e) { say(e.message); });
  }

  function showPins(pins) {
    pins.forEach(function (p) {
      var row = document.querySelector('tr[data-pin="' + CSS.escape(p.name) + '"]');
      if (!row) { return; }
      var cell = row.querySelector(".level");
      cell.dataset.level = String(p.level);
      cell.textContent = p.level < 0 ? "error" : String(p.level);
    });
  }

  document.addEventListener("click", function (ev) {
    var b = ev.target.closest("button");
    if (!b) { return; }
    var row = b.closest("tr");
    if (b.dataset.write !== undefined && row) {
      call("gpio/write", { pin: row.dataset.pin, value: Number(b.dataset.write) });
    } else if (b.dataset.pulse !== undefined && row) {
      call("gpio/pulse", { pin: row.dataset.pin, ms: Number(b.dataset.pulse) });
    } else if (b.dataset.tool && row) {
      call(b.dataset.tool, { name: row.dataset.auto }).then(function () { location.reload(); });
    } else if (b.dataset.approve !== undefined) {
      var li = b.closest("li");
      post("/api/approvals/" + encodeURIComponent(li.dataset.approval), { approve: b.dataset.approve === "true" })
        .then(function () { li.remove(); say("answered"); }, function (e) { say(e.message); });
    }
  });

  if (document.body.dataset.page === "pins" && window.EventSource) {
    var es = new EventSource("/api/events");
    es.addEventListener("pins", function (ev) { showPins(JSON.parse(ev.data)); });
  }
})();

// The chat: each line and its reply appended as text.
(function () {
  var form = document.getElementById("chat");
  if (!form) { return; }
  var csrf = (document.querySelector('meta[name="csrf"]') || {}).content || "";
  var log = document.getElementById("chatlog");
  function line(who, text) {
    var li = document.createElement("li");
    li.className = who;
    li.textContent = text;
    log.appendChild(li);
    return li;
  }
  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    var input = form.elements.text;
    var text = input.value;
    input.value = "";
    line("me", text);
    var wait = line("board", "…");
    fetch("/api/chat", {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify({ text: text })
    }).then(function (r) { return r.json(); })
      .then(function (j) { wait.textContent = j.reply || j.error || ""; },
        function (e) { wait.textContent = e.message; });
  });
})();
