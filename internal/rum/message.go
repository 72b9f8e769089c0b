package rum

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"slices"
	"time"
)

// View is one page view as the collect endpoint queues it: validated, with its page key,
// country and UTC day resolved.
type View struct {
	// ID identifies the page view from collect to the fold, so that it counts once however
	// often the queues deliver it (see NewViewID).
	ID      string
	Day     string // yyyymmdd
	Page    string // normalized path
	Country string // ISO 3166-1 alpha-2, or XX; empty when IP is to be placed
	// IP is the client address when the country is not known yet: the aggregator places it
	// and keeps nothing of it.
	IP string
	// Metrics holds the timing metrics and the custom variables.
	Metrics map[string]float64
	// Weight is how many page views this one stands for (1/the website's sample rate); 0
	// means 1.
	Weight uint64
	// Segments are the view's segments but its country, which the aggregator sets when it
	// places the address.
	Segments Segments
	// Pages are the IDs of the monitored pages the view matched.
	Pages []string
	// Attribution is why its Core Web Vitals were what they were; nil without any.
	Attribution *Attribution
}

// TimingNames are the timing metrics in the fixed order of the queue format and the fold.
var TimingNames = func() []string {
	names := make([]string, 0, len(Metrics))
	for name := range Metrics {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}()

// NumTimings is how many timing metrics there are (checked against Metrics at start).
const NumTimings = 16

var timingIndex = func() map[string]int {
	if len(TimingNames) != NumTimings {
		panic("rum: NumTimings is out of date")
	}
	idx := make(map[string]int, NumTimings)
	for i, name := range TimingNames {
		idx[name] = i
	}
	return idx
}()

// TimingIndex is a timing metric's place in TimingNames; false for other names (custom
// variables).
func TimingIndex(name string) (int, bool) {
	i, ok := timingIndex[name]
	return i, ok
}

// WireView is a View as the queues carry it: the timing metrics as an array in TimingNames
// order (-1 where absent), which decodes several times faster than a map, and the custom
// variables. The workers read and regroup views in this form.
type WireView struct {
	ID      string             `json:"i,omitempty"`
	Day     string             `json:"d"`
	Page    string             `json:"p"`
	Country string             `json:"c,omitempty"`
	IP      string             `json:"ip,omitempty"`
	Timings []float64          `json:"t"`
	Custom  map[string]float64 `json:"x,omitempty"`
	Weight  uint64             `json:"k,omitempty"`
	// Segments carries the country too once the aggregator has placed the view.
	Segments    Segments     `json:"s,omitempty"`
	Pages       []string     `json:"g,omitempty"`
	Attribution *Attribution `json:"a,omitempty"`
}

// Weighted is how many page views the view stands for.
func (v *WireView) Weighted() uint64 { return max(v.Weight, 1) }

// Wire is the view in the queue's form.
func (v View) Wire() WireView {
	w := WireView{ID: v.ID, Day: v.Day, Page: v.Page, Country: v.Country, IP: v.IP, Timings: make([]float64, NumTimings),
		Weight: v.Weight, Segments: v.Segments, Pages: v.Pages, Attribution: v.Attribution}
	for i := range w.Timings {
		w.Timings[i] = -1
	}
	for name, x := range v.Metrics {
		if i, ok := timingIndex[name]; ok {
			w.Timings[i] = x
		} else {
			if w.Custom == nil {
				w.Custom = map[string]float64{}
			}
			w.Custom[name] = x
		}
	}
	return w
}

// view is the queue's view as a View.
func (w WireView) view() View {
	v := View{ID: w.ID, Day: w.Day, Page: w.Page, Country: w.Country, IP: w.IP, Metrics: map[string]float64{},
		Weight: w.Weight, Segments: w.Segments, Pages: w.Pages, Attribution: w.Attribution}
	for i, x := range w.Timings {
		if i < NumTimings && x >= 0 {
			v.Metrics[TimingNames[i]] = x
		}
	}
	for name, x := range w.Custom {
		v.Metrics[name] = x
	}
	return v
}

// Batch is one message of the beacon queue: page views of one website, which the rebatcher
// appends to the website's log. (A message of the aggregator's FIFO queue is a WireBatch too:
// without views, it asks to fold the website's log.)
type Batch struct {
	ID      string `json:"id"`
	Account string `json:"a"`
	Website string `json:"w"`
	Views   []View `json:"v"`
}

// WireBatch is a Batch as the workers read it.
type WireBatch struct {
	ID      string     `json:"id"`
	Account string     `json:"a"`
	Website string     `json:"w"`
	Views   []WireView `json:"v"`
}

// Check tells whether a message names its batch and website.
func (b WireBatch) Check() error {
	if b.ID == "" || b.Account == "" || b.Website == "" {
		return errors.New("a batch of page views needs id, account and website")
	}
	return nil
}

// A view ID is 12 bytes in hex: the Unix second the view was collected (4 bytes, big-endian),
// then 8 random bytes. The aggregator keeps the IDs it folded, sorted, with the view's day.
const viewIDBytes = 12

// NewViewID returns a fresh view ID for a view collected at t.
func NewViewID(t time.Time) string {
	var b [viewIDBytes]byte
	binary.BigEndian.PutUint32(b[:4], uint32(t.Unix()))
	_, _ = rand.Read(b[4:])
	return hex.EncodeToString(b[:])
}

// ViewKey is a view ID as bytes.
type ViewKey [viewIDBytes]byte

// ParseViewID reads a view ID; false for an ID that is not one (views queued before IDs
// existed have none, and count as they come).
func ParseViewID(id string) (ViewKey, bool) {
	var k ViewKey
	if len(id) != 2*viewIDBytes {
		return k, false
	}
	if _, err := hex.Decode(k[:], []byte(id)); err != nil {
		return k, false
	}
	return k, true
}
