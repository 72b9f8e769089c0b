package store

import (
	"context"
	"time"

	"github.com/openvitals/openvitals/internal/model"
)

// A website's items kept by ID (budgets, multistep tests, channels, test profiles,
// experiments) are plain items of its partition: the attributes of the model value with the
// item's key and type. A websiteKind says what differs between kinds; its methods are their
// shared create, read, list, replace and delete. A new kind is one websiteKind value in its
// own file, with the Store methods that use it.
type websiteKind[T any] struct {
	// sk keys an item by its ID; sk("") is the prefix of every item of the kind.
	sk func(id string) string
	// typ is the items' Type attribute; name what an error calls one ("budget") and plural
	// what it calls several ("budgets").
	typ, name, plural string
	id                func(T) string
	created           func(T) time.Time
	// newest lists the newest first (else the oldest).
	newest bool
	// normal, when not nil, fills in a value's defaults: on write, and on read for items
	// stored without them.
	normal func(T) T
}

func (k websiteKind[T]) normalized(v T) T {
	if k.normal != nil {
		return k.normal(v)
	}
	return v
}

func (k websiteKind[T]) what(id string) string { return k.name + " " + id }

// put writes v: a new item (putNew) or over an existing one (putExisting).
func (k websiteKind[T]) put(ctx context.Context, s *Store, w model.Website, v T, cond putCondition) error {
	v = k.normalized(v)
	return s.putItem(ctx, keyed{pk: websitePK(w.Account, w.ID), sk: k.sk(k.id(v)), typ: k.typ, value: v}, cond, k.what(k.id(v)))
}

// get reads one item by its ID.
func (k websiteKind[T]) get(ctx context.Context, s *Store, w model.Website, id string) (T, error) {
	var v T
	if err := s.getItem(ctx, websitePK(w.Account, w.ID), k.sk(id), k.what(id), &v); err != nil {
		return v, err
	}
	return k.normalized(v), nil
}

// delete removes one item by its ID; a missing one is ErrNotFound.
func (k websiteKind[T]) delete(ctx context.Context, s *Store, w model.Website, id string) error {
	return s.deleteItem(ctx, websitePK(w.Account, w.ID), k.sk(id), k.what(id))
}

// list reads a website's items of the kind, by when each was made.
func (k websiteKind[T]) list(ctx context.Context, s *Store, w model.Website) ([]T, error) {
	out, err := withPrefix(ctx, s, websitePK(w.Account, w.ID), k.sk(""), k.plural, k.normalized)
	byTime(out, k.created, k.newest)
	return out, err
}
