package api_test

import (
	"bufio"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// bodyRoutes are the routes of the route table that take a body (POST and PUT), by their
// name: method and pattern ("PUT /{websiteID}/budgets/{budgetID}").
func bodyRoutes(t testing.TB) ([]walkRoute, map[string]walkRoute) {
	var list []walkRoute
	byName := map[string]walkRoute{}
	for _, rt := range tableRoutes(t) {
		if rt.Method == http.MethodPost || rt.Method == http.MethodPut {
			list = append(list, rt)
			byName[rt.Method+" "+rt.Pattern] = rt
		}
	}
	return list, byName
}

// FuzzRequestBodies sends arbitrary bodies to every route that takes one (the POST and PUT
// routes of the route table) through the whole API against DynamoDB Local. No body may answer
// 500 or panic, and a refused body (4xx) changes nothing stored: the table holds as many items
// afterwards. Seeds: testdata/fuzz/FuzzRequestBodies, each naming its route by method and
// pattern (a name the fuzzer made up picks a route by its hash); `make fuzz` runs it for a
// bounded time with one worker (the item count is global).
func FuzzRequestBodies(f *testing.F) {
	e := newTestEnv(f)
	fx := newRouteFixture(f, e)
	routes, byName := bodyRoutes(f)
	// Each input's own test: f's methods must not be called inside the fuzz function.
	count := func(t *testing.T) int { return awstest.TableOf(t, e.clients, e.store).Count() }
	f.Fuzz(func(t *testing.T, route string, body []byte) {
		r, ok := byName[route]
		if !ok {
			h := fnv.New32a()
			_, _ = h.Write([]byte(route))
			r = routes[int(h.Sum32()%uint32(len(routes)))]
		}
		path := fx.path(t, r.Pattern, nil)
		before := count(t)
		req := httptest.NewRequest(r.Method, path, strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		if r.Access != "public" {
			req.Header.Set("Authorization", "Bearer "+apitest.AdminKey)
		}
		rec := httptest.NewRecorder()
		e.handler.ServeHTTP(rec, req)
		if rec.Code >= http.StatusInternalServerError {
			t.Fatalf("%s %s %q: %d %s", r.Method, path, body, rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			if after := count(t); after != before {
				t.Fatalf("%s %s %q refused with %d changed the table: %d items, %d before", r.Method, path, body, rec.Code, after, before)
			}
		}
	})
}

// TestFuzzSeedsNameRoutes keeps the seed corpus of FuzzRequestBodies in step with the route
// table: every seed names a route that takes a body, and every such route has a seed.
func TestFuzzSeedsNameRoutes(t *testing.T) {
	routes, byName := bodyRoutes(t)
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzRequestBodies", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no seeds (%v)", err)
	}
	seeded := map[string]bool{}
	for _, file := range files {
		name, err := seedRoute(file)
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if _, ok := byName[name]; !ok {
			t.Errorf("%s names %q, which is no POST or PUT route of the route table", file, name)
		}
		seeded[name] = true
	}
	for _, rt := range routes {
		if name := rt.Method + " " + rt.Pattern; !seeded[name] {
			t.Errorf("no seed for %s: add one to testdata/fuzz/FuzzRequestBodies", name)
		}
	}
}

// seedRoute reads the route a seed file names: its first value, a Go string literal.
func seedRoute(file string) (string, error) {
	fh, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	lines := bufio.NewScanner(fh)
	lines.Buffer(nil, 1<<20)
	var got []string
	for lines.Scan() && len(got) < 2 {
		got = append(got, lines.Text())
	}
	if len(got) < 2 || got[0] != "go test fuzz v1" {
		return "", os.ErrInvalid
	}
	literal, ok := strings.CutPrefix(got[1], "string(")
	if !ok || !strings.HasSuffix(literal, ")") {
		return "", os.ErrInvalid
	}
	return strconv.Unquote(strings.TrimSuffix(literal, ")"))
}
