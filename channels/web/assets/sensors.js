// The sensors page's charts (channels/web/page_sensors.go): each drawn with
// uPlot from the table the server wrote below it, so that the page shows the
// same values with or without script; new readings come over the event
// stream. No colour carries meaning alone: the series have names in the
// legend, the mean is a solid line, the band's edges are dashed.
(function () {
  "use strict";
  if (document.body.dataset.page !== "sensors" || !window.uPlot) { return; }
  var charts = [];

  function width(el) { return Math.max(240, Math.min(el.parentNode.clientWidth || 320, 900)); }

  function rows(section, sel) { return Array.prototype.slice.call(section.querySelectorAll(sel)); }

  function sensorChart(section) {
    var unit = section.dataset.unit, span = +section.dataset.span;
    var t = [], lo = [], mean = [], hi = [];
    rows(section, "table.points tbody tr[data-t]").forEach(function (tr) {
      t.push(+tr.dataset.t); lo.push(+tr.dataset.min); mean.push(+tr.dataset.mean); hi.push(+tr.dataset.max);
    });
    var box = section.querySelector(".chart");
    box.hidden = false;
    var opts = {
      width: width(box), height: 220,
      series: [
        {},
        { label: "min", stroke: "#2a7ab0", width: 1, dash: [4, 4], points: { show: false } },
        { label: "mean", stroke: "#2a7ab0", width: 2.5 },
        { label: "max", stroke: "#2a7ab0", width: 1, dash: [4, 4], points: { show: false } }
      ],
      bands: [{ series: [3, 1], fill: "rgba(42,122,176,0.18)" }],
      axes: [{ stroke: "currentColor", grid: { stroke: "#8884" } },
        { label: unit, stroke: "currentColor", grid: { stroke: "#8884" }, size: 56 }],
      scales: { x: { time: true } }
    };
    var u = new uPlot(opts, [t, lo, mean, hi], box);
    // A live reading adds a point at most once a point's width (a minute
    // for an hour, an hour for a week); within it, the newest replaces it.
    charts.push({ u: u, box: box, series: section.dataset.series, span: span, step: span / Math.max(t.length, 1), live: false });
  }

  function pinChart(section) {
    var from = +section.dataset.from, to = +section.dataset.to, start = +section.dataset.start;
    var t = [], v = [];
    if (start >= 0) { t.push(from); v.push(start); }
    rows(section, "table.steps tbody tr[data-t]").forEach(function (tr) { t.push(+tr.dataset.t); v.push(+tr.dataset.level); });
    if (t.length) { t.push(to); v.push(v[v.length - 1]); }
    var box = section.querySelector(".chart");
    box.hidden = false;
    var u = new uPlot({
      width: width(box), height: 120,
      series: [{}, { label: "level", stroke: "#1a8a3a", width: 2, fill: "rgba(26,138,58,0.15)",
        paths: uPlot.paths.stepped({ align: 1 }), value: function (_, x) { return x == null ? "–" : x ? "1 high" : "0 low"; } }],
      axes: [{ stroke: "currentColor", grid: { stroke: "#8884" } },
        { label: "level", stroke: "currentColor", splits: function () { return [0, 1]; },
          values: function (_, s) { return s.map(function (x) { return x ? "high" : "low"; }); }, size: 56 }],
      scales: { x: { time: true, range: [from, to] }, y: { range: [-0.1, 1.1] } }
    }, [t, v], box);
    charts.push({ u: u, box: box, pin: section.dataset.pinLevels });
  }

  document.querySelectorAll("section.sensor[data-series]").forEach(sensorChart);
  document.querySelectorAll("section.pin[data-pin-levels]").forEach(pinChart);
  window.addEventListener("resize", function () {
    charts.forEach(function (c) { c.u.setSize({ width: width(c.box), height: c.u.height }); });
  });
  // For tests and tools: the charts and their data.
  window.clawedgeCharts = charts;

  // A new reading: shown large, and added to its chart as a point of its
  // own, the oldest points leaving the range.
  function reading(q) {
    var series = q.sensor + "/" + q.quantity;
    document.querySelectorAll("[data-live]").forEach(function (el) {
      if (el.dataset.live !== series) { return; }
      el.textContent = q.error ? "no reading" : String(q.value);
      var at = el.parentNode.querySelector(".at");
      if (at && q.at) { at.textContent = q.error ? q.error : "at " + new Date(q.at).toLocaleTimeString(); }
    });
    if (q.error || !q.at) { return; }
    var ts = Date.parse(q.at) / 1000;
    charts.forEach(function (c) {
      if (c.series !== series) { return; }
      var d = c.u.data, n = d[0].length;
      if (n && d[0][n - 1] >= ts) { return; }
      // The last point is live and the one before it less than a step
      // ago: the new reading replaces it.
      var keep = c.live && n > 1 && ts - d[0][n - 2] < c.step ? n - 1 : n;
      var cut = 0;
      while (cut < keep && d[0][cut] < ts - c.span) { cut++; }
      c.u.setData(d.map(function (col, i) { return col.slice(cut, keep).concat([i === 0 ? ts : q.value]); }));
      c.live = true;
    });
  }

  // A pin's level now: the step chart's last point is "now" at the last
  // level (a step holds until the next point); a change adds one.
  function levels(pins) {
    var now = Date.now() / 1000;
    pins.forEach(function (p) {
      charts.forEach(function (c) {
        if (c.pin !== p.name || p.level < 0) { return; }
        var t = c.u.data[0].slice(), v = c.u.data[1].slice(), n = t.length;
        if (n) { t[n - 1] = now; }
        if (!n || v[n - 1] !== p.level) { t.push(now); v.push(p.level); }
        c.u.setData([t, v], false);
        c.u.setScale("x", { min: now - 86400, max: now });
      });
    });
  }

  if (window.EventSource) {
    var es = new EventSource("/api/events?sensors=1");
    es.addEventListener("sensors", function (ev) { JSON.parse(ev.data).forEach(reading); });
    es.addEventListener("pins", function (ev) { levels(JSON.parse(ev.data)); });
  }
})();
