package api

import (
	"context"
	"net/http"

	"github.com/openvitals/openvitals/internal/model"
)

// itemKind says how one kind of a website's items (a budget, a multistep test) is checked,
// stored and shown, so that its create, update and delete handlers are the shared ones below:
// the website first (another account's is 404), then the body, then one store call.
type itemKind[T, In any] struct {
	pathID string // the path variable naming an item
	// newItem is an item before a create's fields are applied.
	newItem func() T
	// apply checks in and sets its fields over t; on create every field must be present.
	apply  func(in In, t *T, create bool) error
	get    func(ctx context.Context, w model.Website, id string) (T, error)
	create func(ctx context.Context, w model.Website, t *T) error
	update func(ctx context.Context, w model.Website, t T) error
	// remove deletes an item by its ID.
	remove func(ctx context.Context, w model.Website, id string) error
	show   func(t T) any
}

// websiteAndBody reads the website a request names and decodes its JSON body into an In.
func websiteAndBody[In any](s *Server, w http.ResponseWriter, r *http.Request, c caller) (model.Website, In, error) {
	var in In
	site, err := s.website(r, c)
	if err != nil {
		return site, in, err
	}
	return site, in, decodeJSON(w, r, &in)
}

// createItem answers 201 with the new item.
func createItem[T, In any](s *Server, k itemKind[T, In]) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c caller) error {
		site, in, err := websiteAndBody[In](s, w, r, c)
		if err != nil {
			return err
		}
		t := k.newItem()
		if err := k.apply(in, &t, true); err != nil {
			return err
		}
		if err := k.create(r.Context(), site, &t); err != nil {
			return err
		}
		return writeJSON(w, http.StatusCreated, k.show(t))
	}
}

// updateItem applies the fields a body holds over the stored item and answers with the result.
func updateItem[T, In any](s *Server, k itemKind[T, In]) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c caller) error {
		site, in, err := websiteAndBody[In](s, w, r, c)
		if err != nil {
			return err
		}
		t, err := k.get(r.Context(), site, r.PathValue(k.pathID))
		if err != nil {
			return err
		}
		if err := k.apply(in, &t, false); err != nil {
			return err
		}
		if err := k.update(r.Context(), site, t); err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, k.show(t))
	}
}

// deleteItem answers 204 once the item is gone.
func deleteItem[T, In any](s *Server, k itemKind[T, In]) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c caller) error {
		site, err := s.website(r, c)
		if err != nil {
			return err
		}
		if err := k.remove(r.Context(), site, r.PathValue(k.pathID)); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}
