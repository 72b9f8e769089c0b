// A script from a second host, counted as third-party bytes.
window.widgetLoaded = true;
