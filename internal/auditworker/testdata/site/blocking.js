// A long task of about 300 ms while the page loads: it shows up in TBT and CPU time.
(function () {
  var start = performance.now();
  while (performance.now() - start < 300) {}
})();
