// Render-blocking script of the layout-shift fixture page: it loads a second script, which
// inserts a tall banner above the content after load, moving everything below it down (a
// layout shift Lighthouse reports).
(function () {
  var s = document.createElement('script');
  s.src = '/shift-late.js';
  document.head.appendChild(s);
}());
