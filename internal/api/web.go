package api

import (
	"errors"
	"net/http"

	"github.com/openvitals/openvitals/internal/web"
)

// serveDashboard serves the dashboard's page and files.
func (s *Server) serveDashboard(w http.ResponseWriter, r *http.Request, _ caller) error {
	err := web.Serve(w, r, acceptsGzip(r.Header.Get("Accept-Encoding")), s.rumURL)
	if errors.Is(err, web.ErrNotFound) {
		return newProblem(http.StatusNotFound, "no such file of the dashboard")
	}
	return err
}
