package purgeworker

import (
	"context"
	"time"

	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/export"
	"github.com/openvitals/openvitals/internal/model"
)

// WithExports gives the worker the export bucket, whose keys of a website it computes from
// the website's data settings, and the deployment's retention bounds, which resolve a
// website's retention; it returns w.
func (w *Worker) WithExports(exports *blobstore.Bucket, bounds model.RetentionBounds) *Worker {
	w.exports, w.bounds = exports, bounds
	return w
}

// Retain is a website's daily retention pass: it removes what is past the website's retention
// (model.Retention, resolved against the deployment's bounds): its pages' reports with their
// HARs, filmstrips and diagnostics, its test series' artifacts, its real users' day objects,
// its events and its exports. Each is read by the website's own keys, so the pass costs what
// the website holds, whatever the other websites. Running it twice is harmless.
func (w *Worker) Retain(ctx context.Context, job model.PurgeJob) error {
	site, err := w.store.Website(ctx, job.Account, job.Website)
	if model.IsNotFound(err) {
		return nil // deleted since: its purge removes everything
	}
	if err != nil {
		return err
	}
	set, err := w.store.DataSettings(ctx, site)
	if err != nil {
		return err
	}
	r := set.Retention.Resolved(w.bounds)
	today := w.now().UTC()
	counts := map[string]int{}

	pages, err := w.store.Pages(ctx, site)
	if err != nil {
		return err
	}
	// A daily report's key, and each of its artifacts', begins with its day.
	cutoff := model.Cutoff(today, r.Reports)
	for _, p := range pages {
		n, err := w.objects.DeleteBefore(ctx, artifact.PageReportsPrefix(site.Account, site.ID, p.ID), cutoff)
		counts["reports"] += n
		if err != nil {
			return err
		}
	}
	// A series' reports are named by its tests, not days: their age is the object's.
	first, _ := time.Parse(model.DayLayout, model.Cutoff(today, r.Series))
	if counts["series"], err = w.objects.DeleteOlder(ctx, artifact.SeriesReportsPrefix(site.Account, site.ID), first); err != nil {
		return err
	}
	if counts["rum"], err = w.rum.DeleteDaysBefore(ctx, site.Account, site.ID, model.Cutoff(today, r.RUM)); err != nil {
		return err
	}
	if counts["events"], err = w.store.DeleteEventsBefore(ctx, site, model.Cutoff(today, r.Events)); err != nil {
		return err
	}
	if counts["exports"], err = w.deleteExports(ctx, site, set, model.Cutoff(today, r.Exports)); err != nil {
		return err
	}
	w.log.InfoContext(ctx, "retention pass", "account", site.Account, "website", site.ID, "retention", r, "removed", counts)
	return nil
}

// deleteExports removes a website's exports of the days before day (yyyymmdd), from the first
// not known gone, and records that they are.
func (w *Worker) deleteExports(ctx context.Context, site model.Website, set model.DataSettings, day string) (int, error) {
	if w.exports == nil || set.ExportsSince == "" {
		return 0, nil
	}
	from := max(set.ExportsSince, set.ExportsPurgedTo)
	if from >= day {
		return 0, nil
	}
	var keys []string
	for d := range days(from, day) {
		for _, ds := range export.Datasets {
			keys = append(keys, export.Key(ds, site.ID, d))
		}
	}
	if err := w.exports.Delete(ctx, keys...); err != nil {
		return 0, err
	}
	if err := w.store.MarkExports(ctx, site, "", day); err != nil && !model.IsNotFound(err) {
		return len(keys), err
	}
	return len(keys), nil
}

// days yields the days (yyyymmdd) from from to before to.
func days(from, to string) func(func(string) bool) {
	return func(yield func(string) bool) {
		d, err := time.Parse(model.DayLayout, from)
		if err != nil {
			return
		}
		for ; d.Format(model.DayLayout) < to; d = d.AddDate(0, 0, 1) {
			if !yield(d.Format(model.DayLayout)) {
				return
			}
		}
	}
}
