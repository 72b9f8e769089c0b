// Loaded by shift.js: inserts the banner after load.
window.addEventListener('load', function () {
  setTimeout(function () {
    var banner = document.createElement('div');
    banner.className = 'banner';
    banner.textContent = 'Late banner: free shipping today';
    document.body.insertBefore(banner, document.body.firstChild);
  }, 300);
});
