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
      ev.preventDefault(); // the plain form's post is for pages without script
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

// The chat: the answer streamed as server-sent events on the POST's own
// reply: pieces of text, the calls that wait for a person (with buttons
// when this browser may answer), the whole reply last. Without fetch
// streams the plain form post answers whole.
(function () {
  var form = document.getElementById("chat");
  if (!form || !window.fetch || !window.TextDecoder || !window.ReadableStream) { return; }
  var csrf = (document.querySelector('meta[name="csrf"]') || {}).content || "";
  var log = document.getElementById("chatlog");
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    e.textContent = text || "";
    return e;
  }
  function line(cls, text) { return log.appendChild(el("li", cls, text)); }

  // events reads a text/event-stream body and calls on(name, data) for each event.
  function events(body, on) {
    var reader = body.getReader(), dec = new TextDecoder(), buf = "";
    function frame(f) {
      var name = "message", data = [];
      f.split("\n").forEach(function (l) {
        if (l.indexOf("event: ") === 0) { name = l.slice(7); }
        else if (l.indexOf("data: ") === 0) { data.push(l.slice(6)); }
      });
      if (data.length) { on(name, JSON.parse(data.join("\n"))); }
    }
    function pump() {
      return reader.read().then(function (r) {
        buf += dec.decode(r.value || new Uint8Array(), { stream: !r.done });
        var at;
        while ((at = buf.indexOf("\n\n")) >= 0) { frame(buf.slice(0, at)); buf = buf.slice(at + 2); }
        return r.done ? null : pump();
      });
    }
    return pump();
  }

  function outcome(card, text) {
    card.querySelectorAll("button").forEach(function (b) { b.remove(); });
    card.querySelector(".outcome").textContent = text;
  }

  function approval(a) {
    var card = line("approval");
    card.dataset.approval = a.id;
    card.appendChild(document.createTextNode("Approval needed: "));
    card.appendChild(el("code", "", a.call));
    var out = card.appendChild(el("p", "outcome", a.may ? "" : "waiting for a person who may answer it (the Approvals page)"));
    if (a.may) {
      [["true", "Approve"], ["false", "Deny"]].forEach(function (x) {
        var b = el("button", "", x[1]);
        b.type = "button";
        b.dataset.answer = x[0];
        card.insertBefore(b, out);
        card.insertBefore(document.createTextNode(" "), out);
      });
    }
  }

  log.addEventListener("click", function (ev) {
    var b = ev.target.closest("button[data-answer]");
    if (!b) { return; }
    var card = b.closest("li"), yes = b.dataset.answer === "true";
    card.querySelectorAll("button").forEach(function (x) { x.disabled = true; });
    fetch("/api/approvals/" + encodeURIComponent(card.dataset.approval), {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify({ approve: yes })
    }).then(function (r) { return r.json().then(function (j) { if (!r.ok) { throw new Error(j.error || r.statusText); } }); })
      .then(function () { card.dataset.outcome = yes ? "approved" : "denied"; outcome(card, yes ? "approved by you" : "denied by you"); },
        function (e) { card.querySelectorAll("button").forEach(function (x) { x.disabled = false; }); card.querySelector(".outcome").textContent = e.message; });
  });

  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    var input = form.elements.text, text = input.value;
    if (!text.trim()) { return; }
    input.value = "";
    line("me", text);
    var first = line("board streaming"), cur = first;
    function finish(text, failed) {
      if (text !== null || failed) {
        var last = cur || line("board");
        if (text !== null) { last.textContent = text; }
        if (failed) { last.classList.add("failed"); }
      }
      first.classList.remove("streaming");
      first.dataset.done = "1";
    }
    fetch("/api/chat", {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept": "text/event-stream", "X-CSRF-Token": csrf },
      body: JSON.stringify({ text: text })
    }).then(function (r) {
      if (!r.ok) { return r.json().then(function (j) { finish(j.error || r.statusText, true); }); }
      return events(r.body, function (name, data) {
        if (name === "text") {
          if (!cur) { cur = line("board"); }
          cur.textContent += data;
        } else if (name === "approval") {
          approval(data);
          // The rest of the answer goes below the request: into the line
          // still empty (moved below it), else a new one.
          if (cur && !cur.textContent) { log.appendChild(cur); } else { cur = null; }
        } else if (name === "settled") {
          var card = log.querySelector('li[data-approval="' + CSS.escape(data.id) + '"]');
          if (card && !card.dataset.outcome) {
            card.dataset.outcome = data.outcome;
            outcome(card, data.outcome === "expired" ? "expired: nobody answered in time, not run" : "answered elsewhere");
          }
        } else if (name === "reply") {
          finish(data.streamed ? null : data.reply, data.failed);
        }
      });
    }).catch(function (e) { finish(e.message, true); });
  });
})();
