package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/openvitals/openvitals/internal/model"
)

// The quota package decides what the limits are; the store keeps an account's overrides and
// counts what is used, with conditional updates, so that a limit holds across instances.

type limitsItem struct {
	PK     string
	SK     string
	Type   string
	Limits map[string]int
}

// AccountLimits returns the limits an operator set for an account, by name (none: empty).
func (s *Store) AccountLimits(ctx context.Context, account string) (map[string]int, error) {
	var it limitsItem
	_, err := s.getOr(ctx, accountPK(account), skLimits, "limits", &it)
	if it.Limits == nil {
		it.Limits = map[string]int{}
	}
	return it.Limits, err
}

// SetAccountLimits replaces the limits an operator set for an account.
func (s *Store) SetAccountLimits(ctx context.Context, account string, limits map[string]int) error {
	return s.putItem(ctx, limitsItem{PK: accountPK(account), SK: skLimits, Type: "limits", Limits: limits}, putAny, "limits")
}

// Reserve adds n to an account's counter of a UTC day if the count stays at most limit. It
// returns the count before; with ErrOverLimit when it would not stay within the limit.
func (s *Store) Reserve(ctx context.Context, account, counter, day string, n, limit int) (int, error) {
	expires, _ := time.Parse(model.DayLayout, day)
	return s.addWithin(ctx, key(accountPK(account), usageSK(counter, day)), "Used", n, limit,
		map[string]ddbtypes.AttributeValue{TTLAttribute: &ddbtypes.AttributeValueMemberN{Value: strconv.FormatInt(expires.Add(72*time.Hour).Unix(), 10)}})
}

// Used returns an account's count of a UTC day (0 when nothing was counted).
func (s *Store) Used(ctx context.Context, account, counter, day string) (int, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: key(accountPK(account), usageSK(counter, day)), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return 0, fmt.Errorf("read counter %s: %w", counter, err)
	}
	used, _ := intAttr(out.Item, "Used")
	return used, nil
}

// Release gives back n of a day's counter, for work reserved that was not queued.
func (s *Store) Release(ctx context.Context, account, counter, day string, n int) error {
	err := s.update(ctx, key(accountPK(account), usageSK(counter, day)), "ADD Used :minus", "attribute_exists(Used)",
		map[string]ddbtypes.AttributeValue{":minus": num(-n)})
	if err != nil && !isConditionFailed(err) {
		return fmt.Errorf("release %s: %w", counter, err)
	}
	return nil
}

// ReservePages counts n more pages on a website if it then has at most limit. A website
// stored before pages were counted gets its count from its pages first. It returns the count
// before; ErrOverLimit when the pages would not fit.
func (s *Store) ReservePages(ctx context.Context, w model.Website, n, limit int) (int, error) {
	k := key(accountPK(w.Account), websiteSK(w.ID))
	used, err := s.addWithin(ctx, k, "PageCount", n, limit, nil)
	if !errors.Is(err, errCounterMissing) {
		return used, err
	}
	pages, err := s.Pages(ctx, w)
	if err != nil {
		return 0, err
	}
	err = s.update(ctx, k, "SET PageCount = :n", "attribute_exists(PK) AND attribute_not_exists(PageCount)",
		map[string]ddbtypes.AttributeValue{":n": num(len(pages))})
	if err != nil && !isConditionFailed(err) {
		return 0, fmt.Errorf("count pages: %w", err)
	}
	used, err = s.addWithin(ctx, k, "PageCount", n, limit, nil)
	if errors.Is(err, errCounterMissing) {
		return 0, fmt.Errorf("website %s: %w", w.ID, model.ErrNotFound)
	}
	return used, err
}

// ReleasePages counts n pages fewer on a website (deleted, or reserved and not created).
func (s *Store) ReleasePages(ctx context.Context, w model.Website, n int) error {
	err := s.update(ctx, key(accountPK(w.Account), websiteSK(w.ID)), "ADD PageCount :minus", "PageCount >= :n",
		map[string]ddbtypes.AttributeValue{":minus": num(-n), ":n": num(n)})
	if err != nil && !isConditionFailed(err) {
		return fmt.Errorf("release pages: %w", err)
	}
	return nil
}

// errCounterMissing: a website's page count was never set.
var errCounterMissing = errors.New("counter missing")

// addWithin adds n to a number attribute if it stays at most limit, creating it at n where
// create is not nil (and setting the attributes of create); it returns the value before.
func (s *Store) addWithin(ctx context.Context, k map[string]ddbtypes.AttributeValue, attr string, n, limit int, create map[string]ddbtypes.AttributeValue) (int, error) {
	if n > limit {
		// The request alone is over the limit: say how much is used, change nothing.
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: k, ConsistentRead: aws.Bool(true)})
		if err != nil {
			return 0, fmt.Errorf("count %s: %w", attr, err)
		}
		used, _ := intAttr(out.Item, attr)
		return used, model.ErrOverLimit
	}
	vals := map[string]ddbtypes.AttributeValue{":n": num(n), ":room": num(limit - n)}
	update := "ADD #c :n"
	cond := "#c <= :room"
	if create != nil {
		cond = "attribute_not_exists(#c) OR " + cond
		update += " SET " + setList(create)
		for name, v := range create {
			vals[":"+name] = v
		}
	}
	was, err := s.updated(ctx, k, itemUpdate{expr: update, cond: cond, values: vals, names: map[string]string{"#c": attr},
		returns: ddbtypes.ReturnValueUpdatedOld, returnsOnFailure: true})
	var cf *ddbtypes.ConditionalCheckFailedException
	if errors.As(err, &cf) {
		used, ok := intAttr(cf.Item, attr)
		if !ok && create == nil {
			return 0, errCounterMissing
		}
		return used, model.ErrOverLimit
	}
	if err != nil {
		return 0, fmt.Errorf("count %s: %w", attr, err)
	}
	used, _ := intAttr(was, attr)
	return used, nil
}

func setList(attrs map[string]ddbtypes.AttributeValue) string {
	out := ""
	for name := range attrs {
		if out != "" {
			out += ", "
		}
		out += name + " = :" + name
	}
	return out
}

func intAttr(item map[string]ddbtypes.AttributeValue, attr string) (int, bool) {
	n, ok := item[attr].(*ddbtypes.AttributeValueMemberN)
	if !ok {
		return 0, false
	}
	v, err := strconv.Atoi(n.Value)
	return v, err == nil
}

func num(n int) ddbtypes.AttributeValue {
	return &ddbtypes.AttributeValueMemberN{Value: strconv.Itoa(n)}
}
