// medvqa's item browser. The data is one JSON document (#view-data); the page renders one page
// of matching items at a time. Every text from the data is set with textContent or as an
// attribute value, never parsed as HTML. The filter state lives in the URL fragment.
(function () {
  "use strict";
  var started = performance.now();
  var doc = JSON.parse(document.getElementById("view-data").textContent);
  var KEYS = ["benchmark", "model", "condition", "status", "stratum", "correct", "transition", "factor", "language", "disagree",
              "q", "counted", "page", "size"];
  var DEFAULT_SIZE = 25;
  var LANGUAGE_STATES = {p11: "right in both languages", p10: "right only in the exam's language",
                         p01: "right only in the other language", p00: "wrong in both languages"};
  var runIndex = {};
  doc.runs.forEach(function (r, i) { runIndex[r.label] = String(i); });

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    // every text in its own direction: Hebrew right to left, Latin and Japanese left to right
    if (!node.hasAttribute("dir")) node.setAttribute("dir", "auto");
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  // ---------------------------------------------------------------- state <-> fragment
  function readState() {
    var params = new URLSearchParams(location.hash.replace(/^#/, ""));
    var state = {};
    KEYS.forEach(function (k) { var v = params.get(k); if (v !== null && v !== "") state[k] = v; });
    return state;
  }
  function writeState(state) {
    var params = new URLSearchParams();
    KEYS.forEach(function (k) { if (state[k]) params.set(k, state[k]); });
    var hash = params.toString();
    if (("#" + hash) !== location.hash && !(hash === "" && location.hash === "")) {
      history.replaceState(null, "", hash ? "#" + hash : location.pathname + location.search);
    }
    render(state);
  }

  // ---------------------------------------------------------------- filters
  var controls = {};
  function select(name, label, options) {
    var s = el("select", {id: "f-" + name, name: name});
    s.appendChild(el("option", {value: ""}, "all"));
    options.forEach(function (o) { s.appendChild(el("option", {value: o[0]}, o[1])); });
    s.addEventListener("change", onChange);
    var l = el("label", null, label + " ");
    l.appendChild(s);
    document.getElementById("filters").appendChild(l);
    controls[name] = s;
  }
  function pairs(list) { return list.map(function (v) { return [v, v]; }); }
  function buildFilters() {
    if (doc.benchmarks.length > 1) select("benchmark", "benchmark", pairs(doc.benchmarks));
    select("model", "model", doc.runs.map(function (r) { return [r.label, r.label]; }));
    select("condition", "condition", pairs(doc.conditions));
    select("status", "status", pairs(doc.statuses));
    select("correct", "scored", [["correct", "correct"], ["wrong", "wrong"]]);
    var strata = [];
    Object.keys(doc.strata).forEach(function (f) {
      doc.strata[f].forEach(function (v) { strata.push([f + "=" + v, f + " = " + v]); });
    });
    if (strata.length) select("stratum", "stratum", strata);
    select("transition", "image removal", [["paired", "paired (any transition)"]].concat(
      Object.keys(doc.transitions).map(function (k) { return [k, k + ": " + doc.transitions[k]]; })));
    var factors = Object.keys(doc.factors || {});
    if (factors.length) {
      // a variant factor's transition: "swap:p10" is right under the base condition only
      var states = [];
      factors.forEach(function (f) {
        states.push([f + ":paired", f + " (" + doc.factors[f] + "): paired"]);
        ["p11", "p10", "p01", "p00"].forEach(function (k) { states.push([f + ":" + k, f + " " + k]); });
      });
      select("factor", "variant", states);
    }
    if (doc.language_pairs.length) {
      select("language", "language", ["p11", "p10", "p01", "p00"].map(function (k) {
        return [k, k + ": " + LANGUAGE_STATES[k]];
      }));
    }
    if (doc.runs.length > 1) {
      var box = el("input", {type: "checkbox", id: "f-disagree", name: "disagree"});
      box.addEventListener("change", onChange);
      var l = el("label", null, "models disagree ");
      l.appendChild(box);
      document.getElementById("filters").appendChild(l);
      controls.disagree = box;
    }
    var q = el("input", {type: "search", id: "f-q", name: "q", placeholder: "search text, responses, ids"});
    q.addEventListener("input", onChange);
    document.getElementById("filters").appendChild(q);
    controls.q = q;
  }
  function showState(state) {
    Object.keys(controls).forEach(function (k) {
      var c = controls[k];
      if (c.type === "checkbox") c.checked = state[k] === "1";
      else {
        // a value from a link the menu does not list (a stratum by another name): listed as given
        if (c.tagName === "SELECT" && state[k] && !Array.prototype.some.call(c.options, function (o) {
          return o.value === state[k]; })) c.appendChild(el("option", {value: state[k]}, state[k]));
        c.value = state[k] || "";
      }
    });
  }
  function onChange() {
    var state = {};
    Object.keys(controls).forEach(function (k) {
      var c = controls[k];
      var v = c.type === "checkbox" ? (c.checked ? "1" : "") : c.value;
      if (v) state[k] = v;
    });
    var old = readState();
    if (old.size) state.size = old.size;
    writeState(state);  // a new filter starts at page 1
  }

  // ---------------------------------------------------------------- matching
  var haystacks = [];
  function haystack(item, i) {
    if (haystacks[i] === undefined) {
      var parts = [item.id, item.q, item.g];
      item.o.forEach(function (o) { parts.push(o[0] + " " + o[1]); });
      Object.keys(item.aq).forEach(function (r) {
        parts.push(item.aq[r].q);
        item.aq[r].o.forEach(function (o) { parts.push(o[0] + " " + o[1]); });
      });
      Object.keys(item.runs).forEach(function (r) {
        Object.keys(item.runs[r]).forEach(function (c) {
          var x = item.runs[r][c];
          parts.push(x.r || "", x.e || "", (x.p || []).join(" "));
          (x.j || []).forEach(function (j) { parts.push(j.r || ""); });
        });
      });
      haystacks[i] = parts.join("\n").toLowerCase();
    }
    return haystacks[i];
  }
  // a model filter names a run's label (as the audit names it) or its model (as compare does)
  function selectedRuns(state) {
    if (state.model && runIndex[state.model] !== undefined) return [runIndex[state.model]];
    var all = doc.runs.map(function (_, i) { return String(i); });
    if (!state.model) return all;
    return all.filter(function (i) { return doc.runs[i].model === state.model; });
  }
  function readings(item, runs, state) {
    var out = [];
    runs.forEach(function (r) {
      var byCond = item.runs[r];
      if (!byCond) return;
      var conds = state.condition ? [state.condition] : doc.conditions;
      conds.forEach(function (c) { if (byCond[c]) out.push([r, c, byCond[c]]); });
    });
    return out;
  }
  function disagree(item, runs, state) {
    var conds = state.condition ? [state.condition] : doc.conditions;
    return conds.some(function (c) {
      var seen = {};
      runs.forEach(function (r) { var x = item.runs[r] && item.runs[r][c]; if (x) seen[JSON.stringify(x.p || null)] = 1; });
      return Object.keys(seen).length > 1;
    });
  }
  // the item's transition between two runs in two languages, under a condition shown
  function languageMatch(item, runs, state) {
    return doc.language_pairs.some(function (pair, k) {
      if (runs.indexOf(pair.runs[0]) < 0 && runs.indexOf(pair.runs[1]) < 0) return false;
      var byCond = (item.lt || {})[String(k)] || {};
      return Object.keys(byCond).some(function (c) {
        return (!state.condition || c === state.condition) && byCond[c] === state.language;
      });
    });
  }
  function matches(item, i, state, runs) {
    if (state.benchmark && item.b !== state.benchmark) return false;
    var rs = readings(item, runs, state);
    // "counted": only the readings that enter n (a cell's items link under n opens those n)
    if (state.counted === "1") rs = rs.filter(function (x) { return x[2].k !== 0; });
    if (!rs.length) return false;
    if (state.status || state.correct) {
      var want = state.correct === "correct";
      if (!rs.some(function (x) {
        return (!state.status || x[2].s === state.status) && (!state.correct || (x[2].c === true) === want);
      })) return false;
    }
    if (state.stratum) {
      var at = state.stratum.indexOf("="), field = state.stratum.slice(0, at);
      var values = item.st[doc.aliases[field] || field] || [];
      if (values.indexOf(state.stratum.slice(at + 1)) < 0) return false;
    }
    // "paired": any transition, i.e. the item has both records of the image-removal pair
    if (state.transition && !runs.some(function (r) {
      return state.transition === "paired" ? item.t[r] !== undefined : item.t[r] === state.transition;
    })) return false;
    if (state.factor) {
      var cut = state.factor.lastIndexOf(":"), name = state.factor.slice(0, cut), want = state.factor.slice(cut + 1);
      if (!runs.some(function (r) {
        var st = ((item.vt || {})[r] || {})[name];
        return want === "paired" ? st !== undefined : st === want;
      })) return false;
    }
    if (state.language && !languageMatch(item, runs, state)) return false;
    if (state.disagree === "1" && !disagree(item, runs, state)) return false;
    if (state.q && haystack(item, i).indexOf(state.q.toLowerCase()) < 0) return false;
    return true;
  }

  // ---------------------------------------------------------------- one item
  var SVG = "http://www.w3.org/2000/svg";
  function drawBoxes(svg, boxes, cls, w, h) {
    boxes.forEach(function (b) {
      var rect = document.createElementNS(SVG, "rect");
      rect.setAttribute("x", b[0]); rect.setAttribute("y", b[1]);
      rect.setAttribute("width", b[2]); rect.setAttribute("height", b[3]);
      rect.setAttribute("fill", "none"); rect.setAttribute("class", cls);
      rect.setAttribute("stroke", cls === "gold-box" ? "#0a0" : "#d00");
      rect.setAttribute("stroke-width", Math.max(w, h) / 150);
      svg.appendChild(rect);
    });
  }
  function figure(index, item, rs) {
    var img = doc.images[index];
    var fig = el("div", {"class": "figure"});
    fig.appendChild(el("img", {src: img[0], alt: "image of " + item.id}));
    var predicted = [];
    rs.forEach(function (x) { if (x[2].b) predicted = predicted.concat(x[2].b); });
    if (item.gb.length || predicted.length) {
      var svg = document.createElementNS(SVG, "svg");
      svg.setAttribute("viewBox", "0 0 " + img[1] + " " + img[2]);
      svg.setAttribute("preserveAspectRatio", "none");
      drawBoxes(svg, item.gb, "gold-box", img[1], img[2]);
      drawBoxes(svg, predicted, "predicted-box", img[1], img[2]);
      fig.appendChild(svg);
    }
    return fig;
  }
  function reading(r, c, x) {
    var cls = x.c === true ? "ok" : (x.c === false ? "bad" : "none");
    var div = el("div", {"class": "reading " + cls, "data-run": doc.runs[r].label, "data-condition": c,
                         "data-status": x.s, "data-correct": String(x.c)});
    var head = el("div");
    head.appendChild(el("b", null, c));
    head.appendChild(document.createTextNode(" " + x.s + ", " + (x.c === true ? "correct" : x.c === false ? "wrong" : "not scored")
      + "; read " + (x.l && x.l.length ? x.l.join(", ") : "nothing") + (x.u ? " (rule " + x.u + ")" : "")));
    div.appendChild(head);
    if (x.x) {
      div.appendChild(el("div", null, Object.keys(x.x).map(function (k) { return k + " reading: " + x.x[k]; }).join("; ")));
    }
    if (x.e) div.appendChild(el("div", {"class": "error"}, "error: " + x.e));
    div.appendChild(el("pre", {"class": "response"}, x.r === null || x.r === undefined ? "(no response)" : x.r));
    (x.j || []).forEach(function (j) {
      var verdict = j.v === 1 ? "correct" : j.v === 0 ? "wrong" : "no verdict";
      var d = el("div", {"class": "judge"}, "judge " + j.m + (j.primary ? " (counts)" : "") + ": " + verdict
        + (j.e ? " (" + j.e + ")" : ""));
      if (j.r) d.appendChild(el("pre", {"class": "rationale"}, j.r));
      div.appendChild(d);
    });
    return div;
  }
  function itemNode(item, runs, state) {
    var rs = readings(item, runs, state);
    var div = el("article", {"class": "item", "data-item": item.id, "data-benchmark": item.b});
    div.appendChild(el("h2", null, item.id));
    var meta = [item.b].concat(Object.keys(item.st).map(function (f) { return f + " = " + item.st[f].join(", "); }));
    Object.keys(item.t).forEach(function (r) {
      if (runs.indexOf(r) >= 0) meta.push(doc.runs[r].label + ": " + item.t[r] + " (" + doc.transitions[item.t[r]] + ")");
    });
    Object.keys(item.vt || {}).forEach(function (r) {
      if (runs.indexOf(r) < 0) return;
      Object.keys(item.vt[r]).forEach(function (f) { meta.push(doc.runs[r].label + ", " + f + ": " + item.vt[r][f]); });
    });
    Object.keys(item.lt || {}).forEach(function (k) {
      var pair = doc.language_pairs[k];
      Object.keys(item.lt[k]).forEach(function (c) {
        meta.push(pair.languages.join(" vs ") + " (" + doc.runs[pair.runs[0]].label + ", " + c + "): " + item.lt[k][c]);
      });
    });
    div.appendChild(el("div", {"class": "meta"}, meta.join(" · ")));
    item.i.forEach(function (index) { div.appendChild(figure(index, item, rs)); });
    // the perturbed images the item was shown under its variants, beside its own
    Object.keys(item.vi || {}).forEach(function (v) {
      item.vi[v].forEach(function (index) {
        var fig = figure(index, item, []);
        fig.setAttribute("data-variant", v);
        fig.appendChild(el("div", {"class": "caption"}, v));
        div.appendChild(fig);
      });
    });
    div.appendChild(el("div", {"class": "stem"}, item.q));
    if (item.o.length) {
      var ol = el("div", {"class": "options"});
      item.o.forEach(function (o) { ol.appendChild(el("div", null, o[0] + ". " + o[1])); });
      div.appendChild(ol);
    }
    div.appendChild(el("div", {"class": "gold"}, "answer: " + item.g));
    var wrap = el("div", {"class": "runs"});
    runs.forEach(function (r) {
      var mine = rs.filter(function (x) { return x[0] === r; });
      if (!mine.length) return;
      var col = el("div", {"class": "run", "data-run": doc.runs[r].label});
      col.appendChild(el("h3", null, doc.runs[r].label));
      var asked = item.aq[r];
      if (asked) {  // this run asked the item otherwise (another language)
        var alt = el("div", {"class": "asked"});
        alt.appendChild(el("div", {"class": "stem"}, asked.q));
        asked.o.forEach(function (o) { alt.appendChild(el("div", null, o[0] + ". " + o[1])); });
        alt.appendChild(el("div", {"class": "gold"}, "answer: " + asked.g));
        col.appendChild(alt);
      }
      mine.forEach(function (x) { col.appendChild(reading(x[0], x[1], x[2])); });
      wrap.appendChild(col);
    });
    div.appendChild(wrap);
    return div;
  }

  // ---------------------------------------------------------------- one page
  function pager(node, state, page, pages) {
    node.textContent = "";
    function go(p) {
      return function () { var s = readState(); s.page = p > 1 ? String(p) : ""; writeState(s); };
    }
    var prev = el("button", {type: "button", "class": "prev"}, "previous");
    prev.disabled = page <= 1; prev.addEventListener("click", go(page - 1));
    var next = el("button", {type: "button", "class": "next"}, "next");
    next.disabled = page >= pages; next.addEventListener("click", go(page + 1));
    node.appendChild(prev);
    node.appendChild(el("span", null, " page " + page + " of " + pages + " "));
    node.appendChild(next);
  }
  function render(state) {
    showState(state);
    var runs = selectedRuns(state);
    var matching = [];
    doc.items.forEach(function (item, i) { if (matches(item, i, state, runs)) matching.push(item); });
    var size = Math.max(1, parseInt(state.size, 10) || DEFAULT_SIZE);
    var pages = Math.max(1, Math.ceil(matching.length / size));
    var page = Math.min(pages, Math.max(1, parseInt(state.page, 10) || 1));
    var box = document.getElementById("items");
    box.textContent = "";
    var frag = document.createDocumentFragment();
    matching.slice((page - 1) * size, page * size).forEach(function (item) { frag.appendChild(itemNode(item, runs, state)); });
    box.appendChild(frag);
    var first = matching.length ? (page - 1) * size + 1 : 0;
    document.getElementById("status-line").textContent = matching.length + " of " + doc.items.length
      + " items match; showing " + first + "–" + Math.min(page * size, matching.length);
    document.body.setAttribute("data-matching", String(matching.length));
    document.body.setAttribute("data-page", String(page));
    document.body.setAttribute("data-pages", String(pages));
    pager(document.getElementById("pager-top"), state, page, pages);
    pager(document.getElementById("pager-bottom"), state, page, pages);
  }

  function listRuns() {
    var ul = el("ul", {id: "runs"});
    doc.runs.forEach(function (r) {
      var names = r.paths.map(function (p) { return p.split(/[\\/]/).pop(); });  // the folders; whole paths on hover
      ul.appendChild(el("li", {title: r.paths.join(" + ")}, r.label + " (" + r.benchmark + "): " + names.join(" + ")));
    });
    document.getElementById("filters").before(ul);
  }

  listRuns();
  buildFilters();
  window.addEventListener("hashchange", function () { render(readState()); });
  render(readState());
  document.body.setAttribute("data-rendered-ms", String(Math.round(performance.now())));
  document.body.setAttribute("data-script-ms", String(Math.round(performance.now() - started)));
})();
