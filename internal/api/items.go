package api

import (
	"context"
	"net/http"

	"github.com/openvitals/openvitals/internal/model"
)

// itemKind says how one kind of a website's items (a budget, a multistep test, a channel, a
// test profile, an experiment) is checked, stored and shown, so that its handlers are the
// shared ones below: the website first (another account's is 404), then the body, then the
// store. A kind fills in what its routes use; what differs between kinds is in its hooks
// (apply, written, show), not in copies of the handlers.
type itemKind[T, In any] struct {
	pathID string // the path variable naming an item
	// newItem is an item before a create's fields are applied.
	newItem func() T
	// apply checks in and sets its fields over t, with everything the kind does before t is
	// stored (a secret sealed, a check against the other items); on create every field must
	// be present, and old is the zero T, on update the item as stored. What it returns is
	// shown with the item this once (a new signing secret), or "".
	apply  func(ctx context.Context, site model.Website, in In, old T, t *T, create bool) (once string, err error)
	list   func(ctx context.Context, w model.Website) ([]T, error)
	get    func(ctx context.Context, w model.Website, id string) (T, error)
	create func(ctx context.Context, w model.Website, t *T) error
	update func(ctx context.Context, w model.Website, t *T) error
	// remove deletes an item by its ID.
	remove func(ctx context.Context, w model.Website, id string) error
	// written, if set, follows every write (an annotation, another item changed): old is
	// the zero T after a create, t the zero T after a delete, which then reads the item first.
	written func(ctx context.Context, w model.Website, old, t T) error
	show    func(w model.Website, t T, once string) any
}

// applyFields is an itemKind's apply for a kind whose fields are all it checks.
func applyFields[T, In any](apply func(in In, t *T, create bool) error) func(context.Context, model.Website, In, T, *T, bool) (string, error) {
	return func(_ context.Context, _ model.Website, in In, _ T, t *T, create bool) (string, error) {
		return "", apply(in, t, create)
	}
}

// byValue is an itemKind's update for a store that takes the item by value.
func byValue[T any](update func(ctx context.Context, w model.Website, t T) error) func(context.Context, model.Website, *T) error {
	return func(ctx context.Context, w model.Website, t *T) error { return update(ctx, w, *t) }
}

// purging is an itemKind's remove for a store whose delete leaves a purge to queue (the
// item's runs, reports, diagnostics).
func (s *Server) purging(remove func(ctx context.Context, w model.Website, id string) (model.PurgeJob, error)) func(context.Context, model.Website, string) error {
	return func(ctx context.Context, w model.Website, id string) error {
		job, err := remove(ctx, w, id)
		if err != nil {
			return err
		}
		s.enqueuePurge(ctx, job)
		return nil
	}
}

// showing is an itemKind's show for a kind shown by itself.
func showing[T, Out any](show func(T) Out) func(model.Website, T, string) any {
	return func(_ model.Website, t T, _ string) any { return show(t) }
}

// itself shows an item whose model type is its answer: as it is.
func itself[T any](t T) T { return t }

// websiteAndBody reads the website a request names and decodes its JSON body into an In.
func websiteAndBody[In any](s *Server, w http.ResponseWriter, r *http.Request, c caller) (model.Website, In, error) {
	var in In
	site, err := s.website(r, c)
	if err != nil {
		return site, in, err
	}
	return site, in, decodeJSON(w, r, &in)
}

// websiteAnd reads the website a request names, then does f with it (reads what the
// request asks of it, or deletes it), and returns both results.
func websiteAnd[T any](s *Server, r *http.Request, c caller, f func(context.Context, model.Website) (T, error)) (model.Website, T, error) {
	site, err := s.website(r, c)
	if err != nil {
		var zero T
		return site, zero, err
	}
	t, err := f(r.Context(), site)
	return site, t, err
}

// withPathID is get of the item of a website that the request's path variable name names.
func withPathID[T any](r *http.Request, name string, get func(context.Context, model.Website, string) (T, error)) func(context.Context, model.Website) (T, error) {
	return func(ctx context.Context, site model.Website) (T, error) { return get(ctx, site, r.PathValue(name)) }
}

// listItems answers the website's items, in one page.
func listItems[T, In any](s *Server, k itemKind[T, In]) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c caller) error {
		site, items, err := websiteAnd(s, r, c, k.list)
		if err != nil {
			return err
		}
		out := make([]any, len(items))
		for i, t := range items {
			out[i] = k.show(site, t, "")
		}
		return writeJSON(w, http.StatusOK, listPage(out, ""))
	}
}

// getItem answers one item.
func getItem[T, In any](s *Server, k itemKind[T, In]) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c caller) error {
		site, t, err := websiteAnd(s, r, c, withPathID(r, k.pathID, k.get))
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, k.show(site, t, ""))
	}
}

// createItem answers 201 with the new item.
func createItem[T, In any](s *Server, k itemKind[T, In]) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c caller) error {
		site, in, err := websiteAndBody[In](s, w, r, c)
		if err != nil {
			return err
		}
		var zero T
		t := k.newItem()
		once, err := k.apply(r.Context(), site, in, zero, &t, true)
		if err != nil {
			return err
		}
		if err := k.create(r.Context(), site, &t); err != nil {
			return err
		}
		if err := k.afterWrite(r.Context(), site, zero, t); err != nil {
			return err
		}
		return writeJSON(w, http.StatusCreated, k.show(site, t, once))
	}
}

// updateItem applies the fields a body holds over the stored item and answers with the result.
func updateItem[T, In any](s *Server, k itemKind[T, In]) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c caller) error {
		site, in, err := websiteAndBody[In](s, w, r, c)
		if err != nil {
			return err
		}
		old, err := k.get(r.Context(), site, r.PathValue(k.pathID))
		if err != nil {
			return err
		}
		t := old
		once, err := k.apply(r.Context(), site, in, old, &t, false)
		if err != nil {
			return err
		}
		if err := k.update(r.Context(), site, &t); err != nil {
			return err
		}
		if err := k.afterWrite(r.Context(), site, old, t); err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, k.show(site, t, once))
	}
}

// deleteItem answers 204 once the item is gone.
func deleteItem[T, In any](s *Server, k itemKind[T, In]) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c caller) error {
		site, err := s.website(r, c)
		if err != nil {
			return err
		}
		id := r.PathValue(k.pathID)
		var old T
		if k.written != nil {
			if old, err = k.get(r.Context(), site, id); err != nil {
				return err
			}
		}
		if err := k.remove(r.Context(), site, id); err != nil {
			return err
		}
		var zero T
		if err := k.afterWrite(r.Context(), site, old, zero); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// afterWrite runs the kind's written hook, if it has one.
func (k itemKind[T, In]) afterWrite(ctx context.Context, site model.Website, old, t T) error {
	if k.written == nil {
		return nil
	}
	return k.written(ctx, site, old, t)
}
