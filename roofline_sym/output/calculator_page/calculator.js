// The calculator page's behaviour: read the inputs, call the generated model
// (calculator-models.js: SymPy's JavaScript printer), show its numbers.  No
// formula of the model lives here: this file finds regimes (the first piece
// equal to a term's time, as evaluate labels it), searches the break-even
// axis and writes the page.
(function () {
  "use strict";
  var DATA = window.ROOFLINE_DATA;
  var MODELS = window.ROOFLINE_MODELS;
  var STEPS = window.ROOFLINE_STEPS;
  // break-even points: a geometric grid over 1 .. 2^32, each cell where the
  // outcome changes searched on a finer grid, then halved down to adjacent doubles
  var SCAN = {lo: 1, hi: Math.pow(2, 32), cells: 8192, sub: 256};
  // break-even ranges: as breakeven_range searches them (1 .. 2^24, 4097 points,
  // three finer passes inside the first bracket)
  // blocks searched one by one on each side of a change the grid finds
  var BLOCKS = 64;
  var RANGE = {lo: 1, hi: Math.pow(2, 24), points: 4097, passes: 3};
  var GPUS = {};
  DATA.gpus.forEach(function (g) { GPUS[g.name] = g; });

  function key(mode, recipe) { return mode + "/" + recipe; }

  // the hardware values of a model on a GPU (null: the recipe cannot run there)
  function params(k, gpu) {
    var model = DATA.models[k];
    if (!model) { throw new Error("no model " + k); }
    var on = model.on[gpu];
    if (!on) { return null; }
    var p = Object.assign({}, GPUS[gpu].params, on.params || {});
    model.params.forEach(function (n) {
      if (typeof p[n] !== "number") { throw new Error(gpu + " has no value for " + n); }
    });
    return p;
  }

  // every term's pieces, time and regime, and the seven outputs
  function evaluate(k, gpu, M, K, N) {
    var p = params(k, gpu);
    if (p === null) { return null; }
    var r = MODELS[k](M, K, N, p);
    var terms = DATA.models[k].terms;
    r.regimes = r.pieces.map(function (pieces, i) {
      var at = pieces.indexOf(r.times[i]);
      return terms[i].regimes[at < 0 ? pieces.indexOf(Math.max.apply(null, pieces)) : at];
    });
    return r;
  }

  // a function of x that is true where low precision is strictly faster
  function fasterAlong(k, gpu, K, N) {
    var p = params(k, gpu), f = MODELS[k];
    return function (x) {
      var o = f(x, K === null ? x : K, N === null ? x : N, p).outputs;
      return o.baseline_time > o.lowp_time;
    };
  }

  function speedupAlong(k, gpu, K, N) {
    var p = params(k, gpu), f = MODELS[k];
    return function (x) { return f(x, K === null ? x : K, N === null ? x : N, p).outputs.speedup; };
  }

  function gcd(a, b) { return b ? gcd(b, a % b) : a; }

  // numpy's geomspace: evenly spaced logarithms, the ends exact
  function geomspace(a, b, n) {
    var la = Math.log10(a), step = (Math.log10(b) - la) / (n - 1), out = new Array(n);
    for (var i = 0; i < n; i++) { out[i] = Math.pow(10, la + i * step); }
    out[0] = a;
    out[n - 1] = b;
    return out;
  }

  // halve [lo, hi] (f(lo) = flo, f(hi) differs) down to adjacent doubles
  function boundary(f, lo, hi, flo) {
    for (;;) {
      var mid = lo + (hi - lo) / 2;
      if (mid <= lo || mid >= hi) { return hi; }
      if (f(mid) === flo) { lo = mid; } else { hi = mid; }
    }
  }

  // every change of f's value in (lo, hi), searched on ``SCAN.sub`` cells
  function changes(f, lo, hi, flo, fhi, out) {
    if (hi - lo <= hi * 1e-9) { out.push(boundary(f, lo, hi, flo)); return; }
    var prev = lo, fprev = flo;
    for (var i = 1; i <= SCAN.sub; i++) {
      var x = i === SCAN.sub ? hi : lo + (hi - lo) * (i / SCAN.sub);
      var fx = i === SCAN.sub ? fhi : f(x);
      if (fx !== fprev) { changes(f, prev, x, fprev, fx, out); }
      prev = x;
      fprev = fx;
    }
  }

  // where low precision turns faster or slower along x (a block count steps at
  // every multiple of ``step``; 0: none), and whether it is faster at the grid's
  // low end
  function crossings(f, step) {
    var xs = geomspace(SCAN.lo, SCAN.hi, SCAN.cells + 1), found = [];
    var first = f(xs[0]), prev = first;
    for (var i = 1; i < xs.length; i++) {
      var fx = f(xs[i]);
      if (fx !== prev) { changes(f, xs[i - 1], xs[i], prev, fx, found); }
      prev = fx;
    }
    return {points: step ? blockwise(f, step, found) : found, fasterFirst: first};
  }

  // Near a change, a block count's steps may turn the outcome back and forth
  // within less than a grid cell: the blocks around each change found are
  // searched one by one (a step at a multiple, a root between two), and what
  // they hold replaces what the grid found there.
  function blockwise(f, step, found) {
    var windows = [], out = [];
    found.forEach(function (x) {
      var m = Math.floor(x / step), a = Math.max(SCAN.lo, (m - BLOCKS) * step);
      var b = Math.min(SCAN.hi, (m + BLOCKS + 1) * step), last = windows[windows.length - 1];
      if (last && a <= last[1]) { last[1] = Math.max(last[1], b); } else { windows.push([a, b]); }
    });
    found.forEach(function (x) {
      if (!windows.some(function (w) { return w[0] <= x && x <= w[1]; })) { out.push(x); }
    });
    windows.forEach(function (w) {
      var x = w[0], fx = f(x);
      while (x < w[1]) {
        var right = x + x * 4e-16, fr = f(right);  // just past a multiple: the next block
        if (fr !== fx && x % step === 0) { out.push(x); }
        var next = Math.min(w[1], (Math.floor(x / step) + 1) * step), fn = f(next);
        if (fn !== fr) { changes(f, right, next, fr, fn, out); }
        x = next;
        fx = fn;
      }
    });
    return out.sort(function (p, q) { return p - q; });
  }

  // the smallest x in 1 .. 2^24 where s(x) rises through level (NaN: none)
  function risesThrough(s, level) {
    var xs = geomspace(RANGE.lo, RANGE.hi, RANGE.points);
    for (var pass = 0; pass <= RANGE.passes; pass++) {
      var prev = s(xs[0]) - level, up = -1;
      for (var i = 1; i < xs.length; i++) {
        var v = s(xs[i]) - level;
        if (prev < 0 && v >= 0) { up = i - 1; break; }
        prev = v;
      }
      if (up < 0) { return NaN; }
      if (pass === RANGE.passes) { return xs[xs.length - 1]; }
      xs = geomspace(xs[up], xs[up + 1], RANGE.points);
    }
    return NaN;
  }

  function breakEven(k, gpu, K, N) {
    var steps = DATA.models[k].steps, sizes = [];
    // along M, M's blocks step; along the cube every shape's
    Object.keys(steps).forEach(function (s) { if (K === null || s === "M") { sizes = sizes.concat(steps[s]); } });
    var found = crossings(fasterAlong(k, gpu, K, N), sizes.reduce(gcd, 0));
    var band = DATA.models[k].on[gpu].band, s = speedupAlong(k, gpu, K, N);
    // the measured speedup lies in [low s, high s]: it reaches 1 once s reaches
    // 1 / high (the optimistic edge) and, at the latest, once s reaches 1 / low
    found.range = [risesThrough(s, 1 / band[1]), risesThrough(s, 1 / band[0])];
    return found;
  }

  // a whole step's outputs at sequence length S and local batch B (null: the
  // step cannot run on that GPU)
  function evaluateStep(k, gpu, S, B) {
    var step = DATA.steps[k];
    if (!step) { throw new Error("no step " + k); }
    var on = step.on[gpu];
    if (!on) { return null; }
    var p = Object.assign({}, GPUS[gpu].params, on.params);
    step.params.forEach(function (n) {
      if (typeof p[n] !== "number") { throw new Error(gpu + " has no value for " + n); }
    });
    return STEPS[k](S, B, p).outputs;
  }

  // -- the page -----------------------------------------------------------------
  function $(id) { return document.getElementById(id); }

  function show(id, value, text) {
    var el = $(id);
    el.textContent = text;
    el.setAttribute("data-value", Array.isArray(value) ? JSON.stringify(value) : String(value));
  }

  function digits(v, n) { return Number(v.toPrecision(n)).toString(); }

  function describeFaster(found) {
    var pts = found.points, parts = [], faster = found.fasterFirst, lo = 0;
    for (var i = 0; i <= pts.length; i++) {
      var hi = i < pts.length ? pts[i] : Infinity;
      if (faster) { parts.push("(" + digits(lo, 6) + ", " + (hi === Infinity ? "\u221e" : digits(hi, 6)) + ")"); }
      lo = hi;
      faster = !faster;
    }
    return parts.length ? parts.join(" \u222a ") : "nowhere";
  }

  function showBreakEven(prefix, found) {
    var pts = found.points;
    var text = pts.length ? digits(pts[0], 6) : (found.fasterFirst ? "always" : "never");
    if (pts.length > 1) { text += " (then " + pts.slice(1).map(function (v) { return digits(v, 6); }).join(", ") + ")"; }
    show("rc-" + prefix + "star", pts, text);
    ["low", "high"].forEach(function (edge, i) {
      var v = found.range[i];
      show("rc-" + prefix + "range-" + edge, isNaN(v) ? null : v, isNaN(v) ? "none" : digits(v, 6));
    });
    show("rc-" + prefix + "faster", null, describeFaster(found));
  }

  function whole(id, label, top) {
    var text = $(id).value.trim(), name = label || id.slice(3);
    if (!/^[0-9]+$/.test(text)) { throw new RangeError(name + " must be a whole number, such as 8192"); }
    var v = Number(text), most = top || 40;
    if (v < 1 || v > Math.pow(2, most)) { throw new RangeError(name + " must lie in 1 .. 2^" + most); }
    return v;
  }

  function fill(select, names, keep) {
    select.textContent = "";
    names.forEach(function (n) {
      var o = document.createElement("option");
      o.value = n;
      o.textContent = n;
      select.appendChild(o);
    });
    if (names.indexOf(keep) >= 0) { select.value = keep; }
  }

  function showTerms(k, r) {
    var body = $("rc-terms");
    body.textContent = "";
    DATA.models[k].terms.forEach(function (t, i) {
      var row = document.createElement("tr");
      row.setAttribute("data-term", t.name);
      [[t.name, t.name], [r.times[i], digits(r.times[i] * 1e6, 4)], [r.regimes[i], r.regimes[i]]]
        .forEach(function (cell) {
          var td = document.createElement("td");
          td.textContent = cell[1];
          td.setAttribute("data-value", String(cell[0]));
          row.appendChild(td);
        });
      body.appendChild(row);
    });
  }

  function showSources(gpu) {
    var dl = $("rc-sources"), sources = GPUS[gpu].sources;
    dl.textContent = "";
    Object.keys(sources).forEach(function (field) {
      var dt = document.createElement("dt"), dd = document.createElement("dd");
      dt.textContent = field;
      dd.textContent = DATA.sources[sources[field]];
      dl.appendChild(dt);
      dl.appendChild(dd);
    });
  }

  function update() {
    var gpu = $("rc-gpu").value, mode = $("rc-mode").value, recipe = $("rc-recipe").value;
    var k = key(mode, recipe), model = DATA.models[k], results = $("rc-results");
    showSources(gpu);
    var M, K, N;
    try {
      M = whole("rc-M");
      K = whole("rc-K");
      N = whole("rc-N");
    } catch (e) {
      if (!(e instanceof RangeError)) { throw e; }
      $("rc-status").textContent = e.message;
      results.hidden = true;
      return;
    }
    if (!model.on[gpu]) {
      $("rc-status").textContent = model.unsupported[gpu];
      results.hidden = true;
      return;
    }
    var r = evaluate(k, gpu, M, K, N), band = model.on[gpu].band, s = r.outputs.speedup;
    $("rc-status").textContent = recipe + " (" + model.description + ") on " + gpu + ", " + mode;
    show("rc-speedup", s, digits(s, 4) + "\u00d7");
    show("rc-band-low", band[0] * s, digits(band[0] * s, 3));
    show("rc-band-high", band[1] * s, digits(band[1] * s, 3));
    Object.keys(r.outputs).forEach(function (name) {
      var el = $("rc-out-" + name);
      if (el) { show("rc-out-" + name, r.outputs[name], digits(r.outputs[name] * 1e6, 4)); }
    });
    $("rc-lowp-label").textContent = model.lowp;
    showTerms(k, r);
    showBreakEven("m", breakEven(k, gpu, K, N));
    showBreakEven("x", breakEven(k, gpu, null, null));
    results.hidden = false;
  }

  // each side's output, by row: the step, throughput, MFU, then every group's
  // time (the outputs named baseline_<group>_s)
  function stepRows(outputs) {
    var rows = [["step time (ms)", "baseline_step_s", "lowp_step_s", 1e3],
                ["tokens/s per GPU", "tokens_per_s_baseline", "tokens_per_s_lowp", 1],
                ["MFU (%)", "mfu_baseline", "mfu_lowp", 100]];
    Object.keys(outputs).forEach(function (name) {
      var group = /^baseline_(.+)_s$/.exec(name);
      if (group && group[1] !== "step") {
        rows.push([group[1] + " (ms)", name, "lowp_" + group[1] + "_s", 1e3]);
      }
    });
    return rows;
  }

  function updateStep() {
    var k = $("rs-model").value + "/" + $("rs-recipe").value, gpu = $("rs-gpu").value;
    var step = DATA.steps[k], results = $("rs-results"), S, B;
    try {
      S = whole("rs-S", "the sequence length", 31);
      B = whole("rs-B", "the local batch", 31);
    } catch (e) {
      if (!(e instanceof RangeError)) { throw e; }
      $("rs-status").textContent = e.message;
      results.hidden = true;
      return;
    }
    if (!step) {
      $("rs-status").textContent = "no step of " + $("rs-model").value + " in " + $("rs-recipe").value;
      results.hidden = true;
      return;
    }
    var o = evaluateStep(k, gpu, S, B);
    if (o === null) {
      $("rs-status").textContent = step.unsupported[gpu];
      results.hidden = true;
      return;
    }
    var band = step.on[gpu].band;
    $("rs-lowp-label").textContent = step.recipe;
    $("rs-status").textContent = step.model + " in " + step.recipe + " on " + step.gpus + " \u00d7 " +
      gpu + ", " + S * B + " tokens per GPU per step";
    show("rs-speedup", o.speedup, digits(o.speedup, 4) + "\u00d7");
    show("rs-band-low", band[0] * o.speedup, digits(band[0] * o.speedup, 3));
    show("rs-band-high", band[1] * o.speedup, digits(band[1] * o.speedup, 3));
    var body = $("rs-outputs");
    body.textContent = "";
    stepRows(o).forEach(function (row) {
      var tr = document.createElement("tr"), th = document.createElement("th");
      th.textContent = row[0];
      tr.appendChild(th);
      [row[1], row[2]].forEach(function (name) {
        var td = document.createElement("td");
        td.id = "rs-out-" + name;
        td.textContent = digits(o[name] * row[3], 4);
        td.setAttribute("data-value", String(o[name]));
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    results.hidden = false;
  }

  function startSteps() {
    var keys = Object.keys(DATA.steps);
    if (!keys.length) { $("rs").hidden = true; return; }
    var models = [], recipes = [];
    keys.forEach(function (k) {
      var step = DATA.steps[k];
      if (models.indexOf(step.model) < 0) { models.push(step.model); }
      if (recipes.indexOf(step.recipe) < 0) { recipes.push(step.recipe); }
    });
    fill($("rs-model"), models, models[0]);
    fill($("rs-recipe"), recipes, recipes[0]);
    fill($("rs-gpu"), DATA.gpus.map(function (g) { return g.name; }), DATA.default_gpu);
    $("rs-gpus").textContent = String(DATA.steps[keys[0]].gpus);
    ["rs-model", "rs-recipe", "rs-gpu"].forEach(function (id) { $(id).addEventListener("change", updateStep); });
    ["rs-S", "rs-B"].forEach(function (id) { $(id).addEventListener("input", updateStep); });
    updateStep();
  }

  function start() {
    fill($("rc-gpu"), DATA.gpus.map(function (g) { return g.name; }), DATA.default_gpu);
    fill($("rc-mode"), Object.keys(DATA.modes), "training");
    fill($("rc-recipe"), DATA.modes[$("rc-mode").value], "tensorwise");
    $("rc-mode").addEventListener("change", function () {
      fill($("rc-recipe"), DATA.modes[$("rc-mode").value], $("rc-recipe").value);
      update();
    });
    ["rc-gpu", "rc-recipe"].forEach(function (id) { $(id).addEventListener("change", update); });
    ["rc-M", "rc-K", "rc-N"].forEach(function (id) { $(id).addEventListener("input", update); });
    $("rc-version").textContent = "roofline_sym " + DATA.version + ", preset " + DATA.preset +
      "; every formula printed from its SymPy model (sympy.printing.jscode)";
    update();
    startSteps();
  }

  window.RooflineCalculator = {evaluate: evaluate, breakEven: breakEven, update: update,
                               evaluateStep: evaluateStep, updateStep: updateStep};
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
}());
