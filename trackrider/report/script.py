"""The page's one inline script: zoom along x on the long charts, and the time / track-position
toggle (docs/report.md). It is part of the page, so the page still fetches nothing.

A chart is ``<div class="zoom" data-zoom='{"axes": [{"box": [x0, y0, x1, y1] (SVG user units),
"axis": id, "stretch": [id, …], "move": [[id, x of the point labelled or null], …]} per panel],
"lim": [a, b] (the data range drawn), "label"}'>`` (``figures.zoomable``); while zoomed the
script stretches the ``stretch`` elements along x (clipped to the panel), moves the ``move`` ones
(markers, texts) and draws its own ticks in place of the ``axis`` group. Drag across a chart to zoom in; double-click (or "all") to zoom out. A
``<div class="alt">`` holds figures of one thing drawn two ways (``data-view`` names each): the
script shows one, with a button for each. Without the script every figure shows, whole.
"""

SCRIPT = r"""
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  document.documentElement.classList.add("js");

  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function step(span) {
    var raw = span / 8, p = Math.pow(10, Math.floor(Math.log10(raw))), f = raw / p;
    return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * p;
  }
  function label(v, st) {
    var d = Math.max(0, -Math.floor(Math.log10(st) + 1e-9));
    return (Math.abs(v) < st / 2 ? 0 : v).toFixed(d);
  }

  function Chart(box) {
    var spec = JSON.parse(box.getAttribute("data-zoom"));
    var svg = box.querySelector("svg");
    var lim = spec.lim, boxes = spec.axes.map(function (a) { return a.box; });
    var X0 = boxes[0][0], X1 = boxes[0][2];
    var defs = svg.querySelector("defs") || el("defs", {}, svg);
    var serial = (Chart.count = (Chart.count || 0) + 1);
    function byId(id) { return svg.querySelector('[id="' + id + '"]'); }
    var panels = spec.axes.map(function (a, k) {
      var b = a.box, stretch = a.stretch.map(byId).filter(Boolean), inner = null;
      if (stretch.length) {
        var cid = "zoomclip-" + serial + "-" + k;
        var cp = el("clipPath", {id: cid}, defs);
        el("rect", {x: b[0], y: b[1], width: b[2] - b[0], height: b[3] - b[1]}, cp);
        var outer = el("g", {"clip-path": "url(#" + cid + ")"});
        stretch[0].parentNode.insertBefore(outer, stretch[0]);
        inner = el("g", {"class": "zin"}, outer);
        stretch.forEach(function (e) {
          inner.appendChild(e);
          e.removeAttribute("clip-path");
          var clipped = e.querySelectorAll("[clip-path]");
          for (var j = 0; j < clipped.length; j++) clipped[j].removeAttribute("clip-path");
        });
      }
      var uses = [], texts = [];
      a.move.forEach(function (m) {
        var g = byId(m[0]);
        if (!g) return;
        var u = g.querySelectorAll("use");
        for (var j = 0; j < u.length; j++) uses.push([u[j], parseFloat(u[j].getAttribute("x"))]);
        var t = g.querySelector("text");
        if (t) texts.push([g, m[1] !== null ? m[1] : parseFloat(t.getAttribute("x"))]);
      });
      return {box: b, inner: inner, uses: uses, texts: texts, axis: byId(a.axis),
              ticks: el("g", {"class": "zticks"}, svg)};
    });
    var view = lim.slice();
    var bar = document.createElement("div");
    bar.className = "zbar";
    bar.innerHTML = 'drag across the chart to zoom in · <button type="button" data-a="out">zoom out</button> ' +
      '<button type="button" data-a="left">&#9664;</button><button type="button" data-a="right">&#9654;</button> ' +
      '<button type="button" data-a="all">all</button> <span class="zr"></span>';
    box.insertBefore(bar, svg);
    var readout = bar.querySelector(".zr");

    function toX(v) { return X0 + (v - view[0]) / (view[1] - view[0]) * (X1 - X0); }
    function toV(x) { return view[0] + (x - X0) / (X1 - X0) * (view[1] - view[0]); }

    function draw() {
      var whole = view[0] <= lim[0] + 1e-9 * (lim[1] - lim[0]) && view[1] >= lim[1] - 1e-9 * (lim[1] - lim[0]);
      var k = (lim[1] - lim[0]) / (view[1] - view[0]);
      var c = (lim[0] - view[0]) / (view[1] - view[0]) * (X1 - X0);
      var a = k, b = X0 * (1 - k) + c;
      panels.forEach(function (p, n) {
        if (p.inner) p.inner.setAttribute("transform", whole ? "" : "matrix(" + a + ",0,0,1," + b + ",0)");
        p.uses.forEach(function (u) {
          var x = a * u[1] + b;
          u[0].setAttribute("x", whole ? u[1] : x);
          u[0].style.visibility = (whole || (x >= X0 && x <= X1)) ? "" : "hidden";
        });
        p.texts.forEach(function (t) {
          if (isNaN(t[1])) return;
          var x = a * t[1] + b;
          t[0].setAttribute("transform", whole ? "" : "translate(" + (x - t[1]) + ",0)");
          t[0].style.visibility = (whole || (x >= X0 - 2 && x <= X1 + 2)) ? "" : "hidden";
        });
        if (p.axis) p.axis.style.display = whole ? "" : "none";
        while (p.ticks.firstChild) p.ticks.removeChild(p.ticks.firstChild);
        if (whole) return;
        var st = step(view[1] - view[0]);
        for (var v = Math.ceil(view[0] / st) * st; v <= view[1] + 1e-9 * st; v += st) {
          var x = toX(v);
          el("line", {x1: x, x2: x, y1: p.box[1], y2: p.box[3], stroke: "#b0b0b0", "stroke-opacity": 0.5,
                      "stroke-width": 0.8}, p.ticks);
          if (n === panels.length - 1) {
            el("line", {x1: x, x2: x, y1: p.box[3], y2: p.box[3] + 3.5, stroke: "#000", "stroke-width": 0.8},
               p.ticks);
            var t = el("text", {x: x, y: p.box[3] + 14, "text-anchor": "middle", "font-size": 10,
                                "font-family": "DejaVu Sans, sans-serif"}, p.ticks);
            t.textContent = label(v, st);
          }
        }
      });
      var st2 = step(view[1] - view[0]) / 10;
      readout.textContent = whole ? "" : "showing " + label(view[0], st2) + " … " + label(view[1], st2) +
        " of " + spec.label;
    }
    function set(a, b) {
      var span = lim[1] - lim[0], min = span / 2000;
      if (b - a < min) { var m = (a + b) / 2; a = m - min / 2; b = m + min / 2; }
      if (b - a > span) { a = lim[0]; b = lim[1]; }
      if (a < lim[0]) { b += lim[0] - a; a = lim[0]; }
      if (b > lim[1]) { a -= b - lim[1]; b = lim[1]; }
      view = [Math.max(a, lim[0]), Math.min(b, lim[1])];
      draw();
    }
    bar.addEventListener("click", function (ev) {
      var act = ev.target.getAttribute && ev.target.getAttribute("data-a"), w = view[1] - view[0];
      if (act === "out") set(view[0] - w / 2, view[1] + w / 2);
      else if (act === "left") set(view[0] - w / 2, view[1] - w / 2);
      else if (act === "right") set(view[0] + w / 2, view[1] + w / 2);
      else if (act === "all") set(lim[0], lim[1]);
    });

    var sel = null, start = 0;
    function svgX(ev) {
      var pt = svg.createSVGPoint();
      pt.x = ev.clientX; pt.y = ev.clientY;
      return pt.matrixTransform(svg.getScreenCTM().inverse()).x;
    }
    svg.addEventListener("mousedown", function (ev) {
      var x = svgX(ev);
      if (x < X0 || x > X1 || ev.button !== 0) return;
      ev.preventDefault();
      start = x;
      sel = el("rect", {x: x, y: boxes[0][1], width: 0, height: boxes[boxes.length - 1][3] - boxes[0][1],
                        fill: "#1f77b4", "fill-opacity": 0.15, stroke: "#1f77b4", "stroke-width": 0.6}, svg);
    });
    window.addEventListener("mousemove", function (ev) {
      if (!sel) return;
      var x = Math.min(Math.max(svgX(ev), X0), X1);
      sel.setAttribute("x", Math.min(x, start));
      sel.setAttribute("width", Math.abs(x - start));
    });
    window.addEventListener("mouseup", function (ev) {
      if (!sel) return;
      var x = Math.min(Math.max(svgX(ev), X0), X1);
      svg.removeChild(sel);
      sel = null;
      if (Math.abs(x - start) > 3) set(toV(Math.min(x, start)), toV(Math.max(x, start)));
    });
    svg.addEventListener("dblclick", function () { set(lim[0], lim[1]); });
    this.set = set;
  }

  var charts = document.querySelectorAll("div.zoom");
  for (var i = 0; i < charts.length; i++) new Chart(charts[i]);

  // <div class="alt">: figures of one thing drawn two ways; show one, with buttons to switch
  var alts = document.querySelectorAll("div.alt");
  for (var j = 0; j < alts.length; j++) (function (alt) {
    var views = alt.querySelectorAll(":scope > figure");
    var bar = document.createElement("div");
    bar.className = "altbar";
    alt.insertBefore(bar, views[0]);
    function show(n) {
      for (var k = 0; k < views.length; k++) {
        views[k].style.display = k === n ? "" : "none";
        bar.children[k].className = k === n ? "on" : "";
      }
    }
    for (var k = 0; k < views.length; k++) (function (k) {
      var b = document.createElement("button");
      b.type = "button";
      b.textContent = views[k].getAttribute("data-view");
      b.addEventListener("click", function () { show(k); });
      bar.appendChild(b);
    })(k);
    show(0);
  })(alts[j]);
})();
"""
