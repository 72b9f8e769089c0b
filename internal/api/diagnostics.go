package api

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/openvitals/openvitals/internal/model"
)

// labResultOn answers the page's lab result on the device on the day the query parameter date
// names (yyyy-MM-dd or yyyyMMdd), the latest without one: a 404 problem when there is none.
func (s *Server) labResultOn(r *http.Request, site model.Website, pageID, device string) (model.LabResult, error) {
	q := r.URL.Query().Get("date")
	if q == "" {
		latest, ok, err := s.metrics.LatestResult(r.Context(), site, pageID, device)
		if err != nil {
			return model.LabResult{}, err
		}
		if !ok {
			return model.LabResult{}, newProblem(http.StatusNotFound, "no audit of this page on "+device+" yet")
		}
		return latest, nil
	}
	day := strings.ReplaceAll(q, "-", "")
	if _, err := time.Parse(model.DayLayout, day); err != nil {
		return model.LabResult{}, badRequest("date must be a day, yyyy-MM-dd", model.FieldError{Field: "date", Message: "must be yyyy-MM-dd"})
	}
	rs, err := s.store.LabResults(r.Context(), site, pageID, device, day, day)
	if err != nil {
		return model.LabResult{}, err
	}
	if len(rs) == 0 {
		return model.LabResult{}, newProblem(http.StatusNotFound, "no audit of this page on "+device+" on "+q)
	}
	return rs[0], nil
}

// diagnosedResult is the lab result a diagnostics request names, with a report kept.
func (s *Server) diagnosedResult(r *http.Request, c caller) (model.Website, model.Page, model.LabResult, error) {
	site, p, device, err := s.pageAndDevice(r, c)
	if err != nil {
		return site, p, model.LabResult{}, err
	}
	res, err := s.labResultOn(r, site, p.ID, device)
	if err != nil {
		return site, p, res, err
	}
	if res.ReportKey == "" {
		return site, p, res, errNoDiagnostics
	}
	return site, p, res, nil
}

// errNoDiagnostics answers an audit that kept none (audits before diagnostics were kept).
var errNoDiagnostics = newProblem(http.StatusNotFound, "no diagnostics were kept for this audit (audits before diagnostics kept the report only)")

// errNoHAR is an audit without a HAR served: made before diagnostics, or before the HAR's
// credentials were redacted (those HARs are not served; see docs/profiles.md).
var errNoHAR = newProblem(http.StatusNotFound, "no HAR is served for this audit (audits before diagnostics kept none, and HARs stored before credentials were redacted are not served)")

// pageDiagnostics answers the diagnostics of the median run of a day's audit of a page, each
// image with the URL that serves it.
func (s *Server) pageDiagnostics(w http.ResponseWriter, r *http.Request, c caller) error {
	site, p, res, err := s.diagnosedResult(r, c)
	if err != nil {
		return err
	}
	d, err := s.artifacts.Diagnostics(r.Context(), res.ReportKey)
	if isNotFound(err) {
		return errNoDiagnostics
	}
	if err != nil {
		return err
	}
	d.EmptyListsNotNull()
	// Kept for regressions' causes; the interface's diagnostics do not list them.
	d.Scripts = nil
	date := model.DayToISO(res.Day)
	query := "?" + url.Values{"device": {res.Device}, "date": {date}}.Encode()
	images := "/" + site.ID + "/pages/" + p.ID + "/diagnostics/images/"
	for i := range d.Filmstrip {
		d.Filmstrip[i].URL = images + d.Filmstrip[i].Image + query
	}
	if d.FinalScreenshot != nil {
		d.FinalScreenshot.URL = images + d.FinalScreenshot.Image + query
	}
	return writeJSON(w, http.StatusOK, map[string]any{
		"date": date, "device": res.Device, "method": model.MethodOr(res.Method, ""),
		"har": "/" + site.ID + "/pages/" + p.ID + "/diagnostics/har" + query, "diagnostics": *d,
	})
}

// diagnosticsImage serves one filmstrip frame or final screenshot of a day's diagnostics.
func (s *Server) diagnosticsImage(w http.ResponseWriter, r *http.Request, c caller) error {
	name := r.PathValue("name")
	_, _, res, err := s.diagnosedResult(r, c)
	if err != nil {
		return err
	}
	img, err := s.artifacts.Image(r.Context(), res.ReportKey, name)
	if isNotFound(err) {
		return newProblem(http.StatusNotFound, "no image "+name+" in these diagnostics")
	}
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", img.ContentType)
	// Named by their content: an image never changes under its name.
	h.Set("Cache-Control", "private, max-age=86400, immutable")
	_, _ = w.Write(img.Data)
	return nil
}

// diagnosticsHAR serves the HAR 1.2 of the median run of a day's audit.
func (s *Server) diagnosticsHAR(w http.ResponseWriter, r *http.Request, c caller) error {
	_, p, res, err := s.diagnosedResult(r, c)
	if err != nil {
		return err
	}
	har, err := s.artifacts.HAR(r.Context(), res.ReportKey)
	if isNotFound(err) {
		return errNoHAR
	}
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-%s-%s.har"`, p.ID, res.Device, res.Day))
	return writeDocument(w, r, har)
}
