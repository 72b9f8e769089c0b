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

	"github.com/openvitals/openvitals/internal/lighthouse"
	"github.com/openvitals/openvitals/internal/model"
)

// Dated is one day's values from one source (a lab result, a user-experience record or search
// analytics).
type Dated struct {
	Day    string // yyyymmdd
	Values Values
}

// Section is one source's values by day, as columns, so that the lists handle thousands of
// days without a map per day: Fields name the columns, Days the rows (oldest first), and
// Vals holds row after row, NaN where a field was not measured that day.
type Section struct {
	Fields []string
	Days   []string
	Vals   []float64
}

// NewSection is the section of days (oldest first).
func NewSection(days []Dated) Section {
	set := map[string]bool{}
	for _, d := range days {
		for f := range d.Values {
			set[f] = true
		}
	}
	s := Section{Fields: slices.Sorted(maps.Keys(set)), Days: make([]string, len(days))}
	s.Vals = make([]float64, 0, len(days)*len(s.Fields))
	for i, d := range days {
		s.Days[i] = d.Day
		for _, f := range s.Fields {
			v, ok := d.Values[f]
			if !ok {
				v = math.NaN()
			}
			s.Vals = append(s.Vals, v)
		}
	}
	return s
}

// Column is where field is in the section, -1 when it has none.
func (s Section) Column(field string) int { return slices.Index(s.Fields, field) }

// Value is the field in column col on day row; false where it was not measured.
func (s Section) Value(row, col int) (float64, bool) {
	if row < 0 || col < 0 {
		return 0, false
	}
	v := s.Vals[row*len(s.Fields)+col]
	return v, !math.IsNaN(v)
}

// Dated are the section's days as values.
func (s Section) Dated() []Dated {
	out := make([]Dated, len(s.Days))
	for i, day := range s.Days {
		vals := Values{}
		for j, f := range s.Fields {
			if v, ok := s.Value(i, j); ok {
				vals[f] = v
			}
		}
		out[i] = Dated{day, vals}
	}
	return out
}

// Latest averages each field over the last LatestDays days, over those that have it,
// rounded; nil without a day. Lab days count only when measured by the newest day's method
// (latestFrom).
func (s Section) Latest() Values {
	if len(s.Days) == 0 {
		return nil
	}
	from := s.latestFrom()
	out := Values{}
	for j, f := range s.Fields {
		if v, ok := s.average(from, j); ok {
			out[f] = v
		}
	}
	return out
}

// latestFrom is the first row "latest" averages, to the last: the last LatestDays days,
// stopping at a day measured by another method than the newest day (MethodField): a switch of
// method moves every level, and a mean across it would mix a simulated number with a
// measured one. A row index, not a list: the pages list asks it of every field of thousands
// of listings.
func (s Section) latestFrom() int {
	n := len(s.Days)
	from := max(0, n-LatestDays)
	col := s.Column(MethodField)
	newest, ok := s.Value(n-1, col)
	if !ok {
		return from
	}
	for i := n - 2; i >= from; i-- {
		if v, ok := s.Value(i, col); ok && v != newest {
			return i + 1
		}
	}
	return from
}

// average is column col averaged over the rows from from to the last that have it, rounded.
func (s Section) average(from, col int) (float64, bool) {
	sum, n := 0.0, 0
	for i := from; i < len(s.Days); i++ {
		if v, ok := s.Value(i, col); ok {
			sum += v
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return Round(s.Fields[col], sum/float64(n)), true
}

// Listing is a page on one device as the lists show it: its values by day per source. Search
// analytics are per page, so both devices of a page have the same.
type Listing struct {
	Page            model.Page
	Device          string
	Lab, UX, Search Section
	// Opportunities are those of the latest lab result, with their savings; from a summary
	// without their title and description.
	Opportunities []model.Opportunity
}

// Listing is the series as values by day.
func (s Series) Listing() Listing {
	l := Listing{Page: s.Page, Device: s.Device}
	if n := len(s.Lab); n > 0 {
		l.Opportunities = s.Lab[n-1].Opportunities
	}
	l.Lab = NewSection(dated(s.Lab, func(r model.LabResult) string { return r.Day }, LabValues))
	l.UX = NewSection(dated(s.UX, func(r model.UXResult) string { return r.Day }, UXValues))
	l.Search = NewSection(dated(s.Search, func(r model.SearchResult) string { return r.Day }, SearchValues))
	return l
}

func dated[T any](rs []T, day func(T) string, values func(T) Values) []Dated {
	out := make([]Dated, len(rs))
	for i, r := range rs {
		out[i] = Dated{day(r), values(r)}
	}
	return out
}

// sections are the listing's sources, in the order DayRow.Rows refers to them.
func (l *Listing) sections() [3]*Section { return [3]*Section{&l.Lab, &l.UX, &l.Search} }

// DayRow is one day of a listing: its row in each source (lab, user experience, search), -1
// where the source has none that day.
type DayRow struct {
	Day  string
	Rows [3]int
}

// DayRows merges the sources by day, oldest first: one DayRow for every day with any value.
func (l *Listing) DayRows() []DayRow {
	secs := l.sections()
	var next [3]int
	var out []DayRow
	for {
		day := ""
		for k, s := range secs {
			if next[k] < len(s.Days) && (day == "" || s.Days[next[k]] < day) {
				day = s.Days[next[k]]
			}
		}
		if day == "" {
			return out
		}
		r := DayRow{Day: day, Rows: [3]int{-1, -1, -1}}
		for k, s := range secs {
			if next[k] < len(s.Days) && s.Days[next[k]] == day {
				r.Rows[k] = next[k]
				next[k]++
			}
		}
		out = append(out, r)
	}
}

// Field is where a field is in a listing: its source and column (source -1 when absent).
type Field struct{ source, col int }

// Field locates a field in the listing.
func (l *Listing) Field(name string) Field {
	for k, s := range l.sections() {
		if c := s.Column(name); c >= 0 {
			return Field{k, c}
		}
	}
	return Field{-1, -1}
}

// LatestValue is field f as Latest gives it (averaged over its source's last LatestDays days
// that have it, rounded), read from the columns without building maps: the pages list asks
// it of every field of thousands of listings.
func (l *Listing) LatestValue(f Field) (float64, bool) {
	if f.source < 0 {
		return 0, false
	}
	s := l.sections()[f.source]
	return s.average(s.latestFrom(), f.col)
}

// Method is the measurement method of the listing's newest lab day (model.MethodApplied or
// model.MethodSimulated), the one its latest lab values were measured by; "" without a lab
// day or a summary that kept it.
func (l *Listing) Method() string {
	n := len(l.Lab.Days)
	if n == 0 {
		return ""
	}
	return methodOf(l.Lab.Value(n-1, l.Lab.Column(MethodField)))
}

// Empty tells whether the listing has no day in any source (Latest is nil).
func (l *Listing) Empty() bool {
	return len(l.Lab.Days) == 0 && len(l.UX.Days) == 0 && len(l.Search.Days) == 0
}

// Value is field f on day d; false where it was not measured.
func (l *Listing) Value(d DayRow, f Field) (float64, bool) {
	if f.source < 0 {
		return 0, false
	}
	return l.sections()[f.source].Value(d.Rows[f.source], f.col)
}

// Days merges the sources by day, oldest first: one Dated for every day with any value.
func (l Listing) Days() []Dated {
	var out []Dated
	for _, d := range l.DayRows() {
		vals := Values{}
		for k, s := range l.sections() {
			for j, f := range s.Fields {
				if v, ok := s.Value(d.Rows[k], j); ok {
					vals[f] = v
				}
			}
		}
		out = append(out, Dated{d.Day, vals})
	}
	return out
}

// Latest are the listing's latest values: the lab fields, the ux_* fields and the search
// fields each averaged over their own last 3 days present. It is nil when the listing is empty.
func (l Listing) Latest() Values {
	if l.Empty() {
		return nil
	}
	vals := Values{}
	for _, s := range l.sections() {
		maps.Copy(vals, s.Latest())
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

// A page's opportunities are those of its latest lab result on each device with their
// savings, kept in its row beside the summary (store.PageRow.Opportunities) so that the
// website's opportunities list reads the rows without their days:
//
//	format byte
//	for each device (Devices order): the day of its latest lab result (uvarint yyyymmdd, 0
//	without one), then its opportunities' count, and each one's audit id (uvarint length and
//	bytes), category (uvarint, its place in the report's order), estimated ms and bytes
//	(uvarints) and metric savings (uvarint count, then each as its name and a uvarint in its
//	unit of rounding: ms, or CLS in ten-thousandths)
//
// Their texts are the website's opportunity items'.
const opportunitiesFormat = 1

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

// listingOf is the listing of device among ls, or an empty one.
func listingOf(ls []Listing, device string) Listing {
	if i := slices.IndexFunc(ls, func(l Listing) bool { return l.Device == device }); i >= 0 {
		return ls[i]
	}
	return Listing{}
}

// EncodeSummary encodes a page's listings, one per device (any order; search is taken from the
// first).
func EncodeSummary(ls []Listing) ([]byte, error) {
	buf := []byte{summaryFormat}
	var err error
	for _, device := range Devices {
		l := listingOf(ls, device)
		if buf, err = appendSection(buf, l.Lab); err != nil {
			return nil, err
		}
		if buf, err = appendSection(buf, l.UX); err != nil {
			return nil, err
		}
	}
	var search Section
	if len(ls) > 0 {
		search = ls[0].Search
	}
	return appendSection(buf, search)
}

// EncodeOpportunities encodes the latest opportunities of a page's listings, one per device
// (any order).
func EncodeOpportunities(ls []Listing) ([]byte, error) {
	buf := []byte{opportunitiesFormat}
	var err error
	for _, device := range Devices {
		l := listingOf(ls, device)
		if buf, err = appendOpportunities(buf, l.Lab, l.Opportunities); err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// DecodeOpportunities returns a page's listings, one per device in Devices order, with only
// their latest opportunities, none where their lab result is before day from (yyyymmdd).
func DecodeOpportunities(p model.Page, b []byte, from string) ([]Listing, error) {
	if len(b) == 0 || b[0] != opportunitiesFormat {
		return nil, errSummaryFormat
	}
	first, err := strconv.ParseUint(from, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("opportunities: day %q: %w", from, err)
	}
	d := decoder{b: b[1:]}
	out := make([]Listing, len(Devices))
	for i, device := range Devices {
		out[i] = Listing{Page: p, Device: device, Opportunities: d.opportunities(first)}
	}
	return out, d.err
}

// appendOpportunities appends the opportunities of the lab section's last day.
func appendOpportunities(buf []byte, lab Section, opps []model.Opportunity) ([]byte, error) {
	if len(lab.Days) == 0 {
		return binary.AppendUvarint(buf, 0), nil
	}
	day, err := strconv.ParseUint(lab.Days[len(lab.Days)-1], 10, 32)
	if err != nil {
		return nil, fmt.Errorf("summary: day %q: %w", lab.Days[len(lab.Days)-1], err)
	}
	buf = binary.AppendUvarint(buf, day)
	buf = binary.AppendUvarint(buf, uint64(len(opps)))
	whole := func(v float64) uint64 { return uint64(math.Round(max(0, min(v, 1<<53)))) }
	for _, o := range opps {
		buf = appendString(buf, o.ID)
		buf = binary.AppendUvarint(buf, uint64(lighthouse.CategoryOrder(o.Category)))
		buf = binary.AppendUvarint(buf, whole(o.SavingsMs))
		buf = binary.AppendUvarint(buf, whole(o.SavingsBytes))
		buf = binary.AppendUvarint(buf, uint64(len(o.MetricSavings)))
		for _, m := range slices.Sorted(maps.Keys(o.MetricSavings)) {
			buf = appendString(buf, m)
			buf = binary.AppendUvarint(buf, whole(o.MetricSavings[m]*savingScale(m)))
		}
	}
	return buf, nil
}

// savingScale is what a metric saving is multiplied by to be a whole number: CLS is kept to
// ten-thousandths, times to the millisecond.
func savingScale(metric string) float64 {
	if metric == "CLS" {
		return 10000
	}
	return 1
}

func appendString(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

func appendSection(buf []byte, s Section) ([]byte, error) {
	buf = binary.AppendUvarint(buf, uint64(len(s.Fields)))
	for _, f := range s.Fields {
		buf = binary.AppendUvarint(buf, uint64(len(f)))
		buf = append(buf, f...)
	}
	buf = binary.AppendUvarint(buf, uint64(len(s.Days)))
	last := make([]int64, len(s.Fields))
	scales := make([]float64, len(s.Fields))
	for j, f := range s.Fields {
		scales[j] = scale(f)
	}
	prevDay := uint64(0)
	bitmap := make([]byte, (len(s.Fields)+7)/8)
	for i, d := range s.Days {
		day, err := strconv.ParseUint(d, 10, 32)
		if err != nil || day < prevDay {
			return nil, fmt.Errorf("summary: day %q out of order", d)
		}
		buf = binary.AppendUvarint(buf, day-prevDay)
		prevDay = day
		clear(bitmap)
		for j := range s.Fields {
			if _, ok := s.Value(i, j); ok {
				bitmap[j/8] |= 1 << (j % 8)
			}
		}
		buf = append(buf, bitmap...)
		for j, f := range s.Fields {
			v, ok := s.Value(i, j)
			if !ok {
				continue
			}
			scaled := v * scales[j]
			if math.IsInf(scaled, 0) || math.Abs(scaled) > 1<<53 {
				return nil, fmt.Errorf("summary: %s %v out of range", f, v)
			}
			n := int64(math.Round(scaled))
			buf = binary.AppendVarint(buf, n-last[j])
			last[j] = n
		}
	}
	return buf, nil
}

// DecodeSummary returns a page's listings from its summary, one per device in Devices order,
// with the days from day from (yyyymmdd) on.
func DecodeSummary(p model.Page, b []byte, from string) ([]Listing, error) {
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

func (d *decoder) uvarint() uint64 { return readVarint(d, binary.Uvarint) }

func (d *decoder) varint() int64 { return readVarint(d, binary.Varint) }

// readVarint reads a number with read (binary.Uvarint or binary.Varint).
func readVarint[T int64 | uint64](d *decoder, read func([]byte) (T, int)) T {
	if d.err != nil {
		return 0
	}
	v, n := read(d.b)
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

// opportunities reads a device's latest opportunities, none if their result is before day
// first.
func (d *decoder) opportunities(first uint64) []model.Opportunity {
	day := d.uvarint()
	if day == 0 {
		return nil
	}
	n := d.uvarint()
	if n > 1000 {
		d.err = errors.New("summary: too many opportunities")
		return nil
	}
	out := make([]model.Opportunity, 0, n)
	for range n {
		o := model.Opportunity{ID: string(d.bytes(d.uvarint()))}
		o.Category = lighthouse.CategoryName(int(min(d.uvarint(), 1<<16)))
		o.SavingsMs = float64(d.uvarint())
		o.SavingsBytes = float64(d.uvarint())
		nm := d.uvarint()
		if nm > 16 {
			d.err = errors.New("summary: too many metric savings")
			return nil
		}
		for range nm {
			m := string(d.bytes(d.uvarint()))
			v := float64(d.uvarint()) / savingScale(m)
			if o.MetricSavings == nil {
				o.MetricSavings = map[string]float64{}
			}
			o.MetricSavings[m] = v
		}
		if d.err != nil {
			return nil
		}
		out = append(out, o)
	}
	if day < first {
		return nil
	}
	return out
}

// section reads one section, keeping the days from day first on.
func (d *decoder) section(first uint64) Section {
	nf := d.uvarint()
	if nf > 256 {
		d.err = errors.New("summary: too many fields")
		return Section{}
	}
	s := Section{Fields: make([]string, nf)}
	scales := make([]float64, nf)
	for i := range s.Fields {
		s.Fields[i] = string(d.bytes(d.uvarint()))
		scales[i] = scale(s.Fields[i])
	}
	nd := d.uvarint()
	if d.err != nil || nd > 10000 {
		if d.err == nil {
			d.err = errors.New("summary: too many days")
		}
		return Section{}
	}
	s.Vals = make([]float64, 0, int(nd)*int(nf))
	last := make([]int64, nf)
	row := make([]float64, nf)
	day := uint64(0)
	for range nd {
		day += d.uvarint()
		bitmap := d.bytes((nf + 7) / 8)
		for i := range row {
			row[i] = math.NaN()
			if bitmap == nil || bitmap[i/8]&(1<<(i%8)) == 0 {
				continue
			}
			last[i] += d.varint()
			row[i] = float64(last[i]) / scales[i]
		}
		if d.err != nil {
			return Section{}
		}
		if day >= first {
			s.Days = append(s.Days, strconv.FormatUint(day, 10))
			s.Vals = append(s.Vals, row...)
		}
	}
	return s
}

// windowStart is the first day (yyyymmdd) of the window that ends on the day of now.
func windowStart(now time.Time) string { return model.Day(now.AddDate(0, 0, -(WindowDays - 1))) }
