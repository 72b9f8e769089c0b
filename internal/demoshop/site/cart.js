// Fernwood Tools' cart: the buy button opens the cart, drawn the slow way (a long task the
// click waits for), and the delivery offer, decided after the page, goes above the content and
// pushes it down.
(function () {
  "use strict";
  var main = document.querySelector("main");
  var buy = main && main.querySelector("button");
  if (buy) {
    buy.addEventListener("click", function openCart() {
      var end = performance.now() + 150;
      while (performance.now() < end) {}
      buy.textContent = "In your cart";
    });
  }
  setTimeout(function showOffer() {
    var offer = document.createElement("p");
    offer.className = "offer";
    offer.textContent = "Free delivery on orders over €50";
    main.insertBefore(offer, main.firstChild);
  }, 300);
})();
