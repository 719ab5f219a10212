/* agree browse: the results page of `agree score` runs. Plain JS, no framework, no build
   step, no network: the data comes from script files beside this one (data/meta.js,
   data/columns.js; data/text/tNNNNN.js on demand), since Chromium refuses fetch() from
   file://. The table is virtual: the filtered rows are an index array, and only the
   rows in view are DOM nodes, so a run of a million rows filters and scrolls at once.
   window.agreeBrowse is the page's small API (the tests and the benchmark drive it). */
(function () {
  "use strict";
  const t0 = performance.now();
  const META = window.AGREE_META, RAW = window.AGREE_COLUMNS;
  const OUTCOME = ["wrong", "right", "undecidable", "not scored"];
  const ROW_H = 24, OVERSCAN = 10;
  const $ = (id) => document.getElementById(id);
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));
  const naive = /[?&]naive=1/.test(location.search);   // the benchmark's baseline: every row in the DOM

  // ---------------------------------------------------------------- columns
  function decode(col) {
    const bin = atob(col.b64), n = bin.length, bytes = new Uint8Array(n);
    for (let i = 0; i < n; i++) bytes[i] = bin.charCodeAt(i);
    const Type = {u1: Uint8Array, u2: Uint16Array, u4: Uint32Array, f4: Float32Array, f8: Float64Array,
                  i1: Int8Array, i2: Int16Array, i4: Int32Array}[col.dtype];
    return new Type(bytes.buffer);
  }
  const C = {};
  for (const name in RAW) C[name] = decode(RAW[name]);
  const N = META.rows, MODELS = META.models, D = META.dicts;
  const O = MODELS.map((_, k) => C["o" + k]), LC = MODELS.map((_, k) => C["lc" + k]),
        LW = MODELS.map((_, k) => C["lw" + k]);
  const groupStart = new Uint32Array(META.groups + 1).fill(0xffffffff);
  for (let i = N - 1; i >= 0; i--) groupStart[C.group[i]] = i;

  // ---------------------------------------------------------------- words, on demand
  const chunks = new Map(), waiting = new Map();
  window.AGREE_CHUNK = function (k, rows) {
    chunks.set(k, rows);
    for (const f of waiting.get(k) || []) f();
    waiting.delete(k);
  };
  function words(i, then) {   // the row's words, now or when its chunk has loaded
    const k = Math.floor(i / META.chunkRows), rows = chunks.get(k);
    if (rows) return rows[i - k * META.chunkRows];
    if (then) {
      if (!waiting.has(k)) {
        waiting.set(k, new Set());
        const s = document.createElement("script");
        s.src = "data/text/t" + String(k).padStart(5, "0") + ".js";
        document.body.appendChild(s);
      }
      waiting.get(k).add(then);   // a Set: one repaint per chunk however many rows wait on it
    }
    return null;
  }

  // ---------------------------------------------------------------- filters
  const state = {filters: {}, sort: null, asc: true, rows: null, selected: -1};
  const FILTERS = [];   // {key, label, options: [[value, text]], test: (i, v) => bool} built below
  function dictFilter(key, label) {
    const values = D[key];
    if (!values || values.length < 2) return;
    const col = C[key], counts = new Uint32Array(values.length);
    for (let i = 0; i < N; i++) counts[col[i]]++;
    const opts = values.map((v, c) => [String(c), (v || "(none)") + " (" + counts[c].toLocaleString() + ")"]);
    opts.sort((a, b) => values[+a[0]].localeCompare(values[+b[0]]));
    FILTERS.push({key, label, options: opts, code: (v) => +v, col});
  }
  function buildFilters() {
    dictFilter("language", "language");
    dictFilter("relation", "relation");
    dictFilter("feature", "feature");
    dictFilter("construction", "construction");
    dictFilter("condition", "original / nonce");
    dictFilter("testset", "test set");
    FILTERS.push({key: "attractors", label: "attractors", options: [["0", "0"], ["1", "1"], ["2", "2"], ["3", "3"],
      ["4", "4+"], ["ge1", "1 or more"]]});
    FILTERS.push({key: "dmin", label: "distance ≥", number: true});
    FILTERS.push({key: "dmax", label: "distance ≤", number: true});
    MODELS.forEach((m, k) => FILTERS.push({key: "m" + k, label: m.name, options: [["1", "right"], ["0", "wrong"],
      ["2", "undecidable"], ["3", "not scored"]]}));
    if (MODELS.length > 1) FILTERS.push({key: "disagree", label: "models", options: [["1", "disagree"], ["0", "agree"]]});
    if (META.humans) FILTERS.push({key: "humans", label: "humans", options: [["judged", "judged"],
      ["right", "majority correct"], ["wrong", "majority wrong"], ["none", "not judged"]]});
    const box = $("filters");
    for (const f of FILTERS) {
      const label = document.createElement("label");
      label.textContent = f.label;
      let input;
      if (f.number) {
        input = document.createElement("input");
        input.type = "number";
        input.min = "0";
      } else {
        input = document.createElement("select");
        input.innerHTML = '<option value="">all</option>' +
          f.options.map(([v, t]) => '<option value="' + esc(v) + '">' + esc(t) + "</option>").join("");
      }
      input.id = "f-" + f.key;
      input.dataset.key = f.key;
      input.addEventListener(f.number ? "input" : "change", () => setFilter(f.key, input.value));
      label.appendChild(input);
      box.appendChild(label);
    }
    const sort = document.createElement("label");
    sort.textContent = "sort by";
    const sel = document.createElement("select");
    sel.id = "f-sort";
    const keys = [["", "file order"], ["attractors", "attractors"], ["distance", "distance"]]
      .concat(MODELS.map((m, k) => ["margin" + k, "margin of " + m.name]));
    if (META.humans) keys.push(["human", "human share"]);
    sel.innerHTML = keys.map(([v, t]) => '<option value="' + v + '">' + esc(t) + "</option>").join("");
    sel.addEventListener("change", () => setSort(sel.value || null, true));
    sort.appendChild(sel);
    box.appendChild(sort);
  }
  function setFilter(key, value) {
    if (value === "" || value === null || value === undefined) delete state.filters[key];
    else state.filters[key] = String(value);
    const input = $("f-" + key);
    if (input && input.value !== (state.filters[key] || "")) input.value = state.filters[key] || "";
    return refresh();
  }
  function filtered() {
    const f = state.filters, out = new Uint32Array(N);
    const dicts = FILTERS.filter((d) => d.col && f[d.key] !== undefined).map((d) => [d.col, +f[d.key]]);
    const models = MODELS.map((_, k) => [O[k], f["m" + k]]).filter(([, v]) => v !== undefined).map(([o, v]) => [o, +v]);
    const att = f.attractors, A = C.attractors, Dist = C.distance, H = C.human;
    const dmin = f.dmin !== undefined ? +f.dmin : -1, dmax = f.dmax !== undefined ? +f.dmax : 1e9;
    const dis = f.disagree !== undefined ? +f.disagree : -1, hum = f.humans;
    let n = 0;
    rows: for (let i = 0; i < N; i++) {
      for (let j = 0; j < dicts.length; j++) if (dicts[j][0][i] !== dicts[j][1]) continue rows;
      for (let j = 0; j < models.length; j++) if (models[j][0][i] !== models[j][1]) continue rows;
      if (att !== undefined) {
        const a = A[i];
        if (att === "ge1" ? a < 1 : att === "4" ? a < 4 : a !== +att) continue;
      }
      const d = Dist[i];
      if (d < dmin || d > dmax) continue;
      if (dis >= 0) {
        let r = 0, w = 0;
        for (let k = 0; k < O.length; k++) { const o = O[k][i]; if (o === 1) r++; else if (o === 0) w++; }
        if ((r > 0 && w > 0 ? 1 : 0) !== dis) continue;
      }
      if (hum !== undefined) {
        const h = H[i], judged = h === h;
        if (hum === "none" ? judged : !judged || (hum === "right" && !(h > 0.5)) || (hum === "wrong" && !(h < 0.5))) continue;
      }
      out[n++] = i;
    }
    return out.subarray(0, n);
  }

  // ---------------------------------------------------------------- sorting
  function sortKey(name, i) {
    if (name === "attractors") return C.attractors[i];
    if (name === "distance") return C.distance[i];
    if (name === "human") return C.human[i];
    const k = +name.slice(6);
    return LC[k][i] - LW[k][i];
  }
  const F32 = new Float32Array(1), U32 = new Uint32Array(F32.buffer);
  function ordinal(v) {   // a float32 as a uint32 in the same order (sign bit flipped, negatives inverted)
    F32[0] = v;
    const u = U32[0];
    return u & 0x80000000 ? (~u) >>> 0 : (u | 0x80000000) >>> 0;
  }
  function sorted(rows) {
    if (!state.sort) return rows;
    // one native sort of float64 numbers: the key's order in the high bits, the row's
    // position in the low bits (stable, and no comparator call per pair); NaN last
    const n = rows.length, bits = Math.max(1, Math.ceil(Math.log2(n + 1)));
    const keep = Math.min(32, 53 - bits), drop = Math.pow(2, 32 - keep), scale = Math.pow(2, bits);
    const top = Math.pow(2, keep) - 1, packed = new Float64Array(n);
    for (let j = 0; j < n; j++) {
      const v = sortKey(state.sort, rows[j]);
      let q = v === v ? Math.floor(ordinal(v) / drop) : top;
      if (!state.asc && v === v) q = top - 1 - Math.min(q, top - 1);
      packed[j] = q * scale + j;
    }
    packed.sort();
    const out = new Uint32Array(n);
    for (let j = 0; j < n; j++) out[j] = rows[packed[j] % scale];
    return out;
  }
  function setSort(name, asc) {
    state.sort = name;
    state.asc = asc !== false;
    $("f-sort").value = name || "";
    return refresh();
  }

  // ---------------------------------------------------------------- table
  const COLS = [["c-n", "#"], ["c-id", "item"]]
    .concat(D.language && D.language.some((v) => v) ? [["c-lang", "lang"]] : [])
    .concat(D.relation && D.relation.some((v) => v) ? [["c-rel", "relation"], ["c-feat", "feature"]] : [])
    .concat([["c-cond", "condition"], ["c-att", "attr"], ["c-dist", "dist"]])
    .concat(MODELS.map((m, k) => ["c-m", m.name, "margin" + k]))
    .concat(META.humans ? [["c-h", "humans", "human"]] : [])
    .concat([["c-text", "sentence"]]);
  function header() {
    $("thead").innerHTML = COLS.map(([c, t, s]) => '<span class="' + c + (s && state.sort === s ? " sorted" +
      (state.asc ? " asc" : "") : "") + '"' + (s ? ' data-sort="' + s + '"' : "") + ' title="' + esc(t) +
      (s && s.startsWith("margin") ? ": log P(correct) - log P(wrong), nats" : "") + '">' + esc(t) + "</span>").join("");
  }
  function cellsOf(i, pos) {
    const w = words(i, null);
    let html = '<span class="c-n">' + (pos + 1) + '</span><span class="c-id">' + (w ? esc(w[0]) : "…") + "</span>";
    if (COLS.some((c) => c[0] === "c-lang")) html += '<span class="c-lang">' + esc(D.language[C.language[i]]) + "</span>";
    if (COLS.some((c) => c[0] === "c-rel")) html += '<span class="c-rel">' + esc(D.relation[C.relation[i]]) +
      '</span><span class="c-feat">' + esc(D.feature[C.feature[i]]) + "</span>";
    const cond = D.condition[C.condition[i]];
    html += '<span class="c-cond">' + esc(cond === "nonce" ? "nonce " + C.variant[i] : cond) + '</span><span class="c-att">' +
      C.attractors[i] + '</span><span class="c-dist">' + C.distance[i] + "</span>";
    for (let k = 0; k < MODELS.length; k++) html += modelCell(k, i);
    if (META.humans) { const h = C.human[i]; html += '<span class="c-h">' + (h === h ? (100 * h).toFixed(0) + "%" : "") + "</span>"; }
    return html + '<span class="c-text">' + (w ? esc(sentence(w)) : "…") + "</span>";
  }
  function modelCell(k, i) {
    const o = O[k][i], m = LC[k][i] - LW[k][i];
    const cls = o === 1 ? "ok" : o === 0 ? "bad" : "tie", mark = o === 1 ? "✓" : o === 0 ? "✗" : o === 2 ? "=" : "";
    return '<span class="c-m ' + cls + '" title="' + OUTCOME[o] + '">' + (m === m ? m.toFixed(2) : "") + " " + mark + "</span>";
  }
  function sentence(w) {
    let s = "";
    for (let j = 0; j < w[1].length; j++) s += w[1][j] + (w[2][j] === "1" ? " " : "");
    return s;
  }
  let painted = "", wordsMs = 0, queued = false;
  function repaint() {   // once, after the chunks that arrived together
    if (queued) return;
    queued = true;
    setTimeout(() => { queued = false; paint(true); }, 0);
  }
  function paint(force) {
    const rows = state.rows, vp = $("viewport");
    if (naive) return;
    const first = Math.max(0, Math.floor(vp.scrollTop / ROW_H) - OVERSCAN);
    const last = Math.min(rows.length, Math.ceil((vp.scrollTop + vp.clientHeight) / ROW_H) + OVERSCAN);
    const key = first + ":" + last + ":" + state.selected;
    if (!force && key === painted) return;
    painted = key;
    let html = "", pending = false;
    for (let p = first; p < last; p++) {
      const i = rows[p];
      if (!words(i, null)) { pending = true; words(i, repaint); }
      html += '<div class="row' + (i === state.selected ? " sel" : "") + '" data-row="' + i + '" style="top:' +
        p * ROW_H + 'px;position:absolute;left:0;right:0">' + cellsOf(i, p) + "</div>";
    }
    $("rows").innerHTML = html;
    $("rows").dataset.pending = pending ? "1" : "";
    if (!pending && !wordsMs) wordsMs = performance.now();   // the first screen complete (the benchmark reads it)
  }
  function paintNaive() {   // the baseline: one DOM row per filtered row (appended 10,000 at a time:
    $("rows").style.position = "static";   // one string of a million rows is past V8's longest)
    $("rows").innerHTML = "";
    for (let a = 0; a < state.rows.length; a += 10000) {
      let html = "";
      for (let p = a; p < Math.min(a + 10000, state.rows.length); p++) html += '<div class="row" data-row="' + state.rows[p] + '">' + cellsOf(state.rows[p], p) + "</div>";
      $("rows").insertAdjacentHTML("beforeend", html);
    }
    document.body.offsetHeight;   // the layout of every row, as a page showing them all must do
  }

  // ---------------------------------------------------------------- summary
  function wilson(r, n) {
    if (!n) return null;
    const z = 1.959963984540054, p = r / n, d = 1 + z * z / n;
    const c = (p + z * z / (2 * n)) / d, h = z * Math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d;
    return [100 * Math.max(0, c - h), 100 * Math.min(1, c + h)];
  }
  const ATT = ["0", "1", "2", "3", "4+"], DIST = ["1", "2–3", "4–6", "7–10", "11–20", "21+"];
  const distBucket = (d) => (d <= 1 ? 0 : d <= 3 ? 1 : d <= 6 ? 2 : d <= 10 ? 3 : d <= 20 ? 4 : 5);
  function summarize(rows) {
    const cuts = [["condition", D.condition, (i) => C.condition[i]], ["attractors", ATT, (i) => Math.min(4, C.attractors[i])],
      ["distance", DIST, (i) => distBucket(C.distance[i])]];
    if (D.language && D.language.length > 1) cuts.push(["language", D.language, (i) => C.language[i]]);
    if (D.relation && D.relation.length > 1) cuts.push(["relation", D.relation, (i) => C.relation[i]]);
    const M = MODELS.length, tally = cuts.map(([, v]) => new Float64Array(M * v.length * 3)), all = new Float64Array(M * 3);
    const codes = cuts.map(([name]) => name === "attractors" ? null : name === "distance" ? null : C[name]);
    for (let p = 0; p < rows.length; p++) {
      const i = rows[p], a = Math.min(4, C.attractors[i]), db = distBucket(C.distance[i]);
      for (let k = 0; k < M; k++) {
        const o = O[k][i];
        if (o === 3) continue;
        const slot = o === 2 ? 2 : 1;   // [right, decided, ties]
        all[k * 3 + slot]++;
        if (o === 1) all[k * 3]++;
        for (let c = 0; c < cuts.length; c++) {
          const v = codes[c] ? codes[c][i] : c === 1 ? a : db, base = (k * cuts[c][1].length + v) * 3;
          tally[c][base + slot]++;
          if (o === 1) tally[c][base]++;
        }
      }
    }
    let html = table("all " + rows.length.toLocaleString() + " rows shown", ["all"], (k) => all.subarray(k * 3, k * 3 + 3));
    cuts.forEach(([name, values], c) => {
      const used = values.map((_, v) => v).filter((v) => MODELS.some((_, k) => tally[c][(k * values.length + v) * 3 + 1] + tally[c][(k * values.length + v) * 3 + 2] > 0));
      if (used.length) html += table("by " + name, used.map((v) => values[v] || "(none)"), (k, j) => tally[c].subarray((k * values.length + used[j]) * 3, (k * values.length + used[j]) * 3 + 3));
    });
    $("summary").innerHTML = html;
    $("summary-scope").textContent = "(accuracy over the decidable rows shown, with Wilson 95% intervals; ties apart)";
  }
  function table(caption, columns, get) {
    let h = "<table><caption>" + esc(caption) + '</caption><tr><th class="l">model</th>' + columns.map((c) => "<th>" + esc(c) + "</th>").join("") + "</tr>";
    MODELS.forEach((m, k) => {
      h += '<tr><td class="l">' + esc(m.name) + "</td>";
      columns.forEach((_, j) => {
        const t = get(k, j), ci = wilson(t[0], t[1]);
        h += "<td>" + (ci ? (100 * t[0] / t[1]).toFixed(1) + '% <span class="ci">[' + ci[0].toFixed(1) + ", " + ci[1].toFixed(1) +
          "] n=" + t[1].toLocaleString() + (t[2] ? ", " + t[2].toLocaleString() + " ties" : "") + "</span>" : t[2] ? '<span class="ci">' + t[2].toLocaleString() + " ties</span>" : "–") + "</td>";
      });
      h += "</tr>";
    });
    return h + "</table>";
  }

  // ---------------------------------------------------------------- detail
  function marked(w, good, surp, max) {   // surp: per-word surprisal, coloured on one scale up to max
    const ws = good ? w[1] : (w[7] || w[1].map((x, j) => (j === w[4] ? w[5] : x)));
    const att = new Set(w[6]);
    return ws.map((x, j) => {
      const cls = "w" + (j === w[3] ? " cue" : "") + (j === w[4] ? " target" : "") + (att.has(j) ? " attractor" : "");
      const s = surp ? surp[j] : null, style = s !== null && s !== undefined && max > 0 ?
        ' style="background:rgba(214,39,40,' + (0.08 + 0.8 * s / max).toFixed(2) + ')" title="' + s.toFixed(2) + " " + META.units + '"' : "";
      return '<span class="' + cls + '"' + style + ">" + esc(x) + "</span>" + (w[2][j] === "1" ? " " : "");
    }).join("");
  }
  function open(i) {
    state.selected = i;
    const w = words(i, () => open(i));
    paint(true);
    if (!w) { $("detail").innerHTML = '<p class="muted">loading…</p>'; return false; }
    const cond = D.condition[C.condition[i]];
    let h = "<h2>" + esc(w[0]) + ' <span class="muted">' + esc(cond) + (C.variant[i] ? " " + C.variant[i] : "") + "</span></h2>";
    h += '<div class="muted">' + [D.testset[C.testset[i]], D.language[C.language[i]], D.construction[C.construction[i]],
      "attractors " + C.attractors[i], "distance " + C.distance[i], w[9] ? "lemma " + w[9] : ""].filter((x) => x).map(esc).join(" · ") + "</div>";
    h += '<div class="pair"><div class="good"><h3>correct' + (w[10] ? " (" + esc(w[10]) + ")" : "") + '</h3><div class="sent">' + marked(w, true) +
      '</div></div><div class="bad-s"><h3>wrong' + (w[11] ? " (" + esc(w[11]) + ")" : "") + '</h3><div class="sent">' + marked(w, false) + "</div></div></div>";
    h += '<div class="legend muted"><span class="w cue">cue</span><span class="w target">target</span><span class="w attractor">attractor</span></div>';
    h += '<table class="scores"><tr><th class="l">model</th><th>log P(correct)</th><th>log P(wrong)</th><th>margin</th><th class="l">outcome</th></tr>';
    MODELS.forEach((m, k) => {
      const o = O[k][i], lc = LC[k][i], lw = LW[k][i];
      h += '<tr><td class="l">' + esc(m.name) + "</td><td>" + fmt(lc) + "</td><td>" + fmt(lw) + "</td><td>" + fmt(lc - lw) +
        '</td><td class="l ' + (o === 1 ? "ok" : o === 0 ? "bad" : "tie") + '">' + OUTCOME[o] + "</td></tr>";
    });
    h += "</table>";
    if (META.humans && C.human[i] === C.human[i]) h += "<p>humans: " + (100 * C.human[i]).toFixed(0) + "% chose the correct form</p>";
    if (w[8]) {
      h += '<div class="surp">';
      const top = (k) => Math.max(0, ...w[8][k][0].concat(w[8][k][1] || []).filter((x) => x !== null));
      for (const k in w[8]) h += "<h3>surprisal, " + esc(MODELS[k].name) + " (" + META.units + "; darker: more surprising)</h3>" +
        '<div class="sent"><span class="muted">correct </span>' + marked(w, true, w[8][k][0], top(k)) +
        '</div><div class="sent"><span class="muted">wrong </span>' + marked(w, false, w[8][k][1], top(k)) + "</div>";
      h += "</div>";
    }
    h += variants(i);
    $("detail").innerHTML = h;
    for (const tr of $("detail").querySelectorAll("tr[data-row]")) tr.addEventListener("click", () => open(+tr.dataset.row));
    return true;
  }
  const fmt = (x) => (x === x ? x.toFixed(3) : "–");
  function variants(i) {
    const g = C.group[i];
    let a = groupStart[g], b = a;
    while (b < N && C.group[b] === g) b++;
    if (b - a < 2) return "";
    let h = "<h3>" + (b - a) + ' rows of this item</h3><table class="variants"><tr><th>variant</th><th class="l">condition</th>' +
      MODELS.map((m) => "<th>" + esc(m.name) + "</th>").join("") + "</tr>";
    for (let j = a; j < b; j++) {
      h += '<tr data-row="' + j + '"' + (j === i ? ' class="sel"' : "") + "><td>" + C.variant[j] + '</td><td class="l">' +
        esc(D.condition[C.condition[j]]) + "</td>" + MODELS.map((_, k) => "<td>" + modelCell(k, j).replace(/<\/?span[^>]*>/g, "") + "</td>").join("") + "</tr>";
    }
    return h + "</table>";
  }

  // ---------------------------------------------------------------- wiring
  function refresh() {
    const t = performance.now();
    state.rows = sorted(filtered());
    $("count").textContent = state.rows.length.toLocaleString() + " of " + N.toLocaleString() + " rows";
    $("count").dataset.n = state.rows.length;
    $("spacer").style.height = (naive ? 0 : state.rows.length * ROW_H) + "px";
    $("viewport").scrollTop = 0;
    painted = "";
    header();
    if (naive) paintNaive(); else paint(true);
    summarize(state.rows);
    return performance.now() - t;
  }
  function start() {
    $("title").textContent = "agree browse: " + META.title;
    $("runs").textContent = META.runs.map((r) => r.name + " (" + r.models.join(", ") + "; " + r.testsets.join(", ") + ")").join(" · ") +
      " · " + N.toLocaleString() + " rows";
    $("plots").innerHTML = META.plots.map((p) => '<figure><img src="' + esc(p.file) + '" alt="' + esc(p.title) + '"><figcaption>' + esc(p.title) + "</figcaption></figure>").join("");
    buildFilters();
    $("viewport").addEventListener("scroll", () => paint(false), {passive: true});
    $("rows").addEventListener("click", (e) => { const r = e.target.closest(".row"); if (r) open(+r.dataset.row); });
    $("thead").addEventListener("click", (e) => {
      const s = e.target.dataset && e.target.dataset.sort;
      if (s) setSort(s, state.sort === s ? !state.asc : true);
    });
    $("reset").addEventListener("click", () => { state.filters = {}; for (const f of FILTERS) $("f-" + f.key).value = ""; refresh(); });
    $("loading").hidden = true;
    $("app").hidden = false;
    refresh();
  }
  start();
  window.agreeBrowse = {
    ready: true, loadMs: performance.now(), scriptMs: performance.now() - t0, rows: () => state.rows,
    setFilter, setSort, open, refresh, filters: () => Object.assign({}, state.filters),
    ids: () => Array.from(document.querySelectorAll("#rows .row")).map((r) => +r.dataset.row),
    wordsMs: () => wordsMs,
    pending: () => $("rows").dataset.pending === "1" || waiting.size > 0,
  };
})();
