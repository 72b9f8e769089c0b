// Stands in for a tag manager: served slowly from a second host, and busy for a while.
(function () {
  var end = Date.now() + 120;
  while (Date.now() < end) { /* busy */ }
  window.dataLayer = window.dataLayer || [];
})();
