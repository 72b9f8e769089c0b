package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/openvitals/openvitals/internal/model"
)

// A website's real-user tables of a day live in one S3 object (internal/rumstore); the table
// keeps a small pointer to it per day, and the log of page views waiting to be folded.

func unixOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

type rumDayItem struct {
	PK      string
	SK      string
	Type    string
	Gen     int64
	Object  string
	Prev    string `dynamodbav:",omitempty"`
	Dir     []byte
	Size    int64
	Expires int64 `dynamodbav:"expires,omitempty"`
}

// RUMDays reads the pointers of the given days (yyyymmdd); a day without one is absent.
func (s *Store) RUMDays(ctx context.Context, account, website string, days []string, consistent bool) (map[string]model.RUMDay, error) {
	keys := make([]map[string]ddbtypes.AttributeValue, 0, len(days))
	seen := map[string]bool{}
	for _, d := range days {
		if !seen[d] {
			seen[d] = true
			keys = append(keys, key(websitePK(account, website), rumDaySK(d)))
		}
	}
	items, err := getAll[rumDayItem](ctx, s, keys, consistent, "RUM days")
	if err != nil {
		return nil, err
	}
	out := make(map[string]model.RUMDay, len(items))
	for _, it := range items {
		day := strings.TrimPrefix(it.SK, rumDaySK(""))
		out[day] = model.RUMDay{Day: day, Gen: it.Gen, Object: it.Object, Prev: it.Prev, Dir: it.Dir, Size: it.Size}
	}
	return out, nil
}

// PutRUMDay points a day at generation d.Gen if it still points at prevGen (0: at nothing): a
// second writer, which the FIFO queue should exclude, makes it fail rather than lose a fold.
// DynamoDB deletes the pointer after expires.
func (s *Store) PutRUMDay(ctx context.Context, account, website string, d model.RUMDay, prevGen int64, expires time.Time) error {
	av, err := attributevalue.MarshalMap(rumDayItem{PK: websitePK(account, website), SK: rumDaySK(d.Day), Type: "rum-day",
		Gen: d.Gen, Object: d.Object, Prev: d.Prev, Dir: d.Dir, Size: d.Size, Expires: unixOrZero(expires)})
	if err != nil {
		return err
	}
	in := &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: av, ConditionExpression: aws.String("attribute_not_exists(PK)")}
	if prevGen > 0 {
		in.ConditionExpression = aws.String("Gen = :prev")
		in.ExpressionAttributeValues = map[string]ddbtypes.AttributeValue{":prev": num64(prevGen)}
	}
	_, err = s.db.PutItem(ctx, in)
	if isConditionFailed(err) {
		return fmt.Errorf("RUM day %s changed under this writer", d.Day)
	}
	if err != nil {
		return fmt.Errorf("put RUM day %s: %w", d.Day, err)
	}
	return nil
}

func num64(n int64) ddbtypes.AttributeValue {
	return &ddbtypes.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// rumLogTTL keeps a log entry past the longest it can wait to be folded (its flush message's
// retention in the queue and its dead-letter queue).
const rumLogTTL = 29 * 24 * time.Hour

type rumLogItem struct {
	PK      string
	SK      string
	Type    string
	Views   int
	Data    []byte `dynamodbav:",omitempty"`
	Object  string `dynamodbav:",omitempty"`
	Expires int64  `dynamodbav:"expires"`
}

// PutRUMLog appends chunks to their websites' logs, 25 to a request.
func (s *Store) PutRUMLog(ctx context.Context, chunks []model.RUMChunk) error {
	expires := time.Now().Add(rumLogTTL).Unix()
	items := make([]rumLogItem, len(chunks))
	for i, c := range chunks {
		items[i] = rumLogItem{PK: websitePK(c.Account, c.Website), SK: rumLogSK(c.Key), Type: "rum-log",
			Views: c.Views, Data: c.Data, Object: c.Object, Expires: expires}
	}
	if err := putAll(ctx, s, items, "append to the RUM log"); err != nil {
		return err
	}
	return nil
}

// RUMLog reads, in key order and strongly consistent, a website's log from the key from on.
func (s *Store) RUMLog(ctx context.Context, account, website, from string) ([]model.RUMChunk, error) {
	items, err := query[rumLogItem](ctx, s, s.betweenQuery(websitePK(account, website), rumLogSK(from), rumLogEnd), 0)
	if err != nil {
		return nil, fmt.Errorf("read the RUM log: %w", err)
	}
	return values(items, func(it rumLogItem) model.RUMChunk {
		return model.RUMChunk{Account: account, Website: website, Key: strings.TrimPrefix(it.SK, rumLogSK("")),
			Views: it.Views, Data: it.Data, Object: it.Object}
	}), nil
}

type rumLogMarkItem struct {
	PK   string
	SK   string
	Type string
	From string
	Done []string `dynamodbav:",omitempty"`
}

// RUMLogMark reads how far a website's log was folded (the zero mark: none of it).
func (s *Store) RUMLogMark(ctx context.Context, account, website string) (model.RUMLogMark, error) {
	var it rumLogMarkItem
	if found, err := s.getOr(ctx, websitePK(account, website), rumLogMarkSK, "RUM log mark", &it); !found {
		return model.RUMLogMark{}, err
	}
	return model.RUMLogMark{From: it.From, Done: it.Done}, nil
}

// PutRUMLogMark records how far a website's log was folded. One consumer folds a website at a
// time (its FIFO message group), so the mark is simply replaced.
func (s *Store) PutRUMLogMark(ctx context.Context, account, website string, m model.RUMLogMark) error {
	return s.putItem(ctx, rumLogMarkItem{PK: websitePK(account, website), SK: rumLogMarkSK, Type: "rum-log-mark",
		From: m.From, Done: m.Done}, putAny, "RUM log mark")
}

// RUMLegacyDay reads the tables of a day stored as items, one per table, as they were before
// days became objects, and the day's distinct-page sketch (nil if none).
func (s *Store) RUMLegacyDay(ctx context.Context, account, website, day string) (map[model.RUMCell][]byte, []byte, error) {
	pk := websitePK(account, website)
	out := map[model.RUMCell][]byte{}
	for _, prefix := range []string{rumDayPrefix(day), rumDailyPrefix(day)} {
		items, err := query[rumCellItem](ctx, s, prefixQuery(s.table, pk, prefix, true), 0)
		if err != nil {
			return nil, nil, fmt.Errorf("read RUM day %s: %w", day, err)
		}
		for _, it := range items {
			parts := strings.Split(strings.TrimPrefix(it.SK, prefix), "#")
			if len(parts) != 3 {
				return nil, nil, fmt.Errorf("RUM table %s: not a table's key", it.SK)
			}
			shard, err := strconv.Atoi(parts[2])
			if err != nil {
				return nil, nil, fmt.Errorf("RUM table %s: %w", it.SK, err)
			}
			out[model.RUMCell{Day: day, Dim: parts[0], Metric: parts[1], Shard: shard, Daily: prefix == rumDailyPrefix(day)}] = it.Data
		}
	}
	distinct, err := s.RUMDistinct(ctx, account, website, []string{day}, true)
	if err != nil {
		return nil, nil, err
	}
	return out, distinct[day].Data, nil
}

// DeleteRUMLegacyDay deletes the items a day's tables were stored as before days became
// objects (once its object holds them), and its distinct-page sketch item.
func (s *Store) DeleteRUMLegacyDay(ctx context.Context, account, website, day string) error {
	pk := websitePK(account, website)
	keys := []map[string]ddbtypes.AttributeValue{key(pk, rumDistinctSK(day))}
	for _, prefix := range []string{rumDayPrefix(day), rumDailyPrefix(day)} {
		got, err := s.queryKeys(ctx, prefixQuery(s.table, pk, prefix, true))
		if err != nil {
			return fmt.Errorf("read RUM day %s: %w", day, err)
		}
		keys = append(keys, got...)
	}
	if _, err := s.writeAll(ctx, deleteRequests(keys)); err != nil {
		return fmt.Errorf("delete RUM day %s's items: %w", day, err)
	}
	return nil
}
