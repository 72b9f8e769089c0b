package web

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	esbuild "github.com/evanw/esbuild/pkg/api"
)

// TestBundle: bundle/app.js, the script the page loads, is app.js with every module it
// imports bundled and minified from static as they are now, every module of the dashboard
// in it; -update (go generate ./internal/web) makes it again.
func TestBundle(t *testing.T) {
	code, inputs, err := bundle(embedded, "app.js")
	if err != nil {
		t.Fatal(err)
	}
	scripts, _ := fs.Glob(embedded, "*.js")
	scripts = slices.DeleteFunc(scripts, func(s string) bool { return s == "uplot.js" })
	if got := slices.Sorted(slices.Values(inputs)); !slices.Equal(got, scripts) {
		t.Errorf("the bundle is made of %v, want every module %v", got, scripts)
	}
	const file = "bundle/app.js"
	if *update {
		if err := os.WriteFile(file, code, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := os.ReadFile(file); err != nil || !bytes.Equal(got, code) {
		t.Errorf("%s is not the modules' bundle (%v): run go generate ./internal/web", file, err)
	}
	if !*update && !bytes.Equal(appBundle, code) {
		t.Errorf("the embedded bundle is stale: build again after go generate ./internal/web")
	}
}

// bundle is the module entry of fsys with every module it imports, dynamically too,
// minified, as one ES module, and the files it was made of. The files are read from fsys by a plugin, as esbuild
// reads a disk otherwise.
func bundle(fsys fs.FS, entry string) ([]byte, []string, error) {
	const ns = "dashboard"
	// esbuild loads files on several goroutines at once.
	var (
		mu     sync.Mutex
		inputs []string
	)
	files := esbuild.Plugin{Name: "dashboard-files", Setup: func(b esbuild.PluginBuild) {
		b.OnResolve(esbuild.OnResolveOptions{Filter: ".*"}, func(a esbuild.OnResolveArgs) (esbuild.OnResolveResult, error) {
			// Every import is a relative path of a file beside its importer.
			p := path.Clean(path.Join(path.Dir(a.Importer), a.Path))
			if a.Kind == esbuild.ResolveEntryPoint {
				p = a.Path
			}
			if !fs.ValidPath(p) {
				return esbuild.OnResolveResult{}, fmt.Errorf("%s imports %q, which is no file of the dashboard", a.Importer, a.Path)
			}
			return esbuild.OnResolveResult{Path: p, Namespace: ns}, nil
		})
		b.OnLoad(esbuild.OnLoadOptions{Filter: ".*", Namespace: ns}, func(a esbuild.OnLoadArgs) (esbuild.OnLoadResult, error) {
			body, err := fs.ReadFile(fsys, a.Path)
			if err != nil {
				return esbuild.OnLoadResult{}, err
			}
			mu.Lock()
			inputs = append(inputs, a.Path)
			mu.Unlock()
			code := string(body)
			return esbuild.OnLoadResult{Contents: &code, Loader: esbuild.LoaderJS}, nil
		})
	}}
	res := esbuild.Build(esbuild.BuildOptions{
		EntryPoints: []string{entry}, Bundle: true, Format: esbuild.FormatESModule, Target: esbuild.ES2020,
		MinifyWhitespace: true, MinifyIdentifiers: true, MinifySyntax: true,
		// Text as it is: an escaped dash or ellipsis is six bytes.
		Charset: esbuild.CharsetUTF8, LegalComments: esbuild.LegalCommentsNone,
		Outfile: entry, Write: false, Plugins: []esbuild.Plugin{files}, LogLevel: esbuild.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		msgs := esbuild.FormatMessages(res.Errors, esbuild.FormatMessagesOptions{Kind: esbuild.ErrorMessage})
		return nil, nil, fmt.Errorf("bundling %s: %s", entry, strings.Join(msgs, ""))
	}
	if len(res.OutputFiles) != 1 {
		return nil, nil, fmt.Errorf("bundling %s: %d files out, want one", entry, len(res.OutputFiles))
	}
	return res.OutputFiles[0].Contents, inputs, nil
}
