package rum

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The aggregator reads hundreds of thousands of views a second: encoding/json's reflection
// took half of its time. A batch is written and read by the code below instead, which knows
// the queue format: JSON, with each view's attribution as a flat array whose strings
// (selectors, URLs, entities, which repeat from view to view) are indexes into the batch's
// dictionary "z". The reader skips any member it does not know (a newer writer's), so that the
// format can grow.
//
// A view's attribution array: a flags number (1 LCP, 2 INP, 4 CLS), then for LCP its element,
// URL and four phases; for INP its target, type, three phases, the number of scripts and per
// script its URL, function, entity and duration; for CLS its target and time. The reasons the
// back/forward cache did not restore the page are the view's "r", indexes into "z"; the
// interaction that started a soft navigation its "n", the indexes of its target and type.

// MarshalJSON writes a batch of the queue format.
func (b WireBatch) MarshalJSON() ([]byte, error) {
	w := writer{index: map[string]int{}}
	out := make([]byte, 0, 256+len(b.Views)*300)
	out = append(out, `{"id":`...)
	out = appendString(out, b.ID)
	out = append(out, `,"a":`...)
	out = appendString(out, b.Account)
	out = append(out, `,"w":`...)
	out = appendString(out, b.Website)
	// The views first, into a buffer, so that the dictionary is complete before them.
	views := make([]byte, 0, len(b.Views)*300)
	for i := range b.Views {
		if i > 0 {
			views = append(views, ',')
		}
		views = w.view(views, &b.Views[i])
	}
	if len(w.dict) > 0 {
		out = append(out, `,"z":[`...)
		for i, s := range w.dict {
			if i > 0 {
				out = append(out, ',')
			}
			out = appendString(out, s)
		}
		out = append(out, ']')
	}
	out = append(out, `,"v":[`...)
	out = append(out, views...)
	return append(out, "]}"...), nil
}

// MarshalJSON writes the batch in the queue format.
func (b Batch) MarshalJSON() ([]byte, error) {
	w := WireBatch{ID: b.ID, Account: b.Account, Website: b.Website, Views: make([]WireView, len(b.Views))}
	for i, v := range b.Views {
		w.Views[i] = v.Wire()
	}
	return w.MarshalJSON()
}

// UnmarshalJSON reads a batch.
func (b *Batch) UnmarshalJSON(data []byte) error {
	var w WireBatch
	if err := w.UnmarshalJSON(data); err != nil {
		return err
	}
	*b = Batch{ID: w.ID, Account: w.Account, Website: w.Website, Views: make([]View, len(w.Views))}
	for i, v := range w.Views {
		b.Views[i] = v.view()
	}
	return nil
}

type writer struct {
	dict  []string
	index map[string]int
}

func (w *writer) ref(out []byte, s string) []byte {
	i, ok := w.index[s]
	if !ok {
		i = len(w.dict)
		w.index[s] = i
		w.dict = append(w.dict, s)
	}
	return strconv.AppendInt(out, int64(i), 10)
}

// appendString writes a JSON string: quotes, backslashes and control characters escaped,
// invalid UTF-8 replaced.
func appendString(out []byte, s string) []byte {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	out = append(out, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		out = append(out, s[start:i]...)
		switch c {
		case '"', '\\':
			out = append(out, '\\', c)
		default:
			const hex = "0123456789abcdef"
			out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	out = append(out, s[start:]...)
	return append(out, '"')
}

func appendFloat(out []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		f = -1
	}
	return strconv.AppendFloat(out, f, 'g', -1, 64)
}

func (w *writer) view(out []byte, v *WireView) []byte {
	out = append(out, '{')
	if v.ID != "" {
		out = appendString(appendField(out, "i"), v.ID)
	}
	out = appendString(appendField(out, "d"), v.Day)
	out = appendString(appendField(out, "p"), v.Page)
	if v.Country != "" {
		out = appendString(appendField(out, "c"), v.Country)
	}
	if v.IP != "" {
		out = appendString(appendField(out, "ip"), v.IP)
	}
	out = appendList(appendField(out, "t"), v.Timings, appendFloat)
	if len(v.Custom) > 0 {
		out = appendCustom(appendField(out, "x"), v.Custom)
	}
	if v.Weight > 0 {
		out = strconv.AppendUint(appendField(out, "k"), v.Weight, 10)
	}
	if v.Segments != 0 {
		out = strconv.AppendUint(appendField(out, "s"), uint64(v.Segments), 10)
	}
	if len(v.Pages) > 0 {
		out = appendList(appendField(out, "g"), v.Pages, appendString)
	}
	if a := v.Attribution; a != nil {
		out = w.attribution(appendField(out, "a"), a)
		// The back/forward cache's reasons are a member of their own, which readers before
		// them skip.
		if len(a.NotRestored) > 0 {
			out = appendList(appendField(out, "r"), a.NotRestored, w.ref)
		}
		if st := a.Start; st != nil {
			out = appendList(appendField(out, "n"), []string{st.Target, st.Type}, w.ref)
		}
	}
	return append(out, '}')
}

// appendField writes an object member's name, after a comma unless it is the first.
func appendField(out []byte, name string) []byte {
	if out[len(out)-1] != '{' {
		out = append(out, ',')
	}
	out = append(out, '"')
	out = append(out, name...)
	return append(out, `":`...)
}

// appendList writes xs as an array, each element as elem writes it.
func appendList[T any](out []byte, xs []T, elem func([]byte, T) []byte) []byte {
	out = append(out, '[')
	for i, x := range xs {
		if i > 0 {
			out = append(out, ',')
		}
		out = elem(out, x)
	}
	return append(out, ']')
}

// appendCustom writes the custom variables as an object, by name.
func appendCustom(out []byte, custom map[string]float64) []byte {
	out = append(out, '{')
	names := make([]string, 0, len(custom))
	for name := range custom {
		names = append(names, name)
	}
	slices.Sort(names)
	for i, name := range names {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendString(out, name)
		out = append(out, ':')
		out = appendFloat(out, custom[name])
	}
	return append(out, '}')
}

func (w *writer) attribution(out []byte, a *Attribution) []byte {
	flags := 0
	if a.LCP != nil {
		flags |= 1
	}
	if a.INP != nil {
		flags |= 2
	}
	if a.CLS != nil {
		flags |= 4
	}
	out = append(out, '[')
	out = strconv.AppendInt(out, int64(flags), 10)
	nums := func(fs ...float64) {
		for _, f := range fs {
			out = append(out, ',')
			out = appendFloat(out, f)
		}
	}
	refs := func(ss ...string) {
		for _, s := range ss {
			out = append(out, ',')
			out = w.ref(out, s)
		}
	}
	if l := a.LCP; l != nil {
		refs(l.Element, l.URL)
		nums(l.Phases[:]...)
	}
	if i := a.INP; i != nil {
		refs(i.Target, i.Type)
		nums(i.Phases[:]...)
		nums(float64(len(i.Scripts)))
		for _, s := range i.Scripts {
			refs(s.URL, s.Function, s.Entity)
			nums(s.Duration)
		}
	}
	if c := a.CLS; c != nil {
		refs(c.Target)
		nums(c.Time)
	}
	return append(out, ']')
}

// UnmarshalJSON reads a batch of the queue format.
func (b *WireBatch) UnmarshalJSON(data []byte) error {
	r := reader{b: data, src: string(data)}
	*b = WireBatch{}
	err := r.object(func(name []byte) error {
		switch string(name) {
		case "id":
			return r.str(&b.ID)
		case "a":
			return r.str(&b.Account)
		case "w":
			return r.str(&b.Website)
		case "z":
			return r.stringList(&r.dict)
		case "v":
			// An entry's view is some 500 bytes: room for them at once.
			b.Views = make([]WireView, 0, min(len(data)/400+1, 1<<16))
			return r.array(func() error {
				b.Views = append(b.Views, WireView{})
				return r.view(&b.Views[len(b.Views)-1])
			})
		}
		return r.skip()
	})
	if err == nil {
		r.space()
		if r.i != len(r.b) {
			err = r.fail()
		}
	}
	return err
}

var errWire = errors.New("rum: malformed batch")

type reader struct {
	b []byte
	i int
	// src is b as one string: a string without escapes is a substring of it, so that a batch's
	// thousands of strings cost one copy, not one allocation each.
	src  string
	dict []string
	// The views' timings and attribution come from slabs, a few allocations a batch instead
	// of several a view.
	timings []float64
	attrs   slab[Attribution]
	lcps    slab[LCPAttribution]
	inps    slab[INPAttribution]
	clss    slab[CLSAttribution]
	starts  slab[StartAttribution]
	scripts []Script
}

// slab hands out values of T from chunks.
type slab[T any] struct{ buf []T }

// slabChunk is how many values a chunk holds.
const slabChunk = 128

func (s *slab[T]) next() *T {
	if len(s.buf) == cap(s.buf) {
		s.buf = make([]T, 0, slabChunk)
	}
	s.buf = s.buf[:len(s.buf)+1]
	return &s.buf[len(s.buf)-1]
}

// take returns an empty slice of capacity n from buf, which it replaces by a new chunk of
// room for slabChunk such slices when full. Appending past n moves the slice out.
func take[T any](buf *[]T, n int) []T {
	if cap(*buf)-len(*buf) < n {
		*buf = make([]T, 0, slabChunk*n)
	}
	out := (*buf)[len(*buf) : len(*buf) : len(*buf)+n]
	*buf = (*buf)[:len(*buf)+n]
	return out
}

func (r *reader) fail() error { return errWire }

func (r *reader) space() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// peek returns the next byte that is not space, 0 at the end.
func (r *reader) peek() byte {
	r.space()
	if r.i == len(r.b) {
		return 0
	}
	return r.b[r.i]
}

func (r *reader) expect(c byte) error {
	if r.peek() != c {
		return r.fail()
	}
	r.i++
	return nil
}

// null reads null if it comes next.
func (r *reader) null() bool {
	if r.peek() == 'n' && len(r.b)-r.i >= 4 && string(r.b[r.i:r.i+4]) == "null" {
		r.i += 4
		return true
	}
	return false
}

// object reads an object, calling member for each member name with the reader at its value.
func (r *reader) object(member func(name []byte) error) error {
	more, err := r.open('{', '}')
	for more && err == nil {
		var name []byte
		if name, err = r.rawString(); err != nil {
			return err
		}
		if err = r.expect(':'); err != nil {
			return err
		}
		if err = member(name); err != nil {
			return err
		}
		more, err = r.next('}')
	}
	return err
}

// array reads an array, calling elem with the reader at each element.
func (r *reader) array(elem func() error) error {
	more, err := r.open('[', ']')
	for more && err == nil {
		if err = elem(); err != nil {
			return err
		}
		more, err = r.next(']')
	}
	return err
}

// open reads null, or a list's opening byte; more says that an element follows (not null,
// nor the closing byte at once, which it reads).
func (r *reader) open(opening, closing byte) (more bool, err error) {
	if r.null() {
		return false, nil
	}
	if err := r.expect(opening); err != nil {
		return false, err
	}
	if r.peek() == closing {
		r.i++
		return false, nil
	}
	return true, nil
}

// next reads what follows a list's element: a comma, then more follow, or the closing byte.
func (r *reader) next(closing byte) (more bool, err error) {
	switch r.peek() {
	case ',':
		r.i++
		return true, nil
	case closing:
		r.i++
		return false, nil
	}
	return false, r.fail()
}

// rawString reads a string without escapes in place, or unescaped into a new slice.
func (r *reader) rawString() ([]byte, error) {
	if err := r.expect('"'); err != nil {
		return nil, err
	}
	start := r.i
	for r.i < len(r.b) {
		switch c := r.b[r.i]; {
		case c == '"':
			r.i++
			return r.b[start : r.i-1], nil
		case c == '\\':
			return r.escaped(start)
		case c < 0x20:
			return nil, r.fail()
		}
		r.i++
	}
	return nil, r.fail()
}

// escaped reads the rest of a string that has escapes.
func (r *reader) escaped(start int) ([]byte, error) {
	out := append([]byte(nil), r.b[start:r.i]...)
	for r.i < len(r.b) {
		c := r.b[r.i]
		switch {
		case c == '"':
			r.i++
			return out, nil
		case c < 0x20:
			return nil, r.fail()
		case c != '\\':
			out = append(out, c)
			r.i++
			continue
		}
		if r.i+1 >= len(r.b) {
			return nil, r.fail()
		}
		r.i += 2
		switch e := r.b[r.i-1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			c, ok := r.hex4()
			if !ok {
				return nil, r.fail()
			}
			if utf16.IsSurrogate(c) {
				if r.i+1 < len(r.b) && r.b[r.i] == '\\' && r.b[r.i+1] == 'u' {
					r.i += 2
					c2, ok := r.hex4()
					if !ok {
						return nil, r.fail()
					}
					c = utf16.DecodeRune(c, c2)
				} else {
					c = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, c)
		default:
			return nil, r.fail()
		}
	}
	return nil, r.fail()
}

func (r *reader) hex4() (rune, bool) {
	if len(r.b)-r.i < 4 {
		return 0, false
	}
	var c rune
	for _, h := range r.b[r.i : r.i+4] {
		c <<= 4
		switch {
		case h >= '0' && h <= '9':
			c |= rune(h - '0')
		case h >= 'a' && h <= 'f':
			c |= rune(h - 'a' + 10)
		case h >= 'A' && h <= 'F':
			c |= rune(h - 'A' + 10)
		default:
			return 0, false
		}
	}
	r.i += 4
	return c, true
}

func (r *reader) str(out *string) error {
	if r.null() {
		return nil
	}
	if err := r.expect('"'); err != nil {
		return err
	}
	start := r.i
	for r.i < len(r.b) {
		switch c := r.b[r.i]; {
		case c == '"':
			r.i++
			*out = r.src[start : r.i-1]
			return nil
		case c == '\\':
			b, err := r.escaped(start)
			*out = string(b)
			return err
		case c < 0x20:
			return r.fail()
		}
		r.i++
	}
	return r.fail()
}

var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// number reads a number. A plain decimal with at most 15 significant digits (every value the
// writers send but the attribution's unrounded phases) is read exactly as strconv would: an
// integer below 2^53 divided by a power of ten up to 10^22 rounds correctly. Anything else
// goes to strconv, without being read digit by digit first.
func (r *reader) number() (float64, error) {
	r.space()
	start := r.i
	neg := r.i < len(r.b) && r.b[r.i] == '-'
	if neg {
		r.i++
	}
	digitsAt := r.i
	dot, exp := false, false
	for ; r.i < len(r.b); r.i++ {
		switch c := r.b[r.i]; {
		case c >= '0' && c <= '9':
			continue
		case c == '.' && !dot:
			dot = true
			continue
		case c == 'e' || c == 'E' || c == '+' || c == '-':
			exp = true
			continue
		}
		break
	}
	if r.i == start || (neg && r.i == start+1) {
		return 0, r.fail()
	}
	digits := r.b[digitsAt:r.i]
	// More than 15 digits from a first one that is not 0: more than 15 significant ones.
	if n := len(digits); !exp && (n <= 15 || digits[0] == '0' || dot && n <= 16) {
		if f, ok := decimal(digits); ok {
			if neg {
				f = -f
			}
			return f, nil
		}
	}
	f, err := strconv.ParseFloat(r.src[start:r.i], 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, r.fail()
	}
	return f, nil
}

// decimal reads digits with at most one '.' exactly if they have at most 15 significant
// digits and 22 decimals.
func decimal(s []byte) (float64, bool) {
	var mant uint64
	digits, frac := 0, 0
	dot := false
	for _, c := range s {
		if c == '.' {
			dot = true
			continue
		}
		if digits == 15 {
			return 0, false
		}
		mant = mant*10 + uint64(c-'0')
		if dot {
			frac++
		}
		if mant != 0 {
			digits++
		}
	}
	if frac >= len(pow10) {
		return 0, false
	}
	return float64(mant) / pow10[frac], true
}

func (r *reader) float(out *float64) error {
	if r.null() {
		return nil
	}
	f, err := r.number()
	*out = f
	return err
}

func (r *reader) uint(out *uint64) error {
	if r.null() {
		return nil
	}
	f, err := r.number()
	if err != nil || f < 0 || f > 1<<53 || f != math.Trunc(f) {
		return r.fail()
	}
	*out = uint64(f)
	return nil
}

// skip reads any value.
func (r *reader) skip() error {
	switch c := r.peek(); {
	case c == '"':
		_, err := r.rawString()
		return err
	case c == '{':
		return r.object(func([]byte) error { return r.skip() })
	case c == '[':
		return r.array(r.skip)
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if len(r.b)-r.i >= len(lit) && string(r.b[r.i:r.i+len(lit)]) == lit {
				r.i += len(lit)
				return nil
			}
		}
		return r.fail()
	default:
		_, err := r.number()
		return err
	}
}

func (r *reader) view(v *WireView) error {
	return r.object(func(name []byte) error {
		switch string(name) {
		case "i":
			return r.str(&v.ID)
		case "d":
			return r.str(&v.Day)
		case "p":
			return r.str(&v.Page)
		case "c":
			return r.str(&v.Country)
		case "ip":
			return r.str(&v.IP)
		case "t":
			v.Timings = take(&r.timings, NumTimings)
			return r.array(func() error {
				var f float64
				err := r.float(&f)
				v.Timings = append(v.Timings, f)
				return err
			})
		case "x":
			return r.custom(v)
		case "k":
			return r.uint(&v.Weight)
		case "s":
			var s uint64
			err := r.uint(&s)
			v.Segments = Segments(s)
			return err
		case "g":
			return r.stringList(&v.Pages)
		case "a":
			if r.null() {
				return nil
			}
			return r.attribution(r.attributionOf(v))
		case "r":
			a := r.attributionOf(v)
			return r.array(func() error {
				reason, err := r.dictRef(len(a.NotRestored) == maxNotRestored)
				if err != nil {
					return err
				}
				a.NotRestored = append(a.NotRestored, reason)
				return nil
			})
		case "n":
			return r.start(r.attributionOf(v))
		}
		return r.skip()
	})
}

// stringList reads an array of strings onto *out.
func (r *reader) stringList(out *[]string) error {
	return r.array(func() error {
		var s string
		err := r.str(&s)
		*out = append(*out, s)
		return err
	})
}

// custom reads a view's custom variables.
func (r *reader) custom(v *WireView) error {
	return r.object(func(name []byte) error {
		var f float64
		if err := r.float(&f); err != nil {
			return err
		}
		if v.Custom == nil {
			v.Custom = map[string]float64{}
		}
		v.Custom[string(name)] = f
		return nil
	})
}

// attributionOf returns v's attribution, giving it one if it has none.
func (r *reader) attributionOf(v *WireView) *Attribution {
	if v.Attribution == nil {
		v.Attribution = r.attrs.next()
	}
	return v.Attribution
}

// dictRef reads an index into the batch's dictionary and returns its string; full says no
// more strings may follow in the array being read.
func (r *reader) dictRef(full bool) (string, error) {
	var f float64
	if err := r.float(&f); err != nil {
		return "", err
	}
	if f < 0 || int(f) >= len(r.dict) || f != math.Trunc(f) || full {
		return "", r.fail()
	}
	return r.dict[int(f)], nil
}

// start reads the interaction that started a soft navigation: the dictionary's indexes of its
// target and type. An array of another length leaves a without it.
func (r *reader) start(a *Attribution) error {
	var refs []string
	err := r.array(func() error {
		ref, err := r.dictRef(len(refs) == 2)
		if err != nil {
			return err
		}
		refs = append(refs, ref)
		return nil
	})
	if err == nil && len(refs) == 2 {
		st := r.starts.next()
		*st = StartAttribution{Target: refs[0], Type: refs[1]}
		a.Start = st
	}
	return err
}

// attribution reads a view's attribution array.
func (r *reader) attribution(a *Attribution) error {
	if err := r.expect('['); err != nil {
		return err
	}
	var err error
	num := func() float64 {
		if err != nil {
			return 0
		}
		if err = r.expect(','); err != nil {
			return 0
		}
		var f float64
		f, err = r.number()
		return f
	}
	ref := func() string {
		i := num()
		if err == nil && (i < 0 || int(i) >= len(r.dict) || i != math.Trunc(i)) {
			err = r.fail()
		}
		if err != nil {
			return ""
		}
		return r.dict[int(i)]
	}
	flags, err := r.number()
	if err != nil || flags < 0 || flags > 7 {
		return r.fail()
	}
	if int(flags)&1 != 0 {
		l := r.lcps.next()
		*l = LCPAttribution{Element: ref(), URL: ref()}
		for i := range l.Phases {
			l.Phases[i] = num()
		}
		a.LCP = l
	}
	if int(flags)&2 != 0 {
		in := r.inps.next()
		*in = INPAttribution{Target: ref(), Type: ref()}
		for i := range in.Phases {
			in.Phases[i] = num()
		}
		n := num()
		if err == nil && (n < 0 || n > MaxScripts) {
			return r.fail()
		}
		if n > 0 {
			in.Scripts = take(&r.scripts, int(n))
		}
		for range int(n) {
			in.Scripts = append(in.Scripts, Script{URL: ref(), Function: ref(), Entity: ref(), Duration: num()})
		}
		a.INP = in
	}
	if int(flags)&4 != 0 {
		c := r.clss.next()
		*c = CLSAttribution{Target: ref(), Time: num()}
		a.CLS = c
	}
	if err != nil {
		return err
	}
	return r.expect(']')
}
