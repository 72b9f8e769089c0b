package api

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/model"
)

// reportLinkTTL is how long a report link opens its report: long enough to load it, short
// enough that a link copied out of a page is of little use.
const reportLinkTTL = 10 * time.Minute

// reportCSP confines a Lighthouse HTML report: a sandbox of its own (an opaque origin, so its
// scripts reach neither the dashboard nor the API key), its inline viewer and data images only.
const reportCSP = "sandbox allow-scripts allow-popups allow-popups-to-escape-sandbox; default-src 'none'; " +
	"script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:; frame-ancestors 'self'"

// createReportLink answers a short-lived link to Lighthouse's HTML report of a page on a device
// on a day (query date yyyy-MM-dd or yyyyMMdd; the latest audit without it).
func (s *Server) createReportLink(w http.ResponseWriter, r *http.Request, c caller) error {
	site, p, device, err := s.pageAndDevice(r, c)
	if err != nil {
		return err
	}
	res, err := s.labResultOn(r, site, p.ID, device)
	if err != nil {
		return err
	}
	if res.ReportKey == "" {
		return newProblem(http.StatusNotFound, "this audit kept no report")
	}
	var raw [24]byte
	_, _ = rand.Read(raw[:]) // crypto/rand never fails on Linux
	token := base64.RawURLEncoding.EncodeToString(raw[:])
	expires := time.Now().Add(reportLinkTTL).UTC()
	link := model.ReportLink{Account: site.Account, Website: site.ID, Page: p.ID, Key: artifact.HTMLKey(res.ReportKey), Expires: expires}
	if err := s.store.PutReportLink(r.Context(), tokenHash(token), link); err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, map[string]any{
		"url":       "/" + site.ID + "/lighthouse-report?token=" + token,
		"date":      model.DayToISO(res.Day),
		"device":    device,
		"expiresAt": expires,
	})
}

func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// errReportLink answers every link that opens nothing, whatever the reason, alike.
var errReportLink = newProblem(http.StatusNotFound, "this report link is unknown or expired: open the report again from the dashboard")

// lighthouseReport serves the HTML report a report link names, to whoever holds the link.
func (s *Server) lighthouseReport(w http.ResponseWriter, r *http.Request, _ caller) error {
	link, err := s.openReportLink(r.Context(), r.URL.Query().Get("token"), r.PathValue("websiteID"))
	if err != nil {
		return err
	}
	html, err := s.artifacts.HTML(r.Context(), link.Key)
	if isNotFound(err) {
		return newProblem(http.StatusNotFound, "no HTML report was kept for this audit (audits before the dashboard kept the JSON report only)")
	}
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", reportCSP)
	h.Set("Cache-Control", "private, no-store")
	h.Set("Referrer-Policy", "no-referrer")
	return writeDocument(w, r, html)
}

// openReportLink returns the report link of a token on the website of the path: unexpired, its
// website's, and of a website and page that still exist (their reports outlive them until the
// purge removes them). Any other token is errReportLink.
func (s *Server) openReportLink(ctx context.Context, token, websiteID string) (model.ReportLink, error) {
	if len(token) < 16 || len(token) > 64 {
		return model.ReportLink{}, errReportLink
	}
	link, err := s.store.ReportLinkByHash(ctx, tokenHash(token))
	if err == nil && link.Website != websiteID {
		return model.ReportLink{}, errReportLink
	}
	if err == nil {
		var site model.Website
		site, err = s.store.Website(ctx, link.Account, link.Website)
		if err == nil && link.Page != "" {
			_, err = s.store.Page(ctx, site, link.Page)
		}
	}
	switch {
	case isNotFound(err):
		return model.ReportLink{}, errReportLink
	case err != nil:
		return model.ReportLink{}, err
	}
	return link, nil
}

// writeDocument writes a stored document (a report, a HAR) as stored, gzipped, to a client
// that accepts gzip, which keeps a large one under a Lambda response's 6 MB, else
// decompressed.
func writeDocument(w http.ResponseWriter, r *http.Request, doc artifact.Document) error {
	w.Header().Add("Vary", "Accept-Encoding")
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(doc.Gzipped())
		return nil
	}
	plain, err := doc.Plain()
	if err != nil {
		return err
	}
	_, _ = w.Write(plain)
	return nil
}
