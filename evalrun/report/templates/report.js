// The item table of an evalrun report: unpacks the items (gzip + base64 JSON, see
// evalrun/report/items.py for the layout), renders one page of rows at a time, and an item's
// details only when it is opened. Every text goes in through textContent: nothing in the data is HTML.
"use strict";
(function () {
  const PAGE = 100;
  const $ = (id) => document.getElementById(id);
  const status = $("status");

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "text") node.textContent = value; else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  // A text as the data holds it: a string, or [shown text, full length] when it was cut.
  function text(value, lang) {
    if (value === null || value === undefined) return el("span", {class: "na", text: "none"});
    if (typeof value === "string") return el("span", {class: "text", lang: lang}, value);
    return el("span", {class: "text", lang: lang}, value[0],
              el("span", {class: "cut", text: ` [cut: ${value[0].length} of ${value[1]} characters shown]`}));
  }
  const plain = (value) => (value === null || value === undefined ? "" : typeof value === "string" ? value : value[0]);

  async function unpack() {
    const holder = $("items-data");
    const packed = holder.textContent.trim();
    let bytes;
    if (typeof Uint8Array.fromBase64 === "function") {
      bytes = Uint8Array.fromBase64(packed);
    } else {  // a plain loop: Uint8Array.from with a mapping function is several times slower
      const binary = atob(packed);
      bytes = new Uint8Array(binary.length);
      for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    }
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  function start(data) {
    const items = data.items, metrics = data.metrics, fields = data.fields;
    const chunks = data.chunks;
    const fieldNames = Object.keys(fields);
    const metricIndex = new Map(metrics.map((m, i) => [m, i]));
    const base = data.base || null;
    // BASE's value of metric m: where it differs from NEW's, in the item's b.v; else NEW's
    const baseValue = (item, m) => {
      const differs = (item.b.v || []).find(([bm]) => bm === m);
      return differs ? differs[1] : value(item, m);
    };
    const newTarget = $("items-data").dataset.target || "";
    items.forEach((item, i) => { item.i = i; item.haystack = (item.id + " " + plain(item.q) + " " + plain(item.o)).toLowerCase(); });

    // Controls
    const subset = $("f-subset");
    fieldNames.forEach((name, f) => {
      const group = el("optgroup", {label: name});
      fields[name].forEach((value, v) => group.append(el("option", {value: `${f}:${v}`, text: `${name}=${value}`})));
      if (fields[name].length) subset.append(group);
    });
    const attribution = $("f-attribution");
    data.attributions.forEach((name, a) => attribution.append(el("option", {value: String(a), text: name})));
    const metric = $("f-metric");
    metrics.forEach((name, m) => metric.append(el("option", {value: String(m), text: name})));
    const wanted = $("items-data").dataset.metric;
    metric.value = String(metricIndex.has(wanted) ? metricIndex.get(wanted) : 0);
    const flip = $("f-flip");
    const flipKinds = new Set();
    items.forEach((item) => (item.fl || []).forEach(([m, change]) => flipKinds.add(`${m}:${change}`)));
    [...flipKinds].sort().forEach((key) => {
      const [m, change] = key.split(":");
      flip.append(el("option", {value: key, text: `${metrics[m]} ${change}`}));
    });
    // The exploratory subset rows beyond those shown at once travel in the data (thousands on a release with many tags).
    // Those of retrieval judged by the judge travel apart (data.explore_judged), drawn in their own table.
    const allRows = $("all-rows");
    if (allRows) allRows.addEventListener("change", () => {
      for (const [id, rows] of [["exploratory-table", data.explore], ["judged-exploratory-table", data.explore_judged]]) {
        const table = $(id);
        if (!table) continue;
        if (!table.dataset.drawn) {
          table.dataset.drawn = "1";
          table.tBodies[0].append(...(rows || []).map((cells) => el("tr", {class: `extra ${cells[10] || "same"}`},
            cells.map((cell, k) => el("td", {class: k === 7 ? "ci" : k >= 2 && k <= 9 ? "num" : null}, cell)))));
        }
        table.classList.toggle("all", allRows.checked);
      }
    });

    let shown = items, page = 0, sortKey = null, descending = false, open = null;
    const value = (item, m) => (m < data.values.length ? data.values[m][item.i] : null);
    const inSubset = (item, key) => {
      if (!key) return true;
      const [f, v] = key.split(":").map(Number);
      return fieldNames[f] === "tag" ? (item.tg || []).includes(v) : item.f[f] === v;
    };
    const conditions = {
      "": () => true, eq0: (v) => v === 0, lt1: (v) => v !== null && v !== undefined && v < 1,
      eq1: (v) => v === 1, none: (v) => v === null || v === undefined,
    };

    function filter() {
      const words = $("f-search").value.trim().toLowerCase();
      const sub = subset.value, at = attribution.value, m = Number(metric.value), cond = conditions[$("f-condition").value];
      const fl = flip.value;
      shown = items.filter((item) => {
        if (words && !item.haystack.includes(words)) return false;
        if (!inSubset(item, sub)) return false;
        if (at === "-" && (item.at || []).length) return false;
        if (at === "+" && !(item.at || []).length) return false;
        if (at !== "" && at !== "-" && at !== "+" && !(item.at || []).includes(Number(at))) return false;
        if ($("f-condition").value && !cond(value(item, m))) return false;
        if (fl && !(item.fl || []).some(([fm, change]) => `${fm}:${change}` === fl)) return false;
        return true;
      });
      sort();
      page = 0;
      draw();
    }

    // A flip's row in the comparison opens its item: the filters cleared when they hide it, its page drawn.
    function openItem(id) {
      const index = () => shown.findIndex((item) => item.id === id);
      if (index() < 0) {
        for (const key of ["f-subset", "f-attribution", "f-condition", "f-flip"]) $(key).value = "";
        $("f-search").value = "";
        filter();
      }
      if (index() < 0) return;
      page = Math.floor(index() / PAGE);
      draw();
      const tr = document.querySelector(`#item-table tr.row[data-item="${CSS.escape(id)}"]`);
      toggle(items.find((item) => item.id === id), tr);
      tr.scrollIntoView({block: "start"});
    }
    document.querySelectorAll("[data-open]").forEach((node) => {
      node.addEventListener("click", () => openItem(node.dataset.open));
      node.addEventListener("keydown", (event) => { if (event.key === "Enter") openItem(node.dataset.open); });
    });

    const sortValue = {
      id: (item) => item.id, q: (item) => plain(item.q), d: (item) => item.f[0], t: (item) => item.f[1],
      rank: (item) => (item.rk === undefined ? -2 : item.rk === 0 ? 1e9 : item.rk),
      inctx: (item) => (item.ic === undefined || item.ic === null ? -1 : item.ic), cited: (item) => item.cd ?? -1,
      metric: (item) => value(item, Number(metric.value)) ?? -1,
      at: (item) => (item.at || []).map((a) => data.attributions[a]).join(","),
    };

    function sort() {
      if (!sortKey) return;
      const key = sortValue[sortKey], sign = descending ? -1 : 1;
      shown = shown.slice().sort((a, b) => {
        const x = key(a), y = key(b);
        return (x < y ? -1 : x > y ? 1 : a.i - b.i) * sign;
      });
    }

    document.querySelectorAll("#item-table th[data-sort]").forEach((th) => th.addEventListener("click", () => {
      descending = sortKey === th.dataset.sort ? !descending : false;
      sortKey = th.dataset.sort;
      document.querySelectorAll("#item-table th").forEach((other) => other.classList.remove("asc", "desc"));
      th.classList.add(descending ? "desc" : "asc");
      sort();
      draw();
    }));

    const mark = (flag) => (flag === undefined ? el("span", {class: "na", text: "–"}) : flag === null
      ? el("span", {class: "na", text: "not reported"}) : flag ? el("span", {class: "yes", text: "✓"})
      : el("span", {class: "no", text: "✗"}));
    const fieldValue = (item, f) => fields[fieldNames[f]][item.f[f]];

    function row(item) {
      const m = Number(metric.value), v = value(item, m);
      const reason = (item.u || []).find(([um]) => um === m);
      const cells = [
        el("td", {}, item.id), el("td", {lang: item.l, title: plain(item.q)}, plain(item.q)),
        el("td", {}, fieldValue(item, 0)), el("td", {}, fieldValue(item, 1)),
        el("td", {class: "num"}, item.rk === undefined ? el("span", {class: "na", text: "–"})
          : item.rk === 0 ? el("span", {class: "no", text: "none"}) : String(item.rk)),
        el("td", {}, mark(item.ic)), el("td", {}, mark(item.cd)),
        el("td", {class: "num", title: reason ? data.reasons[reason[1]] : null},
           v === null || v === undefined ? el("span", {class: "na", text: reason ? "unscored" : "–"}) : String(v)),
        el("td", {}, (item.at || []).map((a) => data.attributions[a]).join(", ")),
      ];
      const tr = el("tr", {class: "row", "data-item": item.id, tabindex: "0"}, cells);
      tr.addEventListener("click", () => toggle(item, tr));
      tr.addEventListener("keydown", (event) => { if (event.key === "Enter") toggle(item, tr); });
      return tr;
    }

    function draw() {
      const body = document.querySelector("#item-table tbody");
      const pages = Math.max(1, Math.ceil(shown.length / PAGE));
      page = Math.min(page, pages - 1);
      const slice = shown.slice(page * PAGE, (page + 1) * PAGE);
      body.replaceChildren(...slice.map(row));
      open = null;
      $("count").textContent = `${shown.length} of ${items.length} items`;
      $("page").textContent = `page ${page + 1} of ${pages}`;
      $("prev").disabled = page === 0;
      $("next").disabled = page >= pages - 1;
      $("metric-head").textContent = metrics[Number(metric.value)] || "metric";
    }
    $("prev").addEventListener("click", () => { page -= 1; draw(); });
    $("next").addEventListener("click", () => { page += 1; draw(); });
    for (const id of ["f-subset", "f-attribution", "f-metric", "f-condition", "f-flip"]) $(id).addEventListener("change", filter);
    let typing = null;
    $("f-search").addEventListener("input", () => { clearTimeout(typing); typing = setTimeout(filter, 150); });

    function toggle(item, tr) {
      const next = tr.nextElementSibling;
      if (next && next.classList.contains("details")) {
        next.remove();
        tr.classList.remove("open");
        return;
      }
      tr.classList.add("open");
      tr.after(el("tr", {class: "details"}, el("td", {class: "detail", colspan: "9"}, details(item))));
    }

    const chunkId = (c) => chunks.id[c];
    function passage(c, opts) {
      const gold = opts.gold;
      const badges = [
        opts.rank ? el("span", {class: "badge", text: `#${opts.rank}`}) : null,
        gold !== null && gold !== undefined ? el("span", {class: "badge gold", text: `gold ${gold}`}) : null,
        opts.inContext === false ? el("span", {class: "badge bad", text: "cut from the context"}) : null,
        opts.inContext === true ? el("span", {class: "badge good", text: "in context"}) : null,
        opts.score !== null && opts.score !== undefined ? el("span", {class: "badge", text: `score ${Number(opts.score).toFixed(3)}`}) : null,
        leakedNow.has(c) ? el("span", {class: "badge leak", text: "LEAK: the asker may not see this"}) : null,
        staleNow.has(c) ? el("span", {class: "badge stale", text: "stale at the item's moment"}) : null,
        opts.judged !== false && missingNow.has(c) ? el("span", {class: "badge missing", text: "possibly missing evidence"}) : null,
      ];
      const body = chunks.text[c] === null ? el("span", {class: "cut", text: "text unknown: neither the KB snapshot nor the trace has this chunk"})
        : text(chunks.text[c], item_lang);
      const classes = [gold !== null && gold !== undefined ? "gold" : "", opts.inContext === false ? "dropped" : ""].join(" ");
      return el("li", {class: classes}, el("details", {open: gold !== null && gold !== undefined},
        el("summary", {}, badges, el("code", {}, chunkId(c)), " ", el("span", {class: "na"}, plain(chunks.text[c]).slice(0, 80))),
        el("div", {}, body)), opts.judged === false ? null : judgedLine(c));
    }
    // The judge's grade of a chunk and its reason (--judge-retrieval), or why it has none; NEW's run only.
    function judgedLine(c) {
      const graded = gradedNow.get(c);
      if (graded) {
        const [grade, reason, copyOf] = graded;
        return el("div", {class: "judge-grade"}, el("span", {class: `badge judged g${grade}`, text: `judge: ${grade}`}),
          copyOf !== null && copyOf !== undefined ? el("span", {class: "na", text: `(same text as ${chunkId(copyOf)}, graded once) `}) : null,
          reason === "" ? el("span", {class: "na", text: "no reason given"}) : text(reason, item_lang));
      }
      if (notGradedNow.has(c)) {
        return el("div", {class: "judge-grade"}, el("span", {class: "badge", text: "not graded by the judge"}), text(notGradedNow.get(c)));
      }
      return null;
    }
    let item_lang = "en";
    let leakedNow = new Set(), staleNow = new Set();   // the opened item's leaked and stale chunks
    let gradedNow = new Map(), notGradedNow = new Map(), missingNow = new Set();   // what the judge graded of it
    const judged = data.judged || null;
    function judgedNotes(item) {
      gradedNow = new Map((item.jg || []).map(([c, ...rest]) => [c, rest]));
      notGradedNow = new Map((item.jn || []).map(([c, why]) => [c, why]));
      missingNow = new Set(item.jm || []);
      if (!judged || item.c === undefined) return [];
      if (judged.problem) return [el("p", {class: "notice judged-problem"}, `The judge's grades could not be read: ${judged.problem}.`)];
      const out = [];
      if (item.jg || item.jn) {
        out.push(el("p", {class: "hint"}, `Retrieval judged (--judge-retrieval): the judge graded the top ${judged.k} candidates and the context 0/1/2, each grade and reason beside its chunk.`));
      }
      if (item.jm) {
        out.push(el("p", {class: "notice"}, `Possibly missing evidence: ${item.jm.map(chunkId).join(", ")} graded 2 by the judge, neither evidence nor a copy of it.`));
      }
      return out;
    }
    const layerList = (byLayer) => Object.entries(byLayer).map(([layer, cs]) => `${layer}: ${cs.map(chunkId).join(", ")}`).join("; ");
    function scopeNotes(item) {
      const sc = item.sc || {}, out = [];
      const chunksOf = (byLayer) => new Set(Object.values(byLayer || {}).flat());
      leakedNow = chunksOf(sc.lk);
      staleNow = chunksOf(sc.st);
      if (item.ak) {
        const [groups, role, asOf] = item.ak;
        out.push(el("p", {}, el("span", {class: "badge", text: `asker groups: ${groups === null ? "not named (leaks not checked)" : groups.length ? groups.join(", ") : "none (may see only what everyone may)"}`}),
          role ? el("span", {class: "badge", text: `role: ${role}`}) : null,
          el("span", {class: "badge", text: `as of: ${asOf === null ? "the latest" : asOf}`})));
      }
      if (sc.lk) out.push(el("p", {class: "notice bad"}, "PERMISSION LEAK: chunks the asker may not see, ", layerList(sc.lk)));
      if (sc.dc) out.push(el("p", {class: "notice"}, `No evidence the asker may use at this moment (${sc.dc.join(", ")}): scored as an item the system should decline.`));
      if (sc.sa) out.push(el("p", {class: "notice"}, "stale_evidence: ", text(sc.sa)));
      if (sc.st) out.push(el("p", {class: "notice"}, "Stale chunks (not holding at the item's moment), ", layerList(sc.st)));
      if (sc.ur) out.push(el("p", {class: "hint"}, `Not checked against scope (not reported by the trace): ${sc.ur.join(", ")}.`));
      return out;
    }
    const verdictText = (v) => (!v ? null : v[0] === null ? el("span", {class: "cut"}, "no verdict: ", text(v[1]))
      : el("span", {}, el("span", {class: `badge ${["covered", "supported", "yes", "supports"].includes(v[0]) ? "good" : "bad"}`, text: v[0]}), text(v[1], item_lang)));

    function details(item) {
      item_lang = item.l;
      const out = [];
      const f = fieldNames.slice(0, 4).map((name, k) => el("span", {class: "badge", text: `${name}: ${fields[name][item.f[k]]}`}));
      (item.tg || []).forEach((t) => f.push(el("span", {class: "badge", text: `tag: ${fields.tag[t]}`})));
      const scope = scopeNotes(item);   // a leak is said before anything else of the item
      const graded = judgedNotes(item);   // before any chunk is drawn: the chunks read the judge's grades
      out.push(...scope.filter((node) => node.classList.contains("bad")));
      out.push(el("h4", {}, "Question ", el("code", {}, item.id)), el("p", {lang: item.l}, text(item.q, item.l)),
               el("p", {}, f, item.a ? "answerable" : el("strong", {text: "unanswerable"})));
      out.push(...scope.filter((node) => !node.classList.contains("bad")));
      for (const [key, label] of [["fa", "target failed"], ["er", "system error"], ["ap", "scored apart"], ["rf", "taken for a refusal"]]) {
        if (item[key]) out.push(el("p", {class: "notice"}, `${label}: `, text(item[key])));
      }
      (item.pr || []).forEach((p) => out.push(el("p", {class: "notice"}, "problem: ", text(p))));
      const left = [el("h4", {text: "Reference answer"}), el("p", {}, text(item.ref, item.l))];
      if (item.kp) {
        left.push(el("h4", {text: "Key points (the judge's verdict)"}), el("ol", {}, item.kp.map(([t, ev], k) =>
          el("li", {}, text(t, item.l), ev.length ? el("span", {class: "na", text: ` (evidence ${ev.join(", ")})`}) : null,
             item.kv && item.kv[k] ? el("div", {}, verdictText(item.kv[k])) : null))));
      }
      if (item.ev) {
        const unusable = new Map(((item.sc || {}).ue || []).map(([id, reasons]) => [id, reasons]));
        left.push(el("h4", {text: "Evidence"}), el("ul", {class: "passages"}, item.ev.map(([id, grade, t, cs]) =>
          el("li", {class: grade > 0 && !unusable.has(id) ? "gold" : ""}, el("span", {class: "badge", text: `${id} · grade ${grade}`}),
             unusable.has(id) ? el("span", {class: "badge stale", text: `not usable by this asker now: ${unusable.get(id).join(", ")}`}) : null,
             text(t, item.l),
             el("div", {class: "na"}, "chunks: ", cs.length ? cs.map(chunkId).join(", ") : "none (not mapped to this snapshot)")))));
      }
      if (base) out.push(versus(item));
      const right = base ? [] : [el("h4", {text: "Answer"}), el("p", {}, text(item.o, item.l))];
      if (item.cl && item.cl.length) {
        right.push(el("h4", {text: `Claims${base ? " of NEW's answer" : ""} (supported by the context?)`}), el("ol", {}, item.cl.map(([t, verdict, reason]) =>
          el("li", {}, text(t, item.l), verdict !== undefined && reason !== null ? el("div", {}, verdictText([verdict, reason])) : null))));
      }
      if (item.ci || item.cv) {
        const verdicts = new Map((item.cv || []).map(([c, ok]) => [c, ok]));
        const cited = [...new Set([...(item.ci || []), ...(item.cv || []).map(([c]) => c)])];
        right.push(el("h4", {text: "Citations"}), el("ul", {}, cited.map((c) => el("li", {}, el("code", {}, chunkId(c)), " ",
          verdicts.has(c) ? (verdicts.get(c) === true ? el("span", {class: "badge good", text: "supports its claim"})
            : verdicts.get(c) === false ? el("span", {class: "badge bad", text: "does not support"}) : el("span", {class: "na", text: "not judged"})) : null,
          (item.co || []).includes(c) ? el("span", {class: "badge bad", text: "not in the context"}) : null))));
      }
      if (item.rv) right.push(el("h4", {text: "Answer relevance (judge)"}), el("p", {}, verdictText(item.rv)));
      out.push(el("div", {class: "cols"}, el("div", {}, left), el("div", {}, right)));
      out.push(...graded);
      if (item.c !== undefined) {
        const context = item.x === null ? null : new Set((item.x || []).map(([c]) => c));
        if (item.c === null) {
          out.push(el("h4", {text: "Candidates"}), el("p", {class: "notice", text: "The trace does not report its candidates."}));
        } else {
          const golds = item.c.filter(([, g]) => g !== null).length;
          out.push(el("h4", {}, `Candidates (${item.c.length}, ${golds} holding relevant evidence)`),
                   el("ol", {class: "passages"}, item.c.map(([c, gold, score], n) =>
                     passage(c, {gold, score, rank: n + 1, inContext: context === null ? undefined : context.has(c)}))));
        }
        if (item.x === null) {
          if (!base) out.push(el("h4", {text: "Context"}), el("p", {class: "notice", text: "The trace does not report its context."}));
        } else {
          if (!base) {   // with a BASE, the context is beside BASE's above
            out.push(el("h4", {}, `Context sent to the model (${item.x.length})`),
                     el("ol", {class: "passages"}, item.x.map(([c, gold]) => passage(c, {gold}))));
          }
          if (item.c !== null) {
            const dropped = item.c.filter(([c]) => !context.has(c));
            out.push(el("h4", {}, `Cut: candidates not in the context (${dropped.length}, ${dropped.filter(([, g]) => g !== null).length} holding relevant evidence)`),
                     el("ol", {class: "passages"}, dropped.map(([c, gold, score]) => passage(c, {gold, score, inContext: false}))));
          }
        }
      } else {
        out.push(el("p", {class: "notice", text: "No trace: the target returned nothing usable for this item."}));
      }
      if (!base) {   // with a BASE, each metric is in both columns above
        const metricRows = metrics.map((name, m) => [name, value(item, m)]).filter(([, v]) => v !== null && v !== undefined);
        const unscored = (item.u || []).map(([m, r]) => [metrics[m], data.reasons[r]]);
        out.push(el("h4", {text: "Metrics"}), el("table", {class: "grid metrics"}, el("tbody", {},
          metricRows.map(([name, v]) => el("tr", {}, el("td", {}, name), el("td", {class: "num"}, String(v)))),
          unscored.map(([name, why]) => el("tr", {}, el("td", {}, name), el("td", {class: "unscored"}, `unscored: ${why}`))))));
      }
      if (item.fl) {
        out.push(el("h4", {text: "Flips against BASE"}), el("ul", {}, item.fl.map(([m, change, before]) =>
          el("li", {}, `${metrics[m]}: ${change} (attribution in BASE: ${before.map((a) => data.attributions[a]).join(", ") || "none"})`))));
      }
      return out;
    }

    // BASE beside NEW: the two answers, the two contexts with the gold chunks marked, every metric in both.
    function side(run, label, target, present) {
      const out = [el("h4", {class: "side-head"}, `${label} `, el("code", {}, target))];
      if (!present) return [...out, el("p", {class: "notice", text: `${label} has no scores for this item (it did not score it).`})];
      for (const [key, what] of [["fa", "target failed"], ["er", "system error"], ["ap", "scored apart"]]) {
        if (run[key]) out.push(el("p", {class: "notice"}, `${what}: `, text(run[key])));
      }
      out.push(el("h5", {text: "Answer"}), el("p", {class: "answer"}, text(run.o, item_lang)));
      if (run.x === undefined) {
        out.push(el("h5", {text: "Context"}), el("p", {class: "notice", text: "No trace: the target returned nothing usable."}));
      } else if (run.x === null) {
        out.push(el("h5", {text: "Context"}), el("p", {class: "notice", text: "The trace does not report its context."}));
      } else {
        const golds = run.x.filter(([, g]) => g !== null).length;
        out.push(el("h5", {}, `Context (${run.x.length} chunks, ${golds} gold)`),
                 el("ol", {class: "passages context"}, run.x.map(([c, gold]) => passage(c, {gold, judged: label !== "BASE"}))));
      }
      out.push(el("p", {class: "na"}, "attribution: ", (run.at || []).map((a) => data.attributions[a]).join(", ") || "none"));
      return out;
    }

    const shown3 = (v) => (v === null || v === undefined ? null : String(v));
    function metricCell(v, unscored, format) {
      if (v !== null && v !== undefined) return el("td", {class: "num"}, format ? format(v) : String(v));
      if (unscored) return el("td", {class: "unscored"}, `unscored: ${unscored}`);
      return el("td", {class: "na"}, "–");
    }

    function versus(item) {
      const b = item.b || null;
      const why = (run, m) => { const u = ((run && run.u) || []).find(([um]) => um === m); return u ? data.reasons[u[1]] : null; };
      const flipped = new Map((item.fl || []).map(([m, change]) => [m, change]));
      const rows = [];
      metrics.forEach((name, m) => {
        const nv = value(item, m), bv = b ? baseValue(item, m) : null;
        const nu = why(item, m), bu = why(b, m);
        if (nv === null && bv === null && !nu && !bu) return;
        const changed = b !== null && shown3(nv) !== shown3(bv) || (b !== null && (nu || null) !== (bu || null));
        rows.push(el("tr", {class: changed ? "changed" : null, "data-metric": name}, el("td", {}, name,
          flipped.has(m) ? el("span", {class: `badge ${flipped.get(m) === "lost" ? "bad" : "good"}`, text: flipped.get(m)}) : null),
          metricCell(b ? bv : null, bu), metricCell(nv, nu)));
      });
      for (const [key, name, format] of [["ms", "latency total", (v) => `${v} ms`], ["tk", "tokens", null],
                                          ["usd", "cost (USD)", (v) => `$${v}`]]) {
        const nv = item[key], bv = b ? b[key] : undefined;
        if (nv === undefined && bv === undefined) continue;
        rows.push(el("tr", {class: b && nv !== bv ? "changed e2e" : "e2e", "data-metric": name}, el("td", {}, name),
          metricCell(bv, bv === undefined && b ? "not recorded" : null, format), metricCell(nv, nv === undefined ? "not recorded" : null, format)));
      }
      const newSide = {o: item.o, x: item.c === undefined && item.x === undefined ? undefined : item.x, at: item.at, fa: item.fa, er: item.er, ap: item.ap};
      return el("div", {class: "versus"},
        el("h4", {text: "BASE and NEW side by side"}),
        base.note ? el("p", {class: "notice", text: base.note}) : null,
        el("div", {class: "sides"}, el("div", {class: "side base"}, side(b || {}, "BASE", base.target, b !== null)),
           el("div", {class: "side new"}, side(newSide, "NEW", newTarget, true))),
        el("h5", {text: "Metrics (changed ones highlighted)"}),
        el("table", {class: "grid versus-metrics"}, el("thead", {}, el("tr", {}, el("th", {text: "metric"}),
          el("th", {text: "BASE"}), el("th", {text: "NEW"}))), el("tbody", {}, rows)));
    }

    status.remove();
    filter();
    document.body.dataset.ready = "1";
  }

  if (typeof DecompressionStream === "undefined") {
    status.textContent = "This browser cannot unpack the items (it lacks DecompressionStream); every section above is complete.";
    return;
  }
  unpack().then(start).catch((error) => { status.textContent = `The items could not be read: ${error}`; throw error; });
})();
