// Render-blocking script of the layout-shift fixture page: it loads a second script (a request
// chain), and once the page has painted, inserts a tall banner above the content, which moves
// everything below it down (a layout shift Lighthouse reports, with its culprit).
(function () {
  var s = document.createElement('script');
  s.src = '/shift-late.js';
  document.head.appendChild(s);
}());
