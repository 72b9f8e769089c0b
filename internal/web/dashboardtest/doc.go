// Package dashboardtest holds the dashboard's browser tests: each starts the local service
// (internal/local, through internal/testing/localtest), as make run or make demo does, and
// drives the dashboard in real Chromium over it, checking what a person reads against the API's
// answers and writing the views' screenshots (make screenshots); its benchmarks measure the
// dashboard's first render and have openvitals audit its own views (make bench-dashboard). They
// take minutes and need Chromium and Lighthouse, so they live apart from internal/web's quick
// tests.
package dashboardtest
