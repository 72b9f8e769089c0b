// openvitals real-user monitoring: one beacon per page view, sent when the page is first hidden
// (tab switch, navigation, close) with the values web-vitals has final by then.
// Custom variables (numbers >= 0, names [a-z][a-z0-9_]{0,31}):
//   (window.openvitals = window.openvitals || []).push(["set", "cart_items", 3]);
(function (site) {
  "use strict";
  var wv = window.webVitals;
  var script = document.currentScript;
  if (!wv || !script || !window.JSON) return;
  var endpoint = new URL("../collect", script.src).href;
  var metrics = {};
  var custom = {};
  var sent = false;

  function record(m) { metrics[m.name.toLowerCase()] = m.value; }
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
    var m = timings();
    for (var k in metrics) put(m, k, metrics[k]);
    var body = JSON.stringify({ w: site, u: location.href, m: m, c: custom });
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
})(__OPENVITALS_SITE__);
