package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/openvitals/openvitals/internal/model"
)

// FanoutClaimTTL is how long a fan-out claim stays: longer than an audit may wait in its queue
// (SQS keeps a message 14 days at most), since the audit worker reads its shard's claim to drop
// a message that a later attempt queued again.
const FanoutClaimTTL = 15 * 24 * time.Hour

// ErrSuperseded is returned (wrapped) when an attempt finishes a claim that a later attempt
// took over meanwhile: what it queued is the later attempt's to queue.
var ErrSuperseded = errors.New("superseded by a later attempt")

// fanoutItem is a claim of the daily fan-out. LeaseMS is in Unix milliseconds, so that a
// condition compares it with the time as a number.
type fanoutItem struct {
	PK      string
	SK      string
	Type    string
	Attempt int
	Started time.Time
	LeaseMS int64
	Shards  int  `dynamodbav:",omitempty"`
	Done    bool `dynamodbav:",omitempty"`
	Queued  time.Time
	Count   int      `dynamodbav:",omitempty"`
	Items   []string `dynamodbav:",omitempty"`
	Next    string   `dynamodbav:",omitempty"`
}

func (it fanoutItem) claim() model.FanoutClaim {
	return model.FanoutClaim{Attempt: it.Attempt, Started: it.Started, Lease: time.UnixMilli(it.LeaseMS).UTC(), Shards: it.Shards,
		Done: it.Done, FanoutDone: model.FanoutDone{Queued: it.Queued, Count: it.Count, Items: it.Items, Next: it.Next}}
}

// ClaimFanout claims k for an attempt that may work on it until lease: the first attempt, or
// one after an attempt that did not finish and whose lease has passed by now (a worker that
// stopped half-way). held tells whether this attempt holds it now; when it does not, the claim
// returned is done, or held by a live attempt. shards, when not 0, is how many shards the
// first attempt splits a website's pages into (the claim keeps the first one's). One
// conditional write, which concurrent attempts cannot both pass.
func (s *Store) ClaimFanout(ctx context.Context, k FanoutKey, now, lease time.Time, shards int) (c model.FanoutClaim, held bool, err error) {
	update := "SET #type = :type, Attempt = if_not_exists(Attempt, :zero) + :one, LeaseMS = :lease, " +
		"Started = if_not_exists(Started, :now), expires = if_not_exists(expires, :expires)"
	values := map[string]ddbtypes.AttributeValue{
		":type": str("fanout"), ":zero": num(0), ":one": num(1),
		":lease":   &ddbtypes.AttributeValueMemberN{Value: strconv.FormatInt(lease.UnixMilli(), 10)},
		":nowms":   &ddbtypes.AttributeValueMemberN{Value: strconv.FormatInt(now.UnixMilli(), 10)},
		":now":     str(now.UTC().Format(time.RFC3339Nano)),
		":expires": &ddbtypes.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(FanoutClaimTTL).Unix(), 10)},
	}
	if shards > 0 {
		update += ", Shards = if_not_exists(Shards, :shards)"
		values[":shards"] = num(shards)
	}
	claimed, err := s.updated(ctx, key(k.pk, k.sk), itemUpdate{expr: update,
		cond:   "attribute_not_exists(PK) OR (attribute_not_exists(Done) AND LeaseMS < :nowms)",
		values: values, names: map[string]string{"#type": "Type"}, returns: ddbtypes.ReturnValueAllNew, returnsOnFailure: true})
	var it fanoutItem
	var failed *ddbtypes.ConditionalCheckFailedException
	switch {
	case errors.As(err, &failed) && failed.Item != nil:
		if err := attributevalue.UnmarshalMap(failed.Item, &it); err != nil {
			return c, false, fmt.Errorf("decode fan-out claim: %w", err)
		}
		return it.claim(), false, nil
	case errors.As(err, &failed):
		// An emulator that does not return the item that failed the condition: read it.
		c, err := s.FanoutClaim(ctx, k)
		return c, false, err
	case err != nil:
		return c, false, fmt.Errorf("claim fan-out %s: %w", k.sk, err)
	}
	if err := attributevalue.UnmarshalMap(claimed, &it); err != nil {
		return c, false, fmt.Errorf("decode fan-out claim: %w", err)
	}
	return it.claim(), true, nil
}

// FinishFanout records that attempt finished claim k, having queued d. A later attempt that
// took the claim over meanwhile makes it ErrSuperseded.
func (s *Store) FinishFanout(ctx context.Context, k FanoutKey, attempt int, d model.FanoutDone) error {
	update := "SET Done = :true, Queued = :queued, #count = :count"
	values := map[string]ddbtypes.AttributeValue{
		":true": &ddbtypes.AttributeValueMemberBOOL{Value: true}, ":attempt": num(attempt),
		":queued": str(d.Queued.UTC().Format(time.RFC3339Nano)), ":count": num(d.Count),
	}
	names := map[string]string{"#count": "Count"}
	if len(d.Items) > 0 {
		items, err := attributevalue.Marshal(d.Items)
		if err != nil {
			return err
		}
		update += ", #items = :items"
		values[":items"] = items
		names["#items"] = "Items"
	}
	if d.Next != "" {
		update += ", #next = :next"
		values[":next"] = str(d.Next)
		names["#next"] = "Next"
	}
	_, err := s.updated(ctx, key(k.pk, k.sk), itemUpdate{expr: update, cond: "Attempt = :attempt AND attribute_not_exists(Done)",
		values: values, names: names})
	if isConditionFailed(err) {
		return fmt.Errorf("finish fan-out %s, attempt %d: %w", k.sk, attempt, ErrSuperseded)
	}
	if err != nil {
		return fmt.Errorf("finish fan-out %s: %w", k.sk, err)
	}
	return nil
}

// FanoutClaim reads claim k; one never made is ErrNotFound.
func (s *Store) FanoutClaim(ctx context.Context, k FanoutKey) (model.FanoutClaim, error) {
	var it fanoutItem
	if err := s.getItem(ctx, k.pk, k.sk, "fan-out claim "+k.sk, &it); err != nil {
		return model.FanoutClaim{}, err
	}
	return it.claim(), nil
}

// WebsitesAfter lists up to limit websites of every account, in the order of their keys, after
// the one the cursor after names ("" from the first); next is the cursor of the last one
// listed when more follow, else "". The daily fan-out walks the listing a page at a time, so
// that no invocation reads more than a page of it.
func (s *Store) WebsitesAfter(ctx context.Context, after string, limit int) (refs []model.SiteRef, next string, err error) {
	in := prefixQuery(s.table, sitesPK, "", false)
	if after != "" {
		in.KeyConditionExpression = aws.String("PK = :pk AND SK > :after")
		in.ExpressionAttributeValues[":after"] = str(after)
	}
	in.Limit = aws.Int32(int32(limit + 1)) // one more tells whether more follow
	items, err := query[siteEntryItem](ctx, s, in, limit+1)
	if err != nil {
		return nil, "", fmt.Errorf("list websites: %w", err)
	}
	if len(items) > limit {
		items, next = items[:limit], items[limit-1].SK
	}
	return values(items, siteEntryItem.ref), next, nil
}
