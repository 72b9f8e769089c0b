package metrics

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/openvitals/openvitals/internal/store"
)

// Dated is one day's values from one source (a lab result, a user-experience record or search
// analytics).
type Dated struct {
	Day    string // yyyymmdd
	Values Values
}

// Listing is a page on one device as the lists show it: its values by day, oldest first, per
// source. Search analytics are per page, so both devices of a page have the same.
type Listing struct {
	Page            store.Page
	Device          string
	Lab, UX, Search []Dated
}

// Listing is the series as values by day.
func (s Series) Listing() Listing {
	l := Listing{Page: s.Page, Device: s.Device}
	for _, r := range s.Lab {
		l.Lab = append(l.Lab, Dated{r.Day, LabValues(r)})
	}
	for _, r := range s.UX {
		l.UX = append(l.UX, Dated{r.Day, UXValues(r)})
	}
	for _, r := range s.Search {
		l.Search = append(l.Search, Dated{r.Day, SearchValues(r)})
	}
	return l
}

// Days merges the sources by day, oldest first: one Dated for every day with any value.
func (l Listing) Days() []Dated {
	byDay := map[string]Values{}
	for _, src := range [][]Dated{l.Lab, l.UX, l.Search} {
		for _, d := range src {
			if byDay[d.Day] == nil {
				byDay[d.Day] = make(Values, len(d.Values))
			}
			maps.Copy(byDay[d.Day], d.Values)
		}
	}
	out := make([]Dated, 0, len(byDay))
	for _, day := range slices.Sorted(maps.Keys(byDay)) {
		out = append(out, Dated{day, byDay[day]})
	}
	return out
}

// Latest are the listing's latest values: the lab fields, the ux_* fields and the search
// fields each averaged over their own last 3 days present. It is nil when the listing is empty.
func (l Listing) Latest() Values {
	if len(l.Lab) == 0 && len(l.UX) == 0 && len(l.Search) == 0 {
		return nil
	}
	vals := Values{}
	for _, src := range [][]Dated{l.Lab, l.UX, l.Search} {
		days := make([]Values, len(src))
		for i, d := range src {
			days[i] = d.Values
		}
		maps.Copy(vals, Latest(days))
	}
	return vals
}

// A page's summary is its listings on both devices, kept in its row (store.PageRow) so that
// the lists read one item per page. It is binary and compact, as a list reads thousands:
//
//	format byte
//	for each device (Devices order): its lab section, then its user-experience section
//	the search section
//
// A section is its field names (uvarint count, then each as uvarint length and bytes), its days
// (uvarint count), and per day: the day as a uvarint yyyymmdd difference from the day before
// (the first from 0), a bitmap of the fields it has, and each present value as a varint
// difference from the field's value on the last day that had it, in its unit of rounding. Day
// to day values change little, so most take one or two bytes.
const summaryFormat = 1

// errSummaryFormat means a summary of another format (or none): it is made again.
var errSummaryFormat = errors.New("summary of an unknown format")

// scale is what a field's rounded value is multiplied by to be a whole number (see Round).
func scale(field string) float64 {
	switch field {
	case "cls", "ux_cls":
		return 10000
	case "CTR":
		return 100
	}
	return 1
}

// EncodeSummary encodes a page's listings, one per device (any order; search is taken from the
// first).
func EncodeSummary(ls []Listing) ([]byte, error) {
	buf := []byte{summaryFormat}
	var err error
	for _, device := range Devices {
		i := slices.IndexFunc(ls, func(l Listing) bool { return l.Device == device })
		var l Listing
		if i >= 0 {
			l = ls[i]
		}
		if buf, err = appendSection(buf, l.Lab); err != nil {
			return nil, err
		}
		if buf, err = appendSection(buf, l.UX); err != nil {
			return nil, err
		}
	}
	var search []Dated
	if len(ls) > 0 {
		search = ls[0].Search
	}
	return appendSection(buf, search)
}

func appendSection(buf []byte, days []Dated) ([]byte, error) {
	fieldSet := map[string]bool{}
	for _, d := range days {
		for f := range d.Values {
			fieldSet[f] = true
		}
	}
	fields := slices.Sorted(maps.Keys(fieldSet))
	buf = binary.AppendUvarint(buf, uint64(len(fields)))
	for _, f := range fields {
		buf = binary.AppendUvarint(buf, uint64(len(f)))
		buf = append(buf, f...)
	}
	buf = binary.AppendUvarint(buf, uint64(len(days)))
	last := make([]int64, len(fields))
	prevDay := uint64(0)
	bitmap := make([]byte, (len(fields)+7)/8)
	for _, d := range days {
		day, err := strconv.ParseUint(d.Day, 10, 32)
		if err != nil || day < prevDay {
			return nil, fmt.Errorf("summary: day %q out of order", d.Day)
		}
		buf = binary.AppendUvarint(buf, day-prevDay)
		prevDay = day
		clear(bitmap)
		for i, f := range fields {
			if _, ok := d.Values[f]; ok {
				bitmap[i/8] |= 1 << (i % 8)
			}
		}
		buf = append(buf, bitmap...)
		for i, f := range fields {
			v, ok := d.Values[f]
			if !ok {
				continue
			}
			scaled := v * scale(f)
			if math.IsNaN(scaled) || math.Abs(scaled) > 1<<53 {
				return nil, fmt.Errorf("summary: %s %v out of range", f, v)
			}
			n := int64(math.Round(scaled))
			buf = binary.AppendVarint(buf, n-last[i])
			last[i] = n
		}
	}
	return buf, nil
}

// DecodeSummary returns a page's listings from its summary, one per device in Devices order,
// with the days from day from (yyyymmdd) on.
func DecodeSummary(p store.Page, b []byte, from string) ([]Listing, error) {
	if len(b) == 0 || b[0] != summaryFormat {
		return nil, errSummaryFormat
	}
	d := decoder{b: b[1:]}
	first, err := strconv.ParseUint(from, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("summary: day %q: %w", from, err)
	}
	out := make([]Listing, len(Devices))
	for i, device := range Devices {
		out[i] = Listing{Page: p, Device: device, Lab: d.section(first), UX: d.section(first)}
	}
	search := d.section(first)
	for i := range out {
		out[i].Search = search
	}
	if d.err != nil {
		return nil, d.err
	}
	return out, nil
}

// decoder reads a summary; the first error sticks and ends reading.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errors.New("summary: truncated")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errors.New("summary: truncated")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if uint64(len(d.b)) < n {
		d.err = errors.New("summary: truncated")
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

// section reads one section, keeping the days from day first on.
func (d *decoder) section(first uint64) []Dated {
	nf := d.uvarint()
	if nf > 256 {
		d.err = errors.New("summary: too many fields")
		return nil
	}
	fields := make([]string, nf)
	scales := make([]float64, nf)
	for i := range fields {
		fields[i] = string(d.bytes(d.uvarint()))
		scales[i] = scale(fields[i])
	}
	nd := d.uvarint()
	if d.err != nil || nd > 10000 {
		if d.err == nil {
			d.err = errors.New("summary: too many days")
		}
		return nil
	}
	var out []Dated
	last := make([]int64, nf)
	day := uint64(0)
	for range nd {
		day += d.uvarint()
		bitmap := d.bytes((nf + 7) / 8)
		keep := day >= first
		var vals Values
		if keep {
			vals = make(Values, nf)
		}
		for i := range fields {
			if bitmap == nil || bitmap[i/8]&(1<<(i%8)) == 0 {
				continue
			}
			last[i] += d.varint()
			if keep {
				vals[fields[i]] = float64(last[i]) / scales[i]
			}
		}
		if d.err != nil {
			return nil
		}
		if keep {
			out = append(out, Dated{strconv.FormatUint(day, 10), vals})
		}
	}
	return out
}

// windowStart is the first day (yyyymmdd) of the window that ends on the day of now.
func windowStart(now time.Time) string { return store.Day(now.AddDate(0, 0, -(WindowDays - 1))) }
