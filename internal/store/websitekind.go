package store

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
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
	// stored, when not nil, is what is stored of a value (a default filled in).
	stored func(T) T
}

func (k websiteKind[T]) what(id string) string { return k.name + " " + id }

// item is the stored item of v.
func (k websiteKind[T]) item(w model.Website, v T) (map[string]ddbtypes.AttributeValue, error) {
	if k.stored != nil {
		v = k.stored(v)
	}
	av, err := attributevalue.MarshalMap(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", k.what(k.id(v)), err)
	}
	av[attrPK], av[attrSK], av["Type"] = str(websitePK(w.Account, w.ID)), str(k.sk(k.id(v))), str(k.typ)
	return av, nil
}

// put writes v: a new item (putNew) or over an existing one (putExisting).
func (k websiteKind[T]) put(ctx context.Context, s *Store, w model.Website, v T, cond putCondition) error {
	av, err := k.item(w, v)
	if err != nil {
		return err
	}
	return s.putItem(ctx, av, cond, k.what(k.id(v)))
}

// get reads one item by its ID.
func (k websiteKind[T]) get(ctx context.Context, s *Store, w model.Website, id string) (T, error) {
	var v T
	err := s.getItem(ctx, websitePK(w.Account, w.ID), k.sk(id), k.what(id), &v)
	return v, err
}

// delete removes one item by its ID; a missing one is ErrNotFound.
func (k websiteKind[T]) delete(ctx context.Context, s *Store, w model.Website, id string) error {
	return s.deleteItem(ctx, websitePK(w.Account, w.ID), k.sk(id), k.what(id))
}

// list reads a website's items of the kind, by when each was made.
func (k websiteKind[T]) list(ctx context.Context, s *Store, w model.Website) ([]T, error) {
	out, err := withPrefix(ctx, s, websitePK(w.Account, w.ID), k.sk(""), k.plural, func(v T) T { return v })
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := k.created(out[i]), k.created(out[j])
		if k.newest {
			return a.After(b)
		}
		return a.Before(b)
	})
	return out, nil
}
