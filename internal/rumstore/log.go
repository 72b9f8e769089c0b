package rumstore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/model"
)

// inlineLog is the largest entry kept in the table itself: a write unit per KB there, while
// an object costs the same as four units whatever its size.
const inlineLog = 4 << 10

// logMargin is how far before a compaction's start the next one reads the log again: longer
// than any append can take, so that an entry whose key was taken before the compaction started
// but which was written after it read the log is still read.
const logMargin = 10 * time.Minute

// LogKey is the key of a log entry written at t with an ID: it sorts by time.
func LogKey(t time.Time, id string) string { return fmt.Sprintf("%013d#%s", t.UnixMilli(), id) }

// Append writes entries to their websites' logs: small ones in the table, the data of large
// ones in objects first.
func (s *Store) Append(ctx context.Context, chunks []model.RUMChunk) error {
	big := make([]int, 0, len(chunks))
	for i, c := range chunks {
		if len(c.Data) > inlineLog {
			big = append(big, i)
		}
	}
	err := forEach(ctx, big, readConcurrency, func(i int) error {
		c := &chunks[i]
		key := blobstore.RUMLogKey(c.Account, c.Website, c.Key)
		if err := s.bucket.Put(ctx, key, c.Data, "application/octet-stream"); err != nil {
			return err
		}
		c.Object, c.Data = key, nil
		return nil
	})
	if err != nil {
		return err
	}
	return s.table.PutRUMLog(ctx, chunks)
}

// Pending reads the entries of a website's log not folded yet, in order, with their data, and
// the mark they were read from.
func (s *Store) Pending(ctx context.Context, account, website string) ([]model.RUMChunk, model.RUMLogMark, error) {
	mark, err := s.table.RUMLogMark(ctx, account, website)
	if err != nil {
		return nil, mark, err
	}
	all, err := s.table.RUMLog(ctx, account, website, mark.From)
	if err != nil {
		return nil, mark, err
	}
	chunks := all[:0]
	for _, c := range all {
		if !slices.Contains(mark.Done, c.Key) {
			chunks = append(chunks, c)
		}
	}
	idx := make([]int, 0, len(chunks))
	for i, c := range chunks {
		if c.Object != "" {
			idx = append(idx, i)
		}
	}
	err = forEach(ctx, idx, readConcurrency, func(i int) error {
		data, err := s.bucket.Get(ctx, chunks[i].Object)
		if err != nil {
			return fmt.Errorf("RUM log entry %s: %w", chunks[i].Key, err)
		}
		chunks[i].Data = data
		return nil
	})
	return chunks, mark, err
}

// Folded records that a compaction which started at start folded the given entries, read from
// mark, and removes their objects. The next compaction reads the log from logMargin before
// start, skipping the entries folded since.
func (s *Store) Folded(ctx context.Context, account, website string, mark model.RUMLogMark, folded []model.RUMChunk, start time.Time) error {
	from := fmt.Sprintf("%013d", start.Add(-logMargin).UnixMilli())
	next := model.RUMLogMark{From: max(from, mark.From)}
	for _, k := range mark.Done {
		if k >= next.From {
			next.Done = append(next.Done, k)
		}
	}
	var objects []string
	for _, c := range folded {
		if c.Key >= next.From {
			next.Done = append(next.Done, c.Key)
		}
		if c.Object != "" {
			objects = append(objects, c.Object)
		}
	}
	if err := s.table.PutRUMLogMark(ctx, account, website, next); err != nil {
		return err
	}
	if err := s.bucket.Delete(ctx, objects...); err != nil {
		// They expire with the bucket's rule; the mark says they were folded.
		s.log.WarnContext(ctx, "delete folded RUM log objects", "website", website, "err", err)
	}
	return nil
}
