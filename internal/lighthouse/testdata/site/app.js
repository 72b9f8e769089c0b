// Render-blocking script of the fixture page. After the page has painted, it inserts a banner
// above the content, which shifts everything below it (a layout shift Lighthouse reports as CLS).
window.addEventListener('load', function () {
  setTimeout(function () {
    var banner = document.createElement('div');
    banner.className = 'banner';
    banner.textContent = 'Late banner: free shipping today';
    document.body.insertBefore(banner, document.body.firstChild);
  }, 200);
});
