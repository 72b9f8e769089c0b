package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/quota"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/store"
)

// Beacons queues validated page views for the RUM aggregator.
type Beacons interface {
	Add(ctx context.Context, account, website string, views ...rum.View) error
}

// snippet serves /rum/{website-id}.js.
func (s *Server) snippet(w http.ResponseWriter, r *http.Request, _ caller) error {
	id, ok := strings.CutSuffix(r.PathValue("file"), ".js")
	if !ok || !plausibleID(id) {
		return newProblem(http.StatusNotFound, "no such script")
	}
	site, err := s.sites.get(r.Context(), id)
	if err != nil {
		if isNotFound(err) {
			return newProblem(http.StatusNotFound, "no such script")
		}
		return err
	}
	body := rum.Snippet(id, site.Settings)
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:12]) + `"`
	h := w.Header()
	h.Set("Content-Type", "text/javascript; charset=utf-8")
	h.Set("Cache-Control", "public, max-age=3600")
	h.Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	_, _ = w.Write(body)
	return nil
}

// collectPreflight answers CORS preflights; sendBeacon's text/plain needs none, but a fetch
// with application/json does.
func (s *Server) collectPreflight(w http.ResponseWriter, _ *http.Request, _ caller) error {
	h := w.Header()
	h.Set("Access-Control-Allow-Methods", "POST")
	h.Set("Access-Control-Allow-Headers", "Content-Type")
	h.Set("Access-Control-Max-Age", "86400")
	w.WriteHeader(http.StatusNoContent)
	return nil
}

var (
	errBadBeacon     = badRequest("the beacon is not valid")
	errUnknownSite   = newProblem(http.StatusNotFound, "no such website")
	errOffDomain     = invalid(model.FieldError{Field: "u", Message: "the page is not on the website's domain"})
	errBeaconTooBig  = newProblem(http.StatusRequestEntityTooLarge, "the beacon is larger than 16 KB")
	errBeaconType    = newProblem(http.StatusUnsupportedMediaType, "a beacon is text/plain or application/json")
	errNoBeaconValue = invalid(model.FieldError{Field: "m", Message: "no metric"})
)

// collect takes one beacon: it checks the website, makes the page view (page key, monitored
// pages, segments, attribution, weight; rum.Site.View) and queues it. 202 once queued; 204 for
// a lab agent's page load, which is not counted.
func (s *Server) collect(w http.ResponseWriter, r *http.Request, _ caller) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "text/plain" && mt != "application/json") {
			return errBeaconType
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, rum.MaxBeaconBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return errBeaconTooBig
		}
		return errBadBeacon
	}
	beacons, err := rum.ParseBeacons(body)
	if err != nil || !plausibleID(beacons[0].Website) {
		return errBadBeacon
	}
	site, err := s.sites.get(r.Context(), beacons[0].Website)
	if err != nil {
		if isNotFound(err) {
			return errUnknownSite
		}
		return err
	}
	req := rum.Request{UserAgent: r.Header.Get("User-Agent"), Day: s.now().Format("20060102"),
		Country: rum.ViewerCountry(r.Header.Get("CloudFront-Viewer-Country"), s.trustViewerCountry)}
	if req.Country == "" {
		req.IP = clientIP(r.RemoteAddr)
	}
	// A lifecycle's views are counted each on its own: one off the domain or without any
	// metric (a soft navigation left before it painted) is left out; the beacon answers as
	// its first view when none is left.
	views := make([]rum.View, 0, len(beacons))
	var first error
	for _, b := range beacons {
		v, err := site.View(b, req)
		if err == nil {
			views = append(views, v)
		} else if first == nil {
			first = err
		}
	}
	if len(views) == 0 {
		switch {
		case errors.Is(first, rum.ErrLabView):
			w.WriteHeader(http.StatusNoContent)
			return nil
		case errors.Is(first, rum.ErrOffDomain):
			return errOffDomain
		case errors.Is(first, rum.ErrNoMetric):
			return errNoBeaconValue
		default:
			return errBadBeacon
		}
	}
	if err := s.gate.check(r.Context(), site.Website); err != nil {
		return err
	}
	if err := s.beacons.Add(r.Context(), site.Account, site.ID, views...); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

// clientIP is the address of the request's peer: API Gateway's source IP (the adapter puts it
// in RemoteAddr), or the TCP peer locally. X-Forwarded-For is not read: a client writes it.
func clientIP(remoteAddr string) string {
	if h, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return h
	}
	return remoteAddr
}

// plausibleID refuses what cannot be a website ID before any lookup.
func plausibleID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// siteCache remembers websites by ID for a minute, known and unknown, with their RUM settings
// and monitored pages (rum.Site), so that a busy site's beacons do not each cost reads. A
// deleted website may take beacons for that minute, and changed settings or pages apply
// within it; the aggregator checks the website again before it stores anything.
type siteCache struct {
	store *store.Store
	now   func() time.Time

	mu      sync.Mutex
	entries map[string]siteEntry
}

type siteEntry struct {
	site    *rum.Site
	err     error
	expires time.Time
}

const (
	siteCacheTTL = time.Minute
	siteCacheMax = 10000
)

func (c *siteCache) get(ctx context.Context, id string) (*rum.Site, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[id]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.site, e.err
	}
	site, err := c.load(ctx, id)
	if err != nil && !isNotFound(err) {
		return site, err // not cached: a failed read says nothing about the website
	}
	c.mu.Lock()
	if len(c.entries) >= siteCacheMax {
		clear(c.entries)
	}
	c.entries[id] = siteEntry{site: site, err: err, expires: now.Add(siteCacheTTL)}
	c.mu.Unlock()
	return site, err
}

// load reads a website by ID, its RUM settings and its monitored pages.
func (c *siteCache) load(ctx context.Context, id string) (*rum.Site, error) {
	w, err := c.store.WebsiteByID(ctx, id)
	if err != nil {
		return nil, err
	}
	set, err := c.store.RUMSettings(ctx, w.Account, w.ID)
	if err != nil {
		return nil, err
	}
	pages, err := c.store.Pages(ctx, w)
	if err != nil {
		return nil, err
	}
	return rum.NewSite(w, set, pages), nil
}

// beaconGate remembers for a minute, per website, whether it reached today's limit of page
// views (counted by the aggregator), so that collect refuses beacons then without a read per
// beacon. The aggregator's count is what holds the limit exactly.
type beaconGate struct {
	views *quota.Keeper
	now   func() time.Time

	mu      sync.Mutex
	entries map[string]gateEntry
}

type gateEntry struct {
	err     error // a *quota.ExceededError, or nil
	expires time.Time
}

func (g *beaconGate) check(ctx context.Context, site model.Website) error {
	now := g.now()
	g.mu.Lock()
	e, ok := g.entries[site.ID]
	g.mu.Unlock()
	if ok && now.Before(e.expires) {
		var exceeded *quota.ExceededError
		if errors.As(e.err, &exceeded) {
			again := *exceeded
			again.At = now
			return &again
		}
		return e.err
	}
	err := g.views.ViewsLeft(ctx, site.Account, site.ID)
	var exceeded *quota.ExceededError
	if err != nil && !errors.As(err, &exceeded) {
		return err // not cached: a failed read says nothing about the count
	}
	e = gateEntry{err: err, expires: now.Add(siteCacheTTL)}
	if exceeded != nil && exceeded.Resets.Before(e.expires) {
		e.expires = exceeded.Resets
	}
	g.mu.Lock()
	if len(g.entries) >= siteCacheMax {
		clear(g.entries)
	}
	g.entries[site.ID] = e
	g.mu.Unlock()
	return err
}
