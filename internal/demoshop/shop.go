// Package demoshop is Fernwood Tools, the small shop the demo monitors (make demo) and the
// audit benchmarks measure: two pages, a stylesheet, a cart script and a hero image, in version
// 2.3 until Deploy, then 2.4, whose hero is heavier and whose checkout button is renamed. The
// cart script makes what real users meet: a late offer that shifts the page, a slow click.
package demoshop

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"image"
	"image/color"
	"image/png"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

//go:embed site
var files embed.FS

// Paths are the shop's pages.
var Paths = []string{"/", "/products"}

// Shop serves the shop: version 2.3 until Deploy, then 2.4.
type Shop struct {
	deployed atomic.Bool
	snippet  atomic.Pointer[string]
	mux      *http.ServeMux
}

// New returns the shop in version 2.3.
func New() (*Shop, error) {
	pages, err := template.ParseFS(files, "site/*.html")
	if err != nil {
		return nil, err
	}
	// The same size of hero in both versions: flat 20-pixel blocks (a few KB of PNG), then
	// pixel noise (about 700 KB), which compresses badly.
	var heroes [2][]byte
	for i, block := range []int{20, 1} {
		if heroes[i], err = Hero(block); err != nil {
			return nil, err
		}
	}
	s := &Shop{mux: http.NewServeMux()}
	page := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			version := "2.3"
			if s.deployed.Load() {
				version = "2.4"
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			snippet := ""
			if p := s.snippet.Load(); p != nil {
				snippet = *p
			}
			_ = pages.ExecuteTemplate(w, name, map[string]any{"Deployed": s.deployed.Load(), "Version": version, "Snippet": snippet})
		}
	}
	s.mux.HandleFunc("GET /{$}", page("home.html"))
	s.mux.HandleFunc("GET /products", page("products.html"))
	s.mux.HandleFunc("GET /hero.png", func(w http.ResponseWriter, r *http.Request) {
		hero := heroes[0]
		if s.deployed.Load() {
			hero = heroes[1]
		}
		w.Header().Set("Content-Type", "image/png")
		// With its length, as a server sends a static image: Chromium leaves a large image
		// sent without one (chunked) out of the LCP in some loads (BENCHMARKS.md).
		w.Header().Set("Content-Length", strconv.Itoa(len(hero)))
		_, _ = w.Write(hero)
	})
	static, err := fs.Sub(files, "site")
	if err != nil {
		return nil, err
	}
	s.mux.Handle("GET /style.css", http.FileServerFS(static))
	s.mux.Handle("GET /cart.js", http.FileServerFS(static))
	return s, nil
}

// ServeHTTP serves the shop's pages and files.
func (s *Shop) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// SetSnippet puts the RUM snippet of src (an openvitals /rum/{website}.js) into every page.
func (s *Shop) SetSnippet(src string) { s.snippet.Store(&src) }

// Deploy switches the shop to version 2.4.
func (s *Shop) Deploy() { s.deployed.Store(true) }

// Serve serves the shop on addr and returns its host:port and a function that stops it.
func (s *Shop) Serve(addr string) (string, func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("the demo shop's address (OPENVITALS_DEMO_ADDR): %w", err)
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// Hero is a 600x400 PNG of square blocks of random colours, block pixels wide: a few KB for
// blocks of 20 pixels, about 700 KB (it compresses badly) for blocks of one.
func Hero(block int) ([]byte, error) {
	img := image.NewRGBA(image.Rect(0, 0, 600, 400))
	rng := rand.New(rand.NewPCG(uint64(block), 7))
	for y := 0; y < 400; y += block {
		for x := 0; x < 600; x += block {
			c := color.RGBA{uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256)), 255}
			for dy := range block {
				for dx := range block {
					img.Set(x+dx, y+dy, c)
				}
			}
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
