// Keeps the main thread busy for 300 ms in one task, after the page has painted.
window.addEventListener('load', function () {
  setTimeout(function busy() {
    var end = Date.now() + 300;
    var n = 0;
    while (Date.now() < end) { n++; }
    document.body.dataset.n = String(n);
  }, 50);
});
