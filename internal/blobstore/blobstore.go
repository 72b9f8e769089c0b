// Package blobstore keeps large objects (raw audit reports, screenshots) in S3.
package blobstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// ErrNotFound is returned (wrapped) for a missing object.
var ErrNotFound = errors.New("object not found")

// Object keys partition like the table: everything of a website under its prefix, everything
// of a page or test under theirs, so that a purge is one listing. The keys of what a lab audit
// stores are internal/artifact's.

// WebsitePrefix is the key prefix of every object of a website.
func WebsitePrefix(account, website string) string { return account + "/" + website + "/" }

// PagePrefix is the key prefix of every object of a page.
func PagePrefix(account, website, page string) string {
	return WebsitePrefix(account, website) + "pages/" + page + "/"
}

// TestPrefix is the key prefix of every object of a multistep test.
func TestPrefix(account, website, test string) string {
	return WebsitePrefix(account, website) + "tests/" + test + "/"
}

// RUMDayKey is the key of generation gen, written by the writer tagged tag, of the object
// holding a website's real-user tables of a UTC day (internal/rumstore); RUMLogKey that of a
// large entry of its log of page views waiting to be folded. Both are under the website's
// prefix, so that a purge removes them.
func RUMDayKey(account, website, day string, gen int64, tag string) string {
	return fmt.Sprintf("%srum/%s/%010d-%s", WebsitePrefix(account, website), day, gen, tag)
}

// RUMLogKey: see RUMDayKey.
func RUMLogKey(account, website, key string) string {
	return WebsitePrefix(account, website) + "rum/log/" + key
}

// Bucket reads and writes objects of one S3 bucket.
type Bucket struct {
	s3   *s3.Client
	name string
}

// New returns a Bucket over the named bucket.
func New(client *s3.Client, name string) *Bucket { return &Bucket{s3: client, name: name} }

// Create makes the bucket if it does not exist (the local service and tests use it; in AWS
// the CDK stack owns the bucket).
func (b *Bucket) Create(ctx context.Context) error {
	_, err := b.s3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b.name)})
	var owned *s3types.BucketAlreadyOwnedByYou
	var exists *s3types.BucketAlreadyExists
	if err != nil && !errors.As(err, &owned) && !errors.As(err, &exists) {
		return fmt.Errorf("create bucket %s: %w", b.name, err)
	}
	return nil
}

// Put stores an object.
func (b *Bucket) Put(ctx context.Context, key string, body []byte, contentType string) error {
	_, err := b.s3.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(b.name), Key: aws.String(key),
		Body: bytes.NewReader(body), ContentType: aws.String(contentType),
	})
	if err != nil {
		return fmt.Errorf("put object %s: %w", key, err)
	}
	return nil
}

// Get reads an object.
func (b *Bucket) Get(ctx context.Context, key string) ([]byte, error) {
	out, err := b.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b.name), Key: aws.String(key)})
	var missing *s3types.NoSuchKey
	if errors.As(err, &missing) {
		return nil, fmt.Errorf("%s: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get object %s: %w", key, err)
	}
	defer out.Body.Close()
	return io.ReadAll(out.Body)
}

// GetRange reads n bytes of an object from offset off.
func (b *Bucket) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	out, err := b.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b.name), Key: aws.String(key),
		Range: aws.String(fmt.Sprintf("bytes=%d-%d", off, off+n-1))})
	var missing *s3types.NoSuchKey
	if errors.As(err, &missing) {
		return nil, fmt.Errorf("%s: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get object %s bytes %d+%d: %w", key, off, n, err)
	}
	defer out.Body.Close()
	body, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, fmt.Errorf("get object %s bytes %d+%d: %w", key, off, n, err)
	}
	if int64(len(body)) != n {
		return nil, fmt.Errorf("get object %s bytes %d+%d: %d bytes came", key, off, n, len(body))
	}
	return body, nil
}

// Delete removes objects, 1000 a request; a missing one is no error.
func (b *Bucket) Delete(ctx context.Context, keys ...string) error {
	_, err := b.deleteKeys(ctx, keys)
	return err
}

// deleteKeys removes objects, 1000 a request, and says how many it removed before an error.
func (b *Bucket) deleteKeys(ctx context.Context, keys []string) (int, error) {
	deleted := 0
	for start := 0; start < len(keys); start += 1000 {
		batch := keys[start:min(start+1000, len(keys))]
		ids := make([]s3types.ObjectIdentifier, len(batch))
		for i, k := range batch {
			ids[i] = s3types.ObjectIdentifier{Key: aws.String(k)}
		}
		out, err := b.s3.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: aws.String(b.name), Delete: &s3types.Delete{Objects: ids, Quiet: aws.Bool(true)},
		})
		if err != nil {
			return deleted, fmt.Errorf("delete objects: %w", err)
		}
		if len(out.Errors) > 0 {
			e := out.Errors[0]
			return deleted, fmt.Errorf("delete object %s: %s", aws.ToString(e.Key), aws.ToString(e.Message))
		}
		deleted += len(batch)
	}
	return deleted, nil
}

// Keys lists the keys under a prefix.
func (b *Bucket) Keys(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	p := s3.NewListObjectsV2Paginator(b.s3, &s3.ListObjectsV2Input{Bucket: aws.String(b.name), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list objects %s: %w", prefix, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	return keys, nil
}

// DeletePrefix deletes every object under a prefix, 1000 a request, and says how many.
func (b *Bucket) DeletePrefix(ctx context.Context, prefix string) (int, error) {
	keys, err := b.Keys(ctx, prefix)
	if err != nil {
		return 0, err
	}
	n, err := b.deleteKeys(ctx, keys)
	if err != nil {
		return n, fmt.Errorf("%s: %w", prefix, err)
	}
	return n, nil
}

// DeleteBefore deletes the objects under prefix whose key, after the prefix, sorts before
// before (keys that begin with a day, yyyymmdd, before a day), and says how many. The listing
// stops at the first key that does not, so that it reads only what it deletes and a page more.
func (b *Bucket) DeleteBefore(ctx context.Context, prefix, before string) (int, error) {
	var keys []string
	p := s3.NewListObjectsV2Paginator(b.s3, &s3.ListObjectsV2Input{Bucket: aws.String(b.name), Prefix: aws.String(prefix)})
list:
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("list objects %s: %w", prefix, err)
		}
		for _, o := range page.Contents {
			k := aws.ToString(o.Key)
			if k >= prefix+before {
				break list
			}
			keys = append(keys, k)
		}
	}
	return b.deleteKeys(ctx, keys)
}

// DeleteOlder deletes the objects under prefix last written before t, and says how many.
func (b *Bucket) DeleteOlder(ctx context.Context, prefix string, t time.Time) (int, error) {
	var keys []string
	p := s3.NewListObjectsV2Paginator(b.s3, &s3.ListObjectsV2Input{Bucket: aws.String(b.name), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("list objects %s: %w", prefix, err)
		}
		for _, o := range page.Contents {
			if o.LastModified != nil && o.LastModified.Before(t) {
				keys = append(keys, aws.ToString(o.Key))
			}
		}
	}
	return b.deleteKeys(ctx, keys)
}
