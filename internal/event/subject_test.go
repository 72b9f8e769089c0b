package event_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/model"
)

// subjects is an in-memory event.Subjects: a website's pages and multistep tests by ID.
type subjects struct {
	pages map[string]model.Page
	tests map[string]model.Test
}

func (s subjects) Page(_ context.Context, _ model.Website, id string) (model.Page, error) {
	if p, ok := s.pages[id]; ok {
		return p, nil
	}
	return model.Page{}, fmt.Errorf("page %s: %w", id, model.ErrNotFound)
}

func (s subjects) Test(_ context.Context, _ model.Website, id string) (model.Test, error) {
	if t, ok := s.tests[id]; ok {
		return t, nil
	}
	return model.Test{}, fmt.Errorf("multistep test %s: %w", id, model.ErrNotFound)
}

// TestSubjectName: a page is named by its alias and URL, or its URL alone; a multistep test by
// its alias; one that cannot be read (deleted meanwhile) by its ID.
func TestSubjectName(t *testing.T) {
	st := subjects{
		pages: map[string]model.Page{"home": {ID: "home", URL: "/", Alias: "Home"}, "shop": {ID: "shop", URL: "/shop"}},
		tests: map[string]model.Test{"checkout": {ID: "checkout", Alias: "Checkout"}},
	}
	for _, c := range []struct {
		r    model.Regression
		want string
	}{
		{model.Regression{Page: "home"}, "Home (/)"},
		{model.Regression{Page: "shop"}, "/shop"},
		{model.Regression{Page: "gone"}, "gone"},
		{model.Regression{Test: "checkout"}, `multistep test "Checkout"`},
		{model.Regression{Test: "gone"}, "multistep test gone"},
	} {
		if got := event.SubjectName(context.Background(), st, model.Website{Account: "acme", ID: "w1"}, c.r); got != c.want {
			t.Errorf("subject of %+v: %q, want %q", c.r, got, c.want)
		}
	}
}
