// Package web is the dashboard: static files embedded in the binary, served under /app/ by the
// web function (and by the local service), on the same origin as the API they call with the
// key the user pastes. Its script is native ES modules (static), served as one bundle
// (bundle/app.js: every module, minified by esbuild when go generate or TestBundle -update
// makes it; TestBundle fails when it is not the modules'); assets are served under names
// carrying a hash of their content, cached for a year; the page naming them is never cached,
// so a deploy shows at once. In development (OPENVITALS_DASHBOARD_DIR) the files are read from
// a directory at each request and the modules served as they are: no build step.
package web

//go:generate go test -run ^TestBundle$ -update .

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"strings"
	"sync"
)

// Prefix is the path the dashboard is served under.
const Prefix = "/app/"

// CSP is the dashboard page's Content-Security-Policy: its own scripts and styles only (no
// inline script or style attribute), API calls to its own origin, no framing by anyone, and
// frames only for the Lighthouse reports the API serves.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"connect-src 'self'; frame-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

//go:embed static
var static embed.FS

// appBundle is the page's module, static/app.js, with every module it imports, dynamically
// too, in one minified file, made by TestBundle -update from static.
//
//go:embed bundle/app.js
var appBundle []byte

// embedded is the dashboard's files in the binary.
var embedded = func() fs.FS { sub, _ := fs.Sub(static, "static"); return sub }() // a valid path never fails

// DirEnv names the directory the dashboard is served from in development, its files as they
// are (the modules unbundled, nothing cached), read at each request; unset, the embedded
// files are served, the modules as their bundle.
const DirEnv = "OPENVITALS_DASHBOARD_DIR"

// devDir is DirEnv's directory. Read at each request (an environment lookup), so that a test
// can serve one dashboard of a process as it is.
func devDir() string { return os.Getenv(DirEnv) }

// ErrNotFound is returned for a path under Prefix that is no file of the dashboard.
var ErrNotFound = errors.New("no such file")

// asset is one served file: its body, gzipped once, and its type.
type asset struct {
	body, gz    []byte
	contentType string
	immutable   bool // under its hashed name: cached for a year
	etag        string
}

// files maps a path under Prefix to its asset, and the page's template: built once from the
// embedded files, at each call from DirEnv's directory.
func files() (site, error) {
	if dir := devDir(); dir != "" {
		return build(os.DirFS(dir), true)
	}
	return built()
}

// built is the embedded dashboard, built once.
var built = sync.OnceValues(func() (site, error) { return build(embedded, false) })

// pages holds the page rendered for each RUM entry it was asked for (one per process).
var pages sync.Map // string -> *asset

// page is the dashboard's page naming rumURL, the entry real users' snippet is embedded from
// ("": the dashboard's own origin).
func page(rumURL string) (*asset, error) {
	dev := devDir() != ""
	if a, ok := pages.Load(rumURL); ok && !dev {
		return a.(*asset), nil
	}
	all, err := files()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := all.page.Execute(&b, struct{ RUMURL string }{rumURL}); err != nil {
		return nil, err
	}
	a := newAsset(b.Bytes(), "text/html; charset=utf-8", false)
	if dev {
		return a, nil
	}
	stored, _ := pages.LoadOrStore(rumURL, a)
	return stored.(*asset), nil
}

// site is the dashboard's files: the assets by their served names, and the page's template.
type site struct {
	assets map[string]*asset
	page   *template.Template
}

// build parses the page of the files of fsys and names their assets: in production (dev
// false) each under a hash of its content, and the page's module as its bundle; in
// development each under its own name, never cached, the modules as they are.
func build(fsys fs.FS, dev bool) (site, error) {
	out := map[string]*asset{}
	names := map[string]string{} // file name -> served path
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return site{}, err
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || name == "index.html" || strings.HasPrefix(name, "LICENSE") {
			continue
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return site{}, err
		}
		if dev {
			out[name] = newAsset(body, contentType(path.Ext(name)), false)
			names[name] = Prefix + name
			continue
		}
		names[name] = Prefix + addHashed(out, name, body)
	}
	page, err := template.New("index.html").Funcs(template.FuncMap{
		"asset": func(name string) (string, error) {
			if p, ok := names[name]; ok {
				return p, nil
			}
			return "", fmt.Errorf("index.html names %q, which is no static file", name)
		},
		// module is the page's module, app.js: in development the file itself (which
		// imports the others by their names), in production their bundle: one request, and
		// one gzip stream that compresses them better than one each (BENCHMARKS.md).
		"module": func(entry string) (string, error) {
			if entry != "app.js" {
				return "", fmt.Errorf("index.html names the module %q: the bundle is of app.js", entry)
			}
			if dev {
				return Prefix + entry, nil
			}
			return Prefix + addHashed(out, entry, appBundle), nil
		},
	}).ParseFS(fsys, "index.html")
	if err != nil {
		return site{}, err
	}
	// Rendered once here, so that an error in it shows at the first request.
	if err := page.Execute(io.Discard, struct{ RUMURL string }{}); err != nil {
		return site{}, err
	}
	return site{assets: out, page: page}, nil
}

// addHashed adds an immutable asset under its name with a hash of its content, which it returns.
func addHashed(out map[string]*asset, name string, body []byte) string {
	sum := sha256.Sum256(body)
	ext := path.Ext(name)
	hashed := strings.TrimSuffix(name, ext) + "." + hex.EncodeToString(sum[:6]) + ext
	out[hashed] = newAsset(body, contentType(ext), true)
	return hashed
}

func newAsset(body []byte, contentType string, immutable bool) *asset {
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression) // a valid level never fails
	_, _ = zw.Write(body)
	_ = zw.Close()
	sum := sha256.Sum256(body)
	return &asset{body: body, gz: gz.Bytes(), contentType: contentType, immutable: immutable, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
}

func contentType(ext string) string {
	switch ext {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".json":
		return "application/json"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	}
	return "application/octet-stream"
}

// Serve writes the dashboard file r's path names: the page for Prefix itself (and for /app), a
// hashed asset otherwise, gzipped when gzipOK (the client accepts it). The page names rumURL,
// the entry real users' snippet is embedded from ("": the dashboard's own origin).
// Anything else is ErrNotFound.
func Serve(w http.ResponseWriter, r *http.Request, gzipOK bool, rumURL string) error {
	// /app is the page too, not a redirect to /app/: API Gateway's greedy {file+} may not
	// match an empty rest, so /app is the address that surely reaches the web function.
	path := r.URL.Path
	if path == strings.TrimSuffix(Prefix, "/") {
		path = Prefix
	}
	name, ok := strings.CutPrefix(path, Prefix)
	if !ok {
		return ErrNotFound
	}
	var a *asset
	if name == "" {
		var err error
		if a, err = page(rumURL); err != nil {
			return err
		}
	} else {
		all, err := files()
		if err != nil {
			return err
		}
		var ok bool
		if a, ok = all.assets[name]; !ok {
			return ErrNotFound
		}
	}
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("Vary", "Accept-Encoding")
	h.Set("ETag", a.etag)
	if a.immutable {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		// The page names the current assets: always revalidated, never framed, no referrer
		// (the API's paths name websites and pages).
		h.Set("Cache-Control", "no-cache")
		h.Set("Content-Security-Policy", CSP)
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
	}
	if r.Header.Get("If-None-Match") == a.etag {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	body := a.body
	if gzipOK {
		h.Set("Content-Encoding", "gzip")
		body = a.gz
	}
	_, _ = w.Write(body)
	return nil
}
