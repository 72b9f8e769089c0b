// openvitals real-user monitoring. Each page view is a view of its own: the hard load, each
// soft navigation of a single-page app (web-vitals' reportSoftNavs, where the browser has
// soft-navigation entries: Chromium 151+), and each return from the back/forward cache. A
// page lifecycle's views go in one beacon when the page is hidden (tab switch, navigation,
// close), split in several only past the collect endpoint's size, each view with an ID made
// here so that a beacon sent twice counts once. Each view carries the values web-vitals has
// final by then and why they were what they were (its attribution build: the LCP element and
// phases, the slowest interaction's target, phases and longest scripts, the element the largest
// shift moved), a soft navigation the interaction that started it (its target and type), and a
// back or forward navigation the cache did not restore its reasons.
// Custom variables (numbers >= 0, names [a-z][a-z0-9_]{0,31}):
//   (window.openvitals = window.openvitals || []).push(["set", "cart_items", 3]);
(function (site, rate, labMark) {
  "use strict";
  var wv = window.webVitals;
  var script = document.currentScript;
  if (!wv || !script || !window.JSON) return;
  // openvitals' own lab browsers (audits, multistep runs) are not real users.
  if (navigator.userAgent.indexOf(labMark) >= 0) return;
  // Sampling: a lifecycle the sample leaves out measures nothing and sends nothing; the views
  // sent are weighted by 1/rate where they are counted.
  if (rate < 1 && Math.random() >= rate) return;
  var endpoint = new URL("../collect", script.src).href;
  // The collect endpoint reads beacons up to 16 KB and 32 views.
  var maxBytes = 15000;
  var maxViews = 32;
  var landing = location.href;
  var custom = {};
  var views = [];
  var byKey = {};
  // Restores from the back/forward cache so far: each starts views of its own.
  var restores = 0;

  // A URL without its query and fragment: they may hold personal data and are never sent.
  function bare(u) { return typeof u === "string" ? u.split(/[?#]/)[0] : undefined; }
  function ms(x) { return typeof x === "number" && isFinite(x) && x >= 0 ? Math.round(x * 1000) / 1000 : 0; }

  // A view ID: the Unix second (4 bytes) and 8 random bytes, in hex.
  function newID() {
    var b = new Uint8Array(8);
    if (window.crypto && crypto.getRandomValues) crypto.getRandomValues(b);
    else for (var i = 0; i < 8; i++) b[i] = Math.floor(Math.random() * 256);
    var s = ("0000000" + (Math.floor(Date.now() / 1000) >>> 0).toString(16)).slice(-8);
    for (var j = 0; j < 8; j++) s += (b[j] < 16 ? "0" : "") + b[j].toString(16);
    return s;
  }

  // The reasons the back/forward cache gave for not restoring this document (Chrome 123+):
  // the frame's own and its children's, "masked" (reasons hidden from the page) last, at most
  // three.
  function notRestored(nrr, out) {
    if (!nrr) return out;
    var rs = nrr.reasons || [];
    for (var i = 0; i < rs.length; i++) {
      var r = rs[i] && (typeof rs[i] === "string" ? rs[i] : rs[i].reason);
      if (typeof r === "string" && out.indexOf(r) < 0) out.push(r);
    }
    var cs = nrr.children || [];
    for (var j = 0; j < cs.length; j++) notRestored(cs[j], out);
    return out;
  }
  function topReasons(all) {
    var out = [];
    for (var i = 0; i < all.length; i++) if (all[i] !== "masked") out.push(all[i]);
    if (all.indexOf("masked") >= 0) out.push("masked");
    return out.slice(0, 3);
  }

  // Chromium sometimes gives an interaction's pointer entries no target, and web-vitals then
  // none either: the targets of the last input events, by time, stand in. The selector is
  // written as web-vitals writes its own. They also name the interaction that started a soft
  // navigation, whose start is its click's or key's time.
  var inputs = [];
  function remember(e) {
    inputs.push({ t: e.timeStamp, el: e.target, k: e.type === "keydown" ? "keyboard" : "pointer" });
    if (inputs.length > 8) inputs.shift();
  }
  addEventListener("pointerdown", remember, true);
  addEventListener("keydown", remember, true);
  addEventListener("click", remember, true);
  function selector(node) {
    var sel = "";
    try {
      while (node && node.nodeType === 1) {
        var part = node.id ? "#" + node.id : [node.nodeName.toLowerCase()].concat(Array.prototype.slice.call(node.classList).sort()).join(".");
        if (sel.length + part.length > 99) return sel || part;
        sel = sel ? part + ">" + sel : part;
        if (node.id) break;
        node = node.parentNode;
      }
    } catch (e) { /* a node gone */ }
    return sel;
  }
  function inputAt(time) {
    var best = null;
    for (var i = 0; i < inputs.length; i++) {
      var d = Math.abs(inputs[i].t - time);
      if (d <= 50 && (!best || d < best.d)) best = { d: d, input: inputs[i] };
    }
    return best && best.input;
  }
  function inputTarget(time) {
    var input = inputAt(time);
    return input ? selector(input.el) : undefined;
  }

  // The view a metric belongs to: its soft navigation's, or the hard load's (or restore's).
  function viewOf(m) {
    var soft = m.navigationType === "soft-navigation";
    var key = restores + (soft ? ":s" + m.navigationId : ":h");
    var v = byKey[key];
    if (v) return v;
    // A restored page is at the route it was left on, not the one its document loaded.
    v = { i: newID(), u: restores > 0 && !soft ? location.href : m.navigationURL || landing, n: soft ? "soft" : m.navigationType || "",
      soft: soft, first: !soft && restores === 0, m: {}, a: {}, sent: false };
    if (v.first && v.n === "back-forward") {
      var perf = window.performance;
      var nav = perf && perf.getEntriesByType && perf.getEntriesByType("navigation")[0];
      v.b = topReasons(notRestored(nav && nav.notRestoredReasons, []));
    }
    if (soft) {
      var start = inputAt(m.navigationStartTime);
      if (start) v.a.nav = { e: selector(start.el), t: start.k };
    }
    byKey[key] = v;
    views.push(v);
    return v;
  }

  // The longest scripts of the interaction's long animation frames (where the browser has the
  // Long Animation Frames API), merged by URL and function, longest first.
  function scripts(frames) {
    var byKey = {};
    var list = [];
    for (var i = 0; frames && i < frames.length; i++) {
      var ss = frames[i].scripts || [];
      for (var j = 0; j < ss.length; j++) {
        var u = bare(ss[j].sourceURL) || "";
        var f = ss[j].sourceFunctionName || "";
        var k = u + "\n" + f;
        if (!byKey[k]) { byKey[k] = { u: u, f: f, d: 0 }; list.push(byKey[k]); }
        byKey[k].d += ss[j].duration || 0;
      }
    }
    list.sort(function (a, b) { return b.d - a.d; });
    list = list.slice(0, 3);
    for (var n = 0; n < list.length; n++) list[n].d = ms(list[n].d);
    return list;
  }

  function record(m) {
    var v = viewOf(m);
    // A view sent is final: a later value (the page shown and hidden again) is not sent.
    if (v.sent) return;
    var name = m.name.toLowerCase();
    // A soft navigation makes no request of its own: web-vitals reports its TTFB as 0.
    if (v.soft && name === "ttfb") return;
    v.m[name] = m.value;
    var a = m.attribution;
    if (!a) return;
    if (name === "lcp") {
      v.a.lcp = { e: a.target, u: bare(a.url),
        p: [ms(a.timeToFirstByte), ms(a.resourceLoadDelay), ms(a.resourceLoadDuration), ms(a.elementRenderDelay)] };
    } else if (name === "inp") {
      v.a.inp = { e: a.interactionTarget || inputTarget(a.interactionTime), t: a.interactionType,
        p: [ms(a.inputDelay), ms(a.processingDuration), ms(a.presentationDelay)], s: scripts(a.longAnimationFrameEntries) };
    } else if (name === "cls") {
      v.a.cls = { e: a.largestShiftTarget, t: ms(a.largestShiftTime) };
    }
  }
  var opts = { reportSoftNavs: true };
  wv.onLCP(record, opts);
  wv.onFCP(record, opts);
  wv.onINP(record, opts);
  wv.onCLS(record, opts);
  wv.onTTFB(record, opts);

  function setVar(name, value) {
    if (typeof name === "string" && typeof value === "number" && isFinite(value)) custom[name] = value;
  }
  var queued = window.openvitals;
  window.openvitals = { push: function (cmd) { if (cmd && cmd[0] === "set") setVar(cmd[1], cmd[2]); } };
  if (queued && queued.length) for (var i = 0; i < queued.length; i++) window.openvitals.push(queued[i]);

  function put(out, name, value) {
    if (typeof value === "number" && isFinite(value) && value >= 0) out[name] = Math.round(value * 1000) / 1000;
  }

  // Navigation Timing, as the spec's timing metrics: the hard load's only.
  function timings() {
    var out = {};
    var perf = window.performance;
    var nav = perf && perf.getEntriesByType && perf.getEntriesByType("navigation")[0];
    if (nav) {
      put(out, "dns_time", nav.domainLookupEnd - nav.domainLookupStart);
      put(out, "connect_time", nav.connectEnd - nav.connectStart);
      if (nav.responseStart > 0) put(out, "server_time", nav.responseStart - nav.requestStart);
      if (nav.responseEnd > 0) put(out, "transfer_time", nav.responseEnd - nav.responseStart);
      if (nav.domComplete > 0) put(out, "dom_time", nav.domComplete - nav.responseEnd);
      // A prerendered page's times count from its activation, as web-vitals' do.
      var activation = nav.activationStart || 0;
      if (nav.loadEventEnd > 0) put(out, "fully_loaded_time", Math.max(nav.loadEventEnd - Math.max(nav.startTime, activation), 0));
      if (nav.transferSize > 0) put(out, "transfer_size", nav.transferSize);
    }
    var paints = perf && perf.getEntriesByType ? perf.getEntriesByType("paint") : [];
    for (var j = 0; j < paints.length; j++) {
      if (paints[j].name === "first-paint") put(out, "fp", Math.max(paints[j].startTime - (nav && nav.activationStart || 0), 0));
    }
    var root = document.documentElement;
    if (root) {
      put(out, "dom_size", root.outerHTML.length);
      put(out, "dom_elements", document.getElementsByTagName("*").length);
    }
    return out;
  }

  function size(s) {
    return window.TextEncoder ? new TextEncoder().encode(s).length : s.length * 3;
  }
  function body(list) { return JSON.stringify({ w: site, c: custom, v: list }); }
  function post(data) {
    try {
      if (navigator.sendBeacon && navigator.sendBeacon(endpoint, data)) return;
    } catch (e) { /* fall through */ }
    // Refused (the browser's beacon quota) or missing: fetch with keepalive sends it again;
    // should both arrive, the views' IDs count them once.
    try {
      fetch(endpoint, { method: "POST", body: data, keepalive: true, mode: "no-cors", credentials: "omit" });
    } catch (e) { /* nothing more to do */ }
  }

  // Sends the views not sent yet, in as few beacons as the size allows.
  function send() {
    var conn = navigator.connection;
    var chunk = [];
    for (var i = 0; i < views.length; i++) {
      var v = views[i];
      if (v.sent) continue;
      v.sent = true;
      var m = v.first ? timings() : {};
      for (var k in v.m) put(m, k, v.m[k]);
      var hints = { n: v.n, e: conn && conn.effectiveType, t: navigator.maxTouchPoints > 1 ? 1 : 0, d: navigator.webdriver ? 1 : 0 };
      if (v.b && v.b.length) hints.b = v.b;
      var out = { i: v.i, u: v.u, m: m, s: hints, a: v.a };
      // A view too large alone goes without its attribution.
      if (size(body([out])) > maxBytes) out.a = {};
      if (chunk.length && (chunk.length === maxViews || size(body(chunk.concat([out]))) > maxBytes)) {
        post(body(chunk));
        chunk = [];
      }
      chunk.push(out);
    }
    if (chunk.length) post(body(chunk));
  }

  // On window in the bubbling phase: web-vitals reports its final values from window listeners
  // in the capturing phase of the same event, which run first. Not on pagehide: leaving a page
  // fires it before visibilitychange, that is before web-vitals has reported.
  addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") send();
  });
  // Back from the back/forward cache: new views, whose values web-vitals reports anew.
  addEventListener("pageshow", function (e) {
    if (e.persisted) restores++;
  });
})(__OPENVITALS_SITE__, __OPENVITALS_RATE__, __OPENVITALS_LAB__);
