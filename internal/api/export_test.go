package api

// RoutesJSON exposes the generated routes.json to the package's external tests.
var RoutesJSON = routesJSON
