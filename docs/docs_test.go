package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/testing/lambdatest"
)

// root is the repository's top, seen from this package's directory (where go test runs).
const root = ".."

// readFile returns a file of the repository as text, failing the test when it cannot.
func readFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// queueNames are the stack's work queues, read from their one declaration: the *queue.Queue
// fields of service.Queues, lower-cased ("Purge" is the purge queue).
func queueNames(t *testing.T) []string {
	t.Helper()
	var names []string
	qs := reflect.TypeFor[service.Queues]()
	for i := range qs.NumField() {
		if f := qs.Field(i); f.Type == reflect.TypeFor[*queue.Queue]() {
			names = append(names, strings.ToLower(f.Name))
		}
	}
	if len(names) == 0 {
		t.Fatal("service.Queues declares no *queue.Queue field")
	}
	return names
}

var (
	fenceRE = regexp.MustCompile("(?ms)^```[^\n]*\n.*?^```[ \t]*$")
	// mermaidRE finds a mermaid block's body.
	mermaidRE = regexp.MustCompile("(?ms)^```mermaid[ \t]*\n(.*?)^```[ \t]*$")
	// nodeRE finds a node with a quoted label in any shape: id["..."], id[["..."]],
	// id[("...")], id(["..."]), id("...").
	nodeRE = regexp.MustCompile(`\b([A-Za-z_][A-Za-z0-9_]*)\s*[\[\(\{]+\s*"([^"]*)"`)
	edgeRE = regexp.MustCompile(`--|==|-\.`)
)

// diagramNode is a node of a Mermaid flowchart: its id and the first line of its label.
type diagramNode struct {
	id, label string
}

// mermaidNodes returns the nodes of the Mermaid blocks in text, and the lines that draw edges.
func mermaidNodes(text string) (nodes []diagramNode, edges []string) {
	for _, m := range mermaidRE.FindAllStringSubmatch(text, -1) {
		for line := range strings.SplitSeq(m[1], "\n") {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "subgraph") || strings.HasPrefix(line, "%%") {
				continue
			}
			for _, n := range nodeRE.FindAllStringSubmatch(line, -1) {
				first, _, _ := strings.Cut(strings.ReplaceAll(n[2], "<br>", "<br/>"), "<br/>")
				nodes = append(nodes, diagramNode{id: n[1], label: strings.TrimSpace(first)})
			}
			if edgeRE.MatchString(line) {
				edges = append(edges, line)
			}
		}
	}
	return nodes, edges
}

// connected reports whether the node id appears in an edge.
func connected(id string, edges []string) bool {
	word := regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(id) + `($|[^A-Za-z0-9_])`)
	return slices.ContainsFunc(edges, word.MatchString)
}

// TestArchitectureDiagram holds docs/architecture.md's diagram to the code: a node labelled
// with each function's name, one labelled "<name> queue" for each queue of service.Queues, the
// DynamoDB table, the S3 bucket and the RUM bucket, each drawn with at least one edge.
func TestArchitectureDiagram(t *testing.T) {
	nodes, edges := mermaidNodes(readFile(t, "docs/architecture.md"))
	if len(nodes) == 0 {
		t.Fatal("docs/architecture.md has no Mermaid diagram with quoted node labels")
	}
	find := func(what string, match func(label string) bool) {
		t.Helper()
		i := slices.IndexFunc(nodes, func(n diagramNode) bool { return match(n.label) })
		if i < 0 {
			t.Errorf("the architecture diagram (docs/architecture.md) has no node for %s", what)
			return
		}
		if !connected(nodes[i].id, edges) {
			t.Errorf("the architecture diagram draws %s (node %s) without any edge", what, nodes[i].id)
		}
	}
	for _, fn := range lambdatest.Functions(t) {
		find("the function "+fn+" (functions/"+fn+")", func(label string) bool { return label == fn })
	}
	for _, q := range queueNames(t) {
		find("the "+q+" queue (service.Queues)", func(label string) bool {
			return strings.HasPrefix(strings.ToLower(label), q+" queue")
		})
	}
	// The stores are one table and two buckets (service.Config's Table, Bucket and RUMBucket).
	for _, store := range []string{"DynamoDB table", "S3 bucket", "RUM bucket"} {
		find("the "+store, func(label string) bool { return label == store })
	}
}

// TestDiagramParser makes sure the diagram test can fail: a diagram without a function's node
// is reported.
func TestDiagramParser(t *testing.T) {
	text := "```mermaid\nflowchart LR\n  a[\"websites<br/>more\"] --> q[[\"purge queue\"]]\n  b[\"lonely\"]\n```\n"
	nodes, edges := mermaidNodes(text)
	want := []diagramNode{{"a", "websites"}, {"q", "purge queue"}, {"b", "lonely"}}
	if !slices.Equal(nodes, want) {
		t.Errorf("nodes = %v, want %v", nodes, want)
	}
	if !connected("a", edges) || !connected("q", edges) || connected("b", edges) {
		t.Errorf("edges %q: a and q connected, b not", edges)
	}
}

// markdownFiles are the pages whose links are checked: the README, BENCHMARKS.md and docs/.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "BENCHMARKS.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		files = append(files, filepath.Join("docs", filepath.Base(d)))
	}
	return files
}

var (
	codeSpanRE = regexp.MustCompile("`[^`\n]*`")
	// linkRE finds inline links and images: [text](target) and ![alt](target "title").
	linkRE    = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	headingRE = regexp.MustCompile(`(?m)^#{1,6}[ \t]+(.+?)[ \t#]*$`)
	anchorRE  = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	schemeRE  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
	mdLinkRE  = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// prose returns text without its fenced code blocks and code spans, where nothing is a link.
func prose(text string) string {
	return codeSpanRE.ReplaceAllString(fenceRE.ReplaceAllString(text, ""), "")
}

// slug makes a heading's anchor as GitHub does: lower case, the heading's text without
// markup, letters, digits, '-' and '_' kept, spaces made '-', everything else dropped.
func slug(heading string) string {
	heading = mdLinkRE.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// anchors are the anchors of a Markdown page: its headings' (a repeated one gets -1, -2...)
// and those of <a id> or <a name> elements.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, h := range headingRE.FindAllStringSubmatch(fenceRE.ReplaceAllString(text, ""), -1) {
		s := slug(h[1])
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	for _, a := range anchorRE.FindAllStringSubmatch(text, -1) {
		out[a[1]] = true
	}
	return out
}

// brokenLinks returns the relative links of the page rel (a path from the repository's top)
// that lead to no file, or to no anchor of the page they name.
func brokenLinks(t *testing.T, rel string) []string {
	t.Helper()
	text := readFile(t, rel)
	var broken []string
	for _, m := range linkRE.FindAllStringSubmatch(prose(text), -1) {
		target := m[1]
		if schemeRE.MatchString(target) || strings.HasPrefix(target, "//") {
			continue
		}
		path, anchor, _ := strings.Cut(target, "#")
		file := rel
		if path != "" {
			file = filepath.Join(filepath.Dir(rel), path)
			if _, err := os.Stat(filepath.Join(root, file)); err != nil {
				broken = append(broken, target+" (no such file)")
				continue
			}
		}
		if anchor == "" {
			continue
		}
		if !strings.HasSuffix(file, ".md") {
			broken = append(broken, target+" (an anchor in a file that is not Markdown)")
			continue
		}
		if !anchors(readFile(t, file))[anchor] {
			broken = append(broken, target+" (no such heading or anchor in "+filepath.ToSlash(file)+")")
		}
	}
	return broken
}

// TestLinks fails on a relative link of the README, BENCHMARKS.md or docs/*.md that points at
// nothing: a missing file or directory, or a #anchor no heading of its page makes.
func TestLinks(t *testing.T) {
	for _, f := range markdownFiles(t) {
		for _, b := range brokenLinks(t, f) {
			t.Errorf("%s: broken link %s", f, b)
		}
	}
}

// TestLinkChecker makes sure the link check can fail, and reads anchors as GitHub makes them.
func TestLinkChecker(t *testing.T) {
	page := "# A page\n\n## `make daily`: once, now\n\n## Again\n\n## Again\n\n```sh\n# not a heading\n```\n<a id=\"here\"></a>\n"
	got := anchors(page)
	for _, want := range []string{"a-page", "make-daily-once-now", "again", "again-1", "here"} {
		if !got[want] {
			t.Errorf("anchors(page) has no %q: %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Error("a comment in a code block was taken for a heading")
	}
	links := linkRE.FindAllStringSubmatch(prose("[a](x.md#y) `[b](not-a-link)` ![c](img.png \"t\")\n```\n[d](code)\n```\n"), -1)
	var targets []string
	for _, l := range links {
		targets = append(targets, l[1])
	}
	if want := []string{"x.md#y", "img.png"}; !slices.Equal(targets, want) {
		t.Errorf("links = %q, want %q", targets, want)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "page.md"), []byte("# Page\n[gone](missing.md) [bad](#nowhere) [ok](#page)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(root, filepath.Join(dir, "page.md"))
	if err != nil {
		t.Skip("the temporary directory is not reachable from the repository:", err)
	}
	if got := brokenLinks(t, rel); len(got) != 2 {
		t.Errorf("broken links = %q, want the missing file and #nowhere", got)
	}
}

// envRE finds the names of openvitals' own environment variables.
var envRE = regexp.MustCompile(`\b(?:OPENVITALS|STANDINS)_[A-Z0-9_]*[A-Z0-9]\b`)

// TestConfigurationNamesEveryVariable fails when a program, script or the Makefile reads an
// OPENVITALS_ or STANDINS_ variable that docs/configuration.md does not name. Test files are
// left out: the variables they set for themselves are documented where they matter.
func TestConfigurationNamesEveryVariable(t *testing.T) {
	documented := readFile(t, "docs/configuration.md")
	found := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			switch name {
			case ".git", ".run", "node_modules", "dist", "cdk.out", "testdata", "docs":
				return filepath.SkipDir
			}
			return nil
		}
		code := (strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go")) ||
			strings.HasSuffix(name, ".sh") || strings.HasSuffix(name, ".yml") ||
			strings.HasSuffix(name, ".mjs") || name == "Makefile" || name == "Dockerfile"
		if !code || d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, v := range envRE.FindAllString(string(b), -1) {
			if _, ok := found[v]; !ok {
				found[v] = path
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) < 20 {
		t.Fatalf("found only %d variables in the code: %v", len(found), found)
	}
	for v, where := range found {
		if !regexp.MustCompile(`\b` + v + `\b`).MatchString(documented) {
			t.Errorf("%s (read in %s) is not in docs/configuration.md", v, where)
		}
	}
}
