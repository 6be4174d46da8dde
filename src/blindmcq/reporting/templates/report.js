// Item explorer: plain JS, no network. Data comes from the JSON in #report-data; text is set with
// textContent only, so item text can never inject markup.
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("report-data").textContent);
  const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== null && v !== undefined) node.setAttribute(k, v);
    }
    for (const c of children.flat()) {
      if (c !== null && c !== undefined) node.append(c instanceof Node ? c : String(c));
    }
    return node;
  }
  const letter = (i) => (i === null || i === undefined ? "–" : LETTERS[i] || String(i + 1));
  const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

  // Derived columns, computed once.
  const items = DATA.items.map((it) => {
    const distractors = it.lengths.filter((_, i) => i !== it.key);
    const keyExcess = it.key === null ? null : it.lengths[it.key] - mean(distractors);
    const lexicalPick = it.lexical ? (it.lexical.correct ? "key" : "other") : "";
    const text = [it.id, it.question, ...it.options].join("\n").toLocaleLowerCase("uk");
    const leaks = it.leaks || [];
    const leakText = leaks.join(", ");
    return Object.assign({}, it, { keySlot: letter(it.key), keyExcess, lexicalPick, text, leaks, leakText });
  });
  const byId = new Map(items.map((it) => [it.id, it]));

  const gate = DATA.gate || {};
  $("gate-note").textContent = gate.gate_model
    ? `Gate: ${gate.gate_model}, an item is rejected when answered blind in at least k of its orders` +
      (gate.rule ? ` (${gate.rule}). ` : gate.k !== null && gate.k !== undefined ? ` (k = ${gate.k}). ` : ". ") +
      `Blind-solved counts are the gate model's. ` +
      `Click a row for the item; click a column head to sort.`
    : "No gate in this run.";

  for (const bank of [...new Set(items.map((it) => it.bank))].sort()) {
    $("f-bank").append(el("option", { value: bank }, bank));
  }

  // Leak types in a fixed reading order: surface strategies, the statute search, then models.
  const leakRank = (t) => (t.startsWith("surface") ? 0 : t === "lexical" ? 1 : 2);
  const leakTypes = [...new Set(items.flatMap((it) => it.leaks))]
    .sort((a, b) => leakRank(a) - leakRank(b) || a.localeCompare(b));
  for (const tag of leakTypes) $("f-leak").append(el("option", { value: tag }, tag));

  let sortKey = "id";
  let sortDir = 1;
  let shown = [];

  function compare(a, b) {
    const x = a[sortKey];
    const y = b[sortKey];
    if (x === y) return a.id < b.id ? -1 : 1;
    if (x === null || x === undefined) return 1; // missing values last either way
    if (y === null || y === undefined) return -1;
    if (typeof x === "number" && typeof y === "number") return sortDir * (x - y);
    return sortDir * String(x).localeCompare(String(y), "uk", { numeric: true });
  }

  function filtered() {
    const q = $("f-search").value.trim().toLocaleLowerCase("uk");
    const bank = $("f-bank").value;
    const decision = $("f-gate").value;
    const leak = $("f-leak").value;
    const lo = $("f-min").value === "" ? -Infinity : Number($("f-min").value);
    const hi = $("f-max").value === "" ? Infinity : Number($("f-max").value);
    return items.filter((it) => {
      if (bank && it.bank !== bank) return false;
      if (decision && it.gate !== decision) return false;
      if (leak === "__any__" && !it.leaks.length) return false;
      if (leak === "__none__" && it.leaks.length) return false;
      if (leak && !leak.startsWith("__") && !it.leaks.includes(leak)) return false;
      const solved = it.solved === null ? -1 : it.solved;
      if ((lo > 0 || hi < Infinity) && (it.solved === null || solved < lo || solved > hi)) return false;
      return !q || it.text.includes(q);
    });
  }

  function render() {
    shown = filtered().sort(compare);
    const body = $("items").tBodies[0];
    body.replaceChildren(
      ...shown.map((it) =>
        el(
          "tr",
          { "data-id": it.id, class: location.hash === "#item=" + encodeURIComponent(it.id) ? "selected" : null },
          el("td", null, it.id),
          el("td", null, it.bank),
          el("td", null, el("span", { class: "badge " + it.gate.replace(" ", "-") }, it.gate)),
          el("td", { class: "num" }, it.solved === null ? "" : `${it.solved}/${it.orders}`),
          el("td", null, it.keySlot),
          el("td", { class: "num" }, it.keyExcess === null ? "" : it.keyExcess.toFixed(1)),
          el("td", null, it.lexicalPick),
          el("td", { class: "leaks" }, it.leakText),
          el("td", { class: "q", title: it.question }, it.question),
        ),
      ),
    );
    $("count").textContent = `${shown.length} of ${items.length} items`;
  }

  function picksTable(it) {
    const runs = Object.keys(it.picks);
    if (!runs.length) return el("p", { class: "note" }, "No blind calls for this item.");
    const orders = [...new Set(runs.flatMap((r) => it.picks[r].map((c) => c.o)))];
    const head = el("tr", null, el("th", null, "model"), orders.map((o) => el("th", null, o)), el("th", null, "solved"));
    const rows = runs.map((run) => {
      const calls = new Map(it.picks[run].map((c) => [c.o, c]));
      const cells = orders.map((o) => {
        const c = calls.get(o);
        if (!c) return el("td", { class: "none" }, "");
        const cls = c.p === null ? "none" : c.c ? "right" : "wrong";
        return el("td", { class: cls, title: `${o}: picked ${letter(c.p)} (${c.s})` }, c.p === null ? "?" : letter(c.p));
      });
      const solved = it.picks[run].filter((c) => c.c).length;
      return el("tr", null, el("td", { class: "run" }, run), cells, el("td", null, `${solved}/${it.picks[run].length}`));
    });
    return el("div", { class: "scroll" }, el("table", { class: "picks" }, el("thead", null, head), el("tbody", null, rows)));
  }

  function lexicalBlock(it) {
    const m = it.lexical;
    if (!m) return el("p", { class: "note" }, "No lexical match for this item.");
    const verdict = m.correct ? "picks the key" : "picks a distractor";
    return el(
      "div",
      null,
      el("p", null, `BM25 over the statutes ${verdict}: option ${letter(m.picked_option)}` +
        (m.tie ? " (tied)" : "") + (m.match_score === null ? "" : `, score ${m.match_score}`) + "."),
      el("p", null, el("strong", null, [m.match_act_title, m.match_ref].filter(Boolean).join(", ")),
        m.match_issued ? ` (${m.match_issued}; ${m.match_act})` : ""),
      m.match_title ? el("p", null, m.match_title) : null,
      m.match_snippet ? el("blockquote", null, m.match_snippet) : null,
    );
  }

  function open(id) {
    const it = byId.get(id);
    const detail = $("detail");
    if (!it) { detail.hidden = true; detail.parentElement.classList.remove("open"); return; }
    const longest = Math.max(1, ...it.lengths);
    const options = el(
      "ol",
      { class: "options" },
      it.options.map((o, i) =>
        el(
          "li",
          { class: i === it.key ? "key" : null },
          el("span", null, letter(i) + (i === it.key ? " ✓" : "")),
          el("span", null, o === "" ? "(blank)" : o,
            el("span", { class: "bar", style: `width:${(100 * it.lengths[i]) / longest}%` })),
          el("span", { class: "len" }, `${it.lengths[i]} ch · ${it.words[i]} w` +
            (it.lexical && it.lexical.refs[i] ? ` · ${it.lexical.refs[i]}` : "")),
        ),
      ),
    );
    detail.replaceChildren(
      el("button", { type: "button", class: "close", "aria-label": "close" }, "×"),
      el("h3", { id: "detail-title" }, `${it.id} (${it.bank} №${it.number})`),
      el("p", null, el("span", { class: "badge " + it.gate.replace(" ", "-") }, it.gate),
        it.solved === null ? "" : ` blind-solved ${it.solved}/${it.orders}`,
        it.flags.length ? ` · flags: ${it.flags.join(", ")}` : "", it.status !== "ok" ? ` · ${it.status}` : ""),
      el("p", { class: "question" }, it.question),
      el("h3", null, "Options (published order; key marked ✓; length in characters and words)"),
      options,
      el("h3", null, "Blind picks over the orders (option letters in published order)"),
      picksTable(it),
      el("h3", null, "Lexical match in the statutes"),
      lexicalBlock(it),
      el("h3", null, "Surface strategies that pick the key"),
      el("p", null, it.strategies.length ? it.strategies.join(", ") : "none"),
      el("h3", null, "Leak types"),
      el("p", null, it.leaks.length ? it.leakText : "none found"),
      Object.keys(it.leakRuns || {}).length
        ? el("ul", null, Object.entries(it.leakRuns).map(([run, kind]) => el("li", null, `${run}: ${kind}`)))
        : null,
    );
    detail.querySelector(".close").addEventListener("click", () => { history.replaceState(null, "", "#explorer"); open(null); render(); });
    detail.hidden = false;
    detail.parentElement.classList.add("open");
    if (detail.offsetTop > window.scrollY + window.innerHeight) detail.scrollIntoView(); // stacked layout
  }

  $("items").tHead.addEventListener("click", (ev) => {
    const th = ev.target.closest("th[data-key]");
    if (!th) return;
    sortDir = th.dataset.key === sortKey ? -sortDir : 1;
    sortKey = th.dataset.key;
    for (const h of $("items").tHead.querySelectorAll("th")) h.removeAttribute("aria-sort");
    th.setAttribute("aria-sort", sortDir > 0 ? "ascending" : "descending");
    render();
  });
  $("items").tBodies[0].addEventListener("click", (ev) => {
    const tr = ev.target.closest("tr[data-id]");
    if (!tr) return;
    history.replaceState(null, "", "#item=" + encodeURIComponent(tr.dataset.id));
    open(tr.dataset.id);
    render();
  });
  for (const id of ["f-search", "f-bank", "f-gate", "f-leak", "f-min", "f-max"]) {
    for (const type of ["input", "change"]) $(id).addEventListener(type, render);
  }

  render();
  const m = location.hash.match(/^#item=(.+)$/);
  if (m) open(decodeURIComponent(m[1]));
})();
