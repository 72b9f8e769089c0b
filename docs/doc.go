// Package docs holds the repository's documentation pages; its tests keep them true to the
// code: the architecture diagram names every function and queue, every relative link leads
// somewhere, every environment variable the code reads is documented, and the API reference
// is the one the OpenAPI document makes.
package docs
