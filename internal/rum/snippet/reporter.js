// openvitals real-user monitoring: one beacon per page view, sent when the page is first hidden
// (tab switch, navigation, close) with the values web-vitals has final by then and why they
// were what they were (its attribution build: the LCP element and phases, the slowest
// interaction's target, phases and longest scripts, the element the largest shift moved).
// A page restored from the back/forward cache is a new view with its own beacon.
// Custom variables (numbers >= 0, names [a-z][a-z0-9_]{0,31}):
//   (window.openvitals = window.openvitals || []).push(["set", "cart_items", 3]);
(function (site, rate, labMark) {
  "use strict";
  var wv = window.webVitals;
  var script = document.currentScript;
  if (!wv || !script || !window.JSON) return;
  // openvitals' own lab browsers (audits, multistep runs) are not real users.
  if (navigator.userAgent.indexOf(labMark) >= 0) return;
  // Sampling: a view the sample leaves out measures nothing and sends nothing; the views sent
  // are weighted by 1/rate where they are counted.
  if (rate < 1 && Math.random() >= rate) return;
  var endpoint = new URL("../collect", script.src).href;
  var metrics = {};
  var attribution = {};
  var custom = {};
  var navigation = "";
  var restored = false;
  var sent = false;

  // A URL without its query and fragment: they may hold personal data and are never sent.
  function bare(u) { return typeof u === "string" ? u.split(/[?#]/)[0] : undefined; }
  function ms(x) { return typeof x === "number" && isFinite(x) && x >= 0 ? Math.round(x * 1000) / 1000 : 0; }

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
    var name = m.name.toLowerCase();
    metrics[name] = m.value;
    if (!navigation && m.navigationType) navigation = m.navigationType;
    var a = m.attribution;
    if (!a) return;
    if (name === "lcp") {
      attribution.lcp = { e: a.target, u: bare(a.url),
        p: [ms(a.timeToFirstByte), ms(a.resourceLoadDelay), ms(a.resourceLoadDuration), ms(a.elementRenderDelay)] };
    } else if (name === "inp") {
      attribution.inp = { e: a.interactionTarget, t: a.interactionType,
        p: [ms(a.inputDelay), ms(a.processingDuration), ms(a.presentationDelay)], s: scripts(a.longAnimationFrameEntries) };
    } else if (name === "cls") {
      attribution.cls = { e: a.largestShiftTarget, t: ms(a.largestShiftTime) };
    }
  }
  wv.onLCP(record);
  wv.onFCP(record);
  wv.onINP(record);
  wv.onCLS(record);
  wv.onTTFB(record);

  function setVar(name, value) {
    if (typeof name === "string" && typeof value === "number" && isFinite(value)) custom[name] = value;
  }
  var queued = window.openvitals;
  window.openvitals = { push: function (cmd) { if (cmd && cmd[0] === "set") setVar(cmd[1], cmd[2]); } };
  if (queued && queued.length) for (var i = 0; i < queued.length; i++) window.openvitals.push(queued[i]);

  function put(out, name, value) {
    if (typeof value === "number" && isFinite(value) && value >= 0) out[name] = Math.round(value * 1000) / 1000;
  }

  // Navigation Timing, as the spec's timing metrics.
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
      if (nav.loadEventEnd > 0) put(out, "fully_loaded_time", nav.loadEventEnd - nav.startTime);
      if (nav.transferSize > 0) put(out, "transfer_size", nav.transferSize);
    }
    var paints = perf && perf.getEntriesByType ? perf.getEntriesByType("paint") : [];
    for (var j = 0; j < paints.length; j++) {
      if (paints[j].name === "first-paint") put(out, "fp", paints[j].startTime);
    }
    var root = document.documentElement;
    if (root) {
      put(out, "dom_size", root.outerHTML.length);
      put(out, "dom_elements", document.getElementsByTagName("*").length);
    }
    return out;
  }

  function send() {
    if (sent) return;
    sent = true;
    // A restored page's navigation timing is the first load's: only web-vitals' own values.
    var m = restored ? {} : timings();
    for (var k in metrics) put(m, k, metrics[k]);
    var conn = navigator.connection;
    var hints = { n: navigation, e: conn && conn.effectiveType, t: navigator.maxTouchPoints > 1 ? 1 : 0, d: navigator.webdriver ? 1 : 0 };
    var body = JSON.stringify({ w: site, u: location.href, m: m, c: custom, s: hints, a: attribution });
    try {
      if (navigator.sendBeacon && navigator.sendBeacon(endpoint, body)) return;
    } catch (e) { /* fall through */ }
    try {
      fetch(endpoint, { method: "POST", body: body, keepalive: true, mode: "no-cors", credentials: "omit" });
    } catch (e) { /* nothing more to do */ }
  }

  // On window in the bubbling phase: web-vitals reports its final values from window listeners
  // in the capturing phase of the same event, which run first. Not on pagehide: leaving a page
  // fires it before visibilitychange, that is before web-vitals has reported.
  addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") send();
  });
  // Back from the back/forward cache: a new view, whose values web-vitals reports anew.
  addEventListener("pageshow", function (e) {
    if (!e.persisted) return;
    metrics = {};
    attribution = {};
    navigation = "back-forward-cache";
    restored = true;
    sent = false;
  });
})(__OPENVITALS_SITE__, __OPENVITALS_RATE__, __OPENVITALS_LAB__);
