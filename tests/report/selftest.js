// Injected by html_report_test.py into a copy of analysis.html, after the
// page's own script: drives the page as a user would (real DOM events on the
// canvas, buttons and headers) and writes what it saw into
// <body data-selftest="...">, which the test reads from the dumped DOM.
"use strict";
window.addEventListener("load", function () {
  const r = {timelines: [], tables: {}, charts: [], pwned: window.pwned === true};
  const fire = (target, type, x, y, extra) => {
    const rect = target.getBoundingClientRect();
    const init = Object.assign({bubbles: true, cancelable: true, clientX: rect.left + x,
                                clientY: rect.top + y}, extra || {});
    target.dispatchEvent(type === "wheel" ? new WheelEvent(type, init) : new MouseEvent(type, init));
  };
  const span = (tl) => tl.view[1] - tl.view[0];
  try {
    for (const tl of window.opscopeTimelines || []) {
      const t = {lanes: tl.lanes.length, kept: tl.data.kept.s.length,
                 painted_ms: Number(tl.root.getAttribute("data-painted-ms"))};
      // Drawn: pixels in the lanes that are neither white nor the stripe grey.
      const ctx = tl.canvas.getContext("2d");
      const top = tl.laneTop(0) * (window.devicePixelRatio || 1);
      const img = ctx.getImageData(0, top, tl.canvas.width, tl.canvas.height - top).data;
      let coloured = 0;
      for (let i = 0; i < img.length; i += 4) {
        if (img[i + 3] > 0 && !(img[i] > 245 && img[i + 1] > 245 && img[i + 2] > 245)) coloured++;
      }
      t.coloured_pixels = coloured;
      // Hover and click the longest kept event of the first lane that has one.
      const lane = tl.lanes.findIndex((l) => l.kept.length > 0);
      if (lane >= 0) {
        const ev = tl.data.kept;
        // The longest event with nothing shorter drawn over its middle (on a
        // thread, nested calls share the lane: the hover names the innermost).
        const kept = tl.lanes[lane].kept;
        const covers = (o, t) => ev.s[o] <= t && t <= ev.s[o] + ev.d[o];
        const clear = kept.filter((a) => !kept.some((o) => o !== a && ev.d[o] < ev.d[a] &&
                                                         covers(o, ev.s[a] + ev.d[a] / 2)));
        const k = clear.reduce((a, b) => (ev.d[b] > ev.d[a] ? b : a));
        const x = Math.max(tl.xOf(ev.s[k] + ev.d[k] / 2), 191), y = tl.laneTop(lane) + 9;
        fire(tl.canvas, "mousemove", x, y);
        t.tip = tl.tip.hidden ? "" : tl.tip.textContent;
        // What is under the pointer: an event whose box (3 px of slop either
        // side) holds it; several overlap where a lane merges streams (ranks).
        const h = tl.hit(x, y);
        const slop = 3 / tl.plotWidth() * (tl.view[1] - tl.view[0]), at = tl.tOf(x);
        t.hit_covers = !!h && h.kind === "event" && h.begin - slop <= at &&
                       at <= h.begin + h.dur + slop;
        t.expected_name = h ? h.title : "";
        t.chosen_name = tl.data.strings[ev.n[k]];
        fire(tl.canvas, "mousedown", x, y);
        fire(tl.canvas, "mouseup", x, y);
        t.listed_rows = tl.list.querySelectorAll("tbody tr").length;
      }
      // Zoom: the + button halves the window; the wheel zooms out again; a drag pans.
      const whole = span(tl);
      tl.root.querySelector(".tl-in").click();
      t.zoom_in_ratio = span(tl) / whole;
      const before = tl.view[0];
      fire(tl.canvas, "mousedown", 500, tl.laneTop(0) + 9);
      fire(tl.canvas, "mousemove", 400, tl.laneTop(0) + 9);
      fire(tl.canvas, "mouseup", 400, tl.laneTop(0) + 9);
      t.panned = tl.view[0] !== before;
      const zoomed = span(tl);
      fire(tl.canvas, "wheel", 400, tl.laneTop(0) + 9, {deltaY: 100});
      t.wheel_out_ratio = span(tl) / zoomed;
      r.timelines.push(t);
    }
    // Sorting: the first table with 3+ rows and a numeric column.
    for (const table of document.querySelectorAll("table.sortable")) {
      if (table.closest(".tl-list")) continue;  // a report table, not a window's list
      const rows = table.tBodies[0].rows;
      if (rows.length < 3) continue;
      const columns = table.tHead.rows[0].cells.length;
      let column = -1;
      for (let c = 0; c < columns && column < 0; c++) {
        if (Array.from(rows).every((row) => row.cells[c] && row.cells[c].getAttribute("data-v"))) {
          column = c;
        }
      }
      if (column < 0) continue;
      const th = table.tHead.rows[0].cells[column];
      const values = () => Array.from(table.tBodies[0].rows, (row) => Number(row.cells[column].getAttribute("data-v")));
      th.click();
      const down = values();
      th.click();
      const up = values();
      r.tables = {header: th.textContent, rows: down.length,
                  descending: down.every((v, i) => i === 0 || down[i - 1] >= v),
                  ascending: up.every((v, i) => i === 0 || up[i - 1] <= v),
                  aria: th.getAttribute("aria-sort")};
      break;
    }
    for (const svg of document.querySelectorAll("svg.chart.xy")) {
      r.charts.push({ticks: svg.querySelectorAll("text.tick").length,
                     titles: Array.from(svg.querySelectorAll("text.title"), (e) => e.textContent)});
    }
    r.sortable_tables = document.querySelectorAll("table.sortable").length;
  } catch (e) {
    r.error = String(e && e.stack || e);
  }
  r.pwned = r.pwned || window.pwned === true;
  document.body.setAttribute("data-selftest", JSON.stringify(r));
});
