// The script of opscope's HTML reports, inlined into each page (no network
// request): sortable tables and the trace timeline. Every string shown comes
// from the page's JSON blocks and is set as text, never as HTML.
"use strict";
(function () {
  // ---- Sortable tables: click a header to sort by it, again to reverse. ----
  function cellKey(cell) {
    const v = cell.getAttribute("data-v");
    if (v !== null) return v === "" ? null : Number(v);
    const text = cell.textContent.trim();
    if (text === "" || text === "n/a") return null;
    const number = Number(text.replace(/,/g, ""));
    return Number.isFinite(number) ? number : text.toLowerCase();
  }
  function sortTable(table, column, th) {
    const body = table.tBodies[0];
    const rows = Array.from(body.rows);
    const descending = th.getAttribute("aria-sort") !== "descending";
    const keyed = rows.map((row, i) => ({row, i, key: row.cells[column] ? cellKey(row.cells[column]) : null}));
    keyed.sort((a, b) => {
      if (a.key === null || b.key === null) {  // n/a last either way
        return a.key === b.key ? a.i - b.i : a.key === null ? 1 : -1;
      }
      let order = 0;
      if (typeof a.key === "number" && typeof b.key === "number") order = a.key - b.key;
      else order = String(a.key).localeCompare(String(b.key));
      return (descending ? -order : order) || a.i - b.i;
    });
    for (const header of table.tHead.rows[0].cells) header.removeAttribute("aria-sort");
    th.setAttribute("aria-sort", descending ? "descending" : "ascending");
    for (const k of keyed) body.appendChild(k.row);
  }
  function makeSortable(table) {
    if (!table.tHead || !table.tBodies.length) return;
    Array.from(table.tHead.rows[0].cells).forEach((th, column) => {
      th.tabIndex = 0;
      th.title = "sort by this column";
      th.addEventListener("click", () => sortTable(table, column, th));
      th.addEventListener("keydown", (e) => { if (e.key === "Enter") sortTable(table, column, th); });
    });
  }

  // ---- Units ----
  function formatNs(ns) {
    const a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toFixed(a >= 1e10 ? 2 : 3) + " s";
    if (a >= 1e6) return (ns / 1e6).toFixed(a >= 1e7 ? 2 : 3) + " ms";
    if (a >= 1e3) return (ns / 1e3).toFixed(a >= 1e4 ? 2 : 3) + " µs";
    return Math.round(ns) + " ns";
  }
  function niceStep(span, count) {
    const raw = span / Math.max(count, 1);
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
    return 10 * p;
  }

  // ---- Timeline ----
  const COLORS = {
    kernel: "#4a7bd0", memcpy: "#3e9b5a", memset: "#8cc084", host_op: "#d08a4a",
    annotation: "#58a8a8", step: "#999999", runtime: "#9b6bc2", sync: "#c24b4b",
    device_annotation: "#7fa3e0", python: "#b5b5b5", derived: "#c9b458", other: "#a0a0a0"
  };
  const STEP_COLORS = {complete: "#c8d6ee", "warm-up": "#eadbc8", partial: "#e6e6e6", empty: "#f2f2f2"};
  const LABEL_W = 190, AXIS_H = 22, ROW_H = 18, MARK_H = 16;

  function Timeline(root) {
    const data = JSON.parse(document.getElementById(root.getAttribute("data-src")).textContent);
    this.root = root;
    this.data = data;
    this.span = Math.max(data.end - data.begin, 1);
    this.view = [0, this.span];
    this.lanes = data.lanes.map((lane) => {
      const busy = new Uint8Array(lane.busy.length / 2);
      for (let i = 0; i < busy.length; i++) busy[i] = parseInt(lane.busy.substr(2 * i, 2), 16);
      return {name: lane.name, device: lane.device, events: lane.events, busy, kept: []};
    });
    const ev = data.kept;
    for (let i = 0; i < ev.lane.length; i++) this.lanes[ev.lane[i]].kept.push(i);
    for (const lane of this.lanes) lane.kept.sort((a, b) => ev.s[a] - ev.s[b]);
    this.canvas = root.querySelector("canvas");
    this.tip = root.querySelector(".tl-tip");
    this.status = root.querySelector(".tl-status");
    this.list = root.querySelector(".tl-list");
    this.height = AXIS_H + 2 * MARK_H + 4 + this.lanes.length * ROW_H;
    this.bind();
    this.resize();
    this.draw();
  }
  Timeline.prototype.plotWidth = function () { return this.width - LABEL_W - 8; };
  Timeline.prototype.xOf = function (t) {
    return LABEL_W + (t - this.view[0]) / (this.view[1] - this.view[0]) * this.plotWidth();
  };
  Timeline.prototype.tOf = function (x) {
    return this.view[0] + (x - LABEL_W) / this.plotWidth() * (this.view[1] - this.view[0]);
  };
  Timeline.prototype.resize = function () {
    this.width = Math.max(this.root.clientWidth, 600);
    const ratio = window.devicePixelRatio || 1;
    this.canvas.width = Math.round(this.width * ratio);
    this.canvas.height = Math.round(this.height * ratio);
    this.canvas.style.width = this.width + "px";
    this.canvas.style.height = this.height + "px";
    this.ctx = this.canvas.getContext("2d");
    this.ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  };
  Timeline.prototype.setView = function (t0, t1) {
    const min = Math.min(1000, this.span);  // 1 µs across the plot at most
    if (t1 - t0 < min) { const c = (t0 + t1) / 2; t0 = c - min / 2; t1 = c + min / 2; }
    if (t1 - t0 > this.span) { t0 = 0; t1 = this.span; }
    if (t0 < 0) { t1 -= t0; t0 = 0; }
    if (t1 > this.span) { t0 -= t1 - this.span; t1 = this.span; }
    this.view = [Math.max(0, t0), t1];
    this.draw();
  };
  Timeline.prototype.zoom = function (factor, atX) {
    const [t0, t1] = this.view;
    const c = atX === undefined ? (t0 + t1) / 2 : this.tOf(atX);
    this.setView(c - (c - t0) * factor, c + (t1 - c) * factor);
  };
  Timeline.prototype.laneTop = function (i) { return AXIS_H + 2 * MARK_H + 4 + i * ROW_H; };
  Timeline.prototype.draw = function () {
    const ctx = this.ctx, data = this.data, ev = data.kept, w = this.plotWidth();
    const [t0, t1] = this.view;
    ctx.clearRect(0, 0, this.width, this.height);
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    // Time axis: ticks at a round step, labels from the trace's first event.
    const step = niceStep(t1 - t0, Math.max(2, Math.floor(w / 110)));
    ctx.fillStyle = "#333";
    ctx.strokeStyle = "#e4e4e4";
    for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
      const x = this.xOf(t);
      ctx.beginPath(); ctx.moveTo(x, AXIS_H - 4); ctx.lineTo(x, this.height); ctx.stroke();
      ctx.fillText(formatNs(t), x + 2, 8);
    }
    // Steps and gaps, with their status and cause.
    const mark = (y, begin, dur, color, label) => {
      if (begin + dur < t0 || begin > t1) return;
      const x0 = Math.max(this.xOf(begin), LABEL_W), x1 = Math.min(this.xOf(begin + dur), LABEL_W + w);
      ctx.fillStyle = color;
      ctx.fillRect(x0, y + 1, Math.max(x1 - x0, 1), MARK_H - 2);
      if (x1 - x0 > 40) {
        ctx.save(); ctx.beginPath(); ctx.rect(x0, y, x1 - x0, MARK_H); ctx.clip();
        ctx.fillStyle = "#222"; ctx.fillText(label, x0 + 3, y + MARK_H / 2); ctx.restore();
      }
    };
    ctx.fillStyle = "#333";
    ctx.fillText("steps", 4, AXIS_H + MARK_H / 2);
    ctx.fillText("idle gaps (cause)", 4, AXIS_H + MARK_H * 1.5);
    for (const s of data.steps) mark(AXIS_H, s[1], s[2], STEP_COLORS[s[3]] || "#ddd", s[0] + " (" + s[3] + ")");
    for (const g of data.gaps) mark(AXIS_H + MARK_H, g[0], g[1], "#f0b070", g[2]);
    // Lanes: the density strip (busy share per slice), then the kept events.
    const bins = data.bins, binW = this.span / bins;
    for (let i = 0; i < this.lanes.length; i++) {
      const lane = this.lanes[i], y = this.laneTop(i);
      ctx.fillStyle = i % 2 ? "#fafafa" : "#ffffff";
      ctx.fillRect(0, y, this.width, ROW_H);
      ctx.fillStyle = lane.device ? "#1f3f7a" : "#333";
      ctx.save(); ctx.beginPath(); ctx.rect(0, y, LABEL_W - 6, ROW_H); ctx.clip();
      ctx.fillText(lane.name, 4, y + ROW_H / 2); ctx.restore();
      ctx.fillStyle = lane.device ? "rgba(74,123,208,0.35)" : "rgba(208,138,74,0.35)";
      for (let px = 0; px < w; px++) {
        const a = t0 + px / w * (t1 - t0), b = t0 + (px + 1) / w * (t1 - t0);
        const b0 = Math.max(0, Math.floor(a / binW)), b1 = Math.min(bins - 1, Math.floor(b / binW));
        let sum = 0;
        for (let k = b0; k <= b1; k++) sum += lane.busy[k];
        const v = sum / (b1 - b0 + 1) / 255;
        if (v > 0) ctx.fillRect(LABEL_W + px, y + ROW_H - 1 - v * (ROW_H - 3), 1, v * (ROW_H - 3));
      }
      let lastPixel = -1, lastColor = "";
      for (const k of lane.kept) {
        const s = ev.s[k], d = ev.d[k];
        if (s > t1) break;
        if (s + d < t0) continue;
        const x0 = Math.max(this.xOf(s), LABEL_W), x1 = Math.min(this.xOf(s + d), LABEL_W + w);
        const color = COLORS[data.classes[ev.c[k]]] || COLORS.other;
        // Events under a pixel wide: one 1-pixel mark per pixel and colour.
        if (x1 - x0 < 1 && Math.floor(x0) === lastPixel && color === lastColor) continue;
        lastPixel = Math.floor(x0);
        if (color !== lastColor) ctx.fillStyle = lastColor = color;
        ctx.fillRect(x0, y + 2, Math.max(x1 - x0, 1), ROW_H - 4);
        if (x1 - x0 > 50) {
          ctx.save(); ctx.beginPath(); ctx.rect(x0, y, x1 - x0 - 2, ROW_H); ctx.clip();
          ctx.fillStyle = "#fff"; ctx.fillText(data.strings[ev.n[k]], x0 + 3, y + ROW_H / 2);
          ctx.restore();
        }
      }
    }
    if (this.selection) {
      const [s0, s1] = this.selection;
      ctx.fillStyle = "rgba(255,200,0,0.25)";
      ctx.fillRect(this.xOf(s0), AXIS_H, this.xOf(s1) - this.xOf(s0), this.height - AXIS_H);
    }
    this.status.textContent = "showing " + formatNs(t0) + " – " + formatNs(t1) + " of " +
        formatNs(this.span) + " (" + (this.span / (t1 - t0)).toFixed(1) + "x)";
    this.root.setAttribute("data-view", t0 + "," + t1);
    if (!this.root.hasAttribute("data-painted-ms")) {
      this.root.setAttribute("data-painted-ms", performance.now().toFixed(1));
    }
  };
  // What is under the pointer: an event, a step, a gap or a lane's density.
  Timeline.prototype.hit = function (x, y) {
    const data = this.data, ev = data.kept;
    if (x < LABEL_W || y < AXIS_H) return null;
    const t = this.tOf(x), slop = 3 / this.plotWidth() * (this.view[1] - this.view[0]);
    if (y < AXIS_H + MARK_H) {
      const s = data.steps.find((s) => t >= s[1] - slop && t <= s[1] + s[2] + slop);
      return s && {kind: "step", begin: s[1], dur: s[2], title: s[0], lines: ["status: " + s[3] + (s[4] ? " (" + s[4] + ")" : "")]};
    }
    if (y < AXIS_H + 2 * MARK_H) {
      const g = data.gaps.find((g) => t >= g[0] - slop && t <= g[0] + g[1] + slop);
      return g && {kind: "gap", begin: g[0], dur: g[1], title: "idle: " + g[2], lines: [g[3]]};
    }
    const i = Math.floor((y - this.laneTop(0)) / ROW_H);
    if (i < 0 || i >= this.lanes.length) return null;
    const lane = this.lanes[i];
    let best = -1;
    for (const k of lane.kept) {
      if (ev.s[k] > t + slop) break;
      if (ev.s[k] + ev.d[k] >= t - slop && (best < 0 || ev.d[k] < ev.d[best])) best = k;
    }
    if (best >= 0) {
      return {kind: "event", begin: ev.s[best], dur: ev.d[best], title: data.strings[ev.n[best]],
              lines: [lane.name, data.classes[ev.c[best]], data.strings[ev.a[best]]]};
    }
    const b = Math.min(data.bins - 1, Math.max(0, Math.floor(t / (this.span / data.bins))));
    return {kind: "density", title: lane.name, lines: [Math.round(lane.busy[b] / 2.55) + "% busy in " +
        formatNs(b * this.span / data.bins) + " – " + formatNs((b + 1) * this.span / data.bins) +
        " (events too short to draw one by one)"]};
  };
  Timeline.prototype.showTip = function (h, x, y) {
    if (!h) { this.tip.hidden = true; return; }
    this.tip.textContent = "";
    const title = document.createElement("b");
    title.textContent = h.title;
    this.tip.appendChild(title);
    const lines = h.dur !== undefined ? [formatNs(h.dur) + " at " + formatNs(h.begin)].concat(h.lines) : h.lines;
    for (const line of lines) {
      if (!line) continue;
      const div = document.createElement("div");
      div.textContent = line;
      this.tip.appendChild(div);
    }
    this.tip.hidden = false;
    this.tip.style.left = Math.min(x + 12, this.width - 320) + "px";
    this.tip.style.top = (y + 14) + "px";
  };
  // Lists the kept events of [s0, s1], the longest first.
  Timeline.prototype.select = function (s0, s1) {
    const data = this.data, ev = data.kept;
    this.selection = [s0, s1];
    const rows = [];
    for (let k = 0; k < ev.s.length; k++) {
      if (ev.s[k] <= s1 && ev.s[k] + ev.d[k] >= s0) rows.push(k);
    }
    rows.sort((a, b) => ev.d[b] - ev.d[a]);
    const binW = this.span / data.bins;
    let starting = 0;
    for (let b = Math.max(0, Math.floor(s0 / binW)); b <= Math.min(data.bins - 1, Math.floor(s1 / binW)); b++) {
      starting += data.starts[b];
    }
    this.list.textContent = "";
    const note = document.createElement("p");
    note.textContent = "Window " + formatNs(s0) + " – " + formatNs(s1) + " (" + formatNs(s1 - s0) +
        "): about " + starting.toLocaleString("en") + " events start in its slices; the " +
        Math.min(rows.length, 200) + " longest of the " + rows.length +
        " kept events it overlaps are listed (shorter events are in the density strip only).";
    this.list.appendChild(note);
    const table = document.createElement("table");
    table.className = "sortable";
    const head = table.createTHead().insertRow();
    for (const h of ["Start", "Duration (µs)", "Lane", "Class", "Name", "Args"]) {
      const th = document.createElement("th");
      th.textContent = h;
      head.appendChild(th);
    }
    const body = table.createTBody();
    for (const k of rows.slice(0, 200)) {
      const row = body.insertRow();
      const cells = [[formatNs(ev.s[k]), ev.s[k]], [(ev.d[k] / 1e3).toFixed(3), ev.d[k]],
                     [this.lanes[ev.lane[k]].name], [data.classes[ev.c[k]]], [data.strings[ev.n[k]]],
                     [data.strings[ev.a[k]]]];
      for (const [text, value] of cells) {
        const cell = row.insertCell();
        cell.textContent = text;
        if (value !== undefined) { cell.className = "n"; cell.setAttribute("data-v", value); }
      }
    }
    this.list.appendChild(table);
    makeSortable(table);
    this.draw();
  };
  Timeline.prototype.bind = function () {
    const canvas = this.canvas, root = this.root;
    root.querySelector(".tl-in").addEventListener("click", () => this.zoom(0.5));
    root.querySelector(".tl-out").addEventListener("click", () => this.zoom(2));
    root.querySelector(".tl-reset").addEventListener("click", () => this.setView(0, this.span));
    const at = (e) => { const r = canvas.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; };
    canvas.addEventListener("wheel", (e) => {
      e.preventDefault();
      const [x] = at(e);
      this.zoom(e.deltaY > 0 ? 1.25 : 0.8, Math.max(x, LABEL_W));
    }, {passive: false});
    let drag = null;
    canvas.addEventListener("mousedown", (e) => {
      const [x] = at(e);
      drag = {x, view: this.view.slice(), moved: false, select: e.shiftKey};
    });
    window.addEventListener("mouseup", (e) => {
      if (!drag) return;
      const [x, y] = at(e);
      if (drag.select && drag.moved) {
        const a = this.tOf(Math.min(drag.x, x)), b = this.tOf(Math.max(drag.x, x));
        this.select(Math.max(0, a), Math.min(this.span, b));
      } else if (!drag.moved) {
        const h = this.hit(x, y);
        if (h && h.dur !== undefined) this.select(h.begin, h.begin + h.dur);
      }
      drag = null;
    });
    canvas.addEventListener("mousemove", (e) => {
      const [x, y] = at(e);
      if (drag && Math.abs(x - drag.x) > 3) drag.moved = true;
      if (drag && drag.moved && !drag.select) {
        const dt = (x - drag.x) / this.plotWidth() * (drag.view[1] - drag.view[0]);
        this.setView(drag.view[0] - dt, drag.view[1] - dt);
        return;
      }
      this.showTip(this.hit(x, y), x, y);
    });
    canvas.addEventListener("mouseleave", () => { this.tip.hidden = true; });
    canvas.addEventListener("keydown", (e) => {
      const pan = (this.view[1] - this.view[0]) * 0.2;
      if (e.key === "w" || e.key === "+") this.zoom(0.8);
      else if (e.key === "s" || e.key === "-") this.zoom(1.25);
      else if (e.key === "a") this.setView(this.view[0] - pan, this.view[1] - pan);
      else if (e.key === "d") this.setView(this.view[0] + pan, this.view[1] + pan);
    });
    window.addEventListener("resize", () => { this.resize(); this.draw(); });
  };

  function start() {
    document.querySelectorAll("table.sortable").forEach(makeSortable);
    window.opscopeTimelines = [];
    document.querySelectorAll("div.timeline").forEach((root) => {
      window.opscopeTimelines.push(new Timeline(root));
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
