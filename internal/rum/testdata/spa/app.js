// The single-page app of the soft-navigation test: navigo (npm, served as its own UMD build)
// routes the links; each route renders a heading of its own (its LCP element) and a button
// whose click handler is busy 150 ms (its INP target). The about route shifts its content down
// a second after it renders (a notice inserted above it): a layout shift of that route alone.
(function () {
  "use strict";
  var app = document.getElementById("app");
  function busy(ms) {
    var end = performance.now() + ms;
    while (performance.now() < end) {}
  }
  function render(name, title, text) {
    app.innerHTML = "";
    var h = document.createElement("h1");
    h.id = "lcp-" + name;
    h.style.fontSize = "64px";
    h.textContent = title;
    var p = document.createElement("p");
    p.textContent = text;
    var b = document.createElement("button");
    b.id = "work-" + name;
    b.style.fontSize = "24px";
    b.textContent = "Work on " + name;
    b.addEventListener("click", function () {
      busy(150);
      p.textContent = text + " Done.";
    });
    app.appendChild(h);
    app.appendChild(p);
    app.appendChild(b);
  }
  var router = new Navigo("/");
  router
    .on("/", function () { render("home", "Welcome home", "The landing route, loaded with the document."); })
    .on("/products", function () { render("products", "All our products", "A list rendered by the router."); })
    .on("/product/:id", function (match) { render("product", "Product " + match.data.id, "One product, one route of a pattern."); })
    .on("/about", function () {
      render("about", "About this shop", "The last route of the visit.");
      setTimeout(function () {
        var notice = document.createElement("p");
        notice.id = "notice";
        notice.style.height = "120px";
        notice.style.margin = "0";
        notice.textContent = "Opening hours changed.";
        if (document.getElementById("lcp-about")) app.insertBefore(notice, app.firstChild);
      }, 1000);
    })
    .resolve();
})();
