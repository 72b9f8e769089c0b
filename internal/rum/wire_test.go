package rum

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
	"time"
)

// The batch reader reads what encoding/json reads, member by member, numbers bit for bit.
func TestWireBatchReaderMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for n := range 200 {
		batch := Batch{ID: fmt.Sprintf("b\"%d\\é", n), Account: "acme", Website: "w\u2028x"}
		for range 1 + rng.IntN(5) {
			v := View{ID: NewViewID(time.Unix(1_790_000_000, 0)), Day: "20261201", Page: "/p/\u00e9\t", Country: "FR", IP: "2001:db8::1",
				Metrics: map[string]float64{}, Weight: uint64(rng.IntN(3)), Segments: Segments(rng.Uint64() >> 22)}
			if rng.IntN(3) == 0 {
				v.Metrics["cart_items"] = 1.5
			}
			for _, name := range TimingNames {
				switch rng.IntN(4) {
				case 0:
				case 1:
					v.Metrics[name] = math.Round(rng.Float64()*1e7) / 1000
				case 2:
					v.Metrics[name] = rng.Float64() * math.Pow(10, float64(rng.IntN(30)-15))
				default:
					v.Metrics[name] = float64(rng.IntN(100000))
				}
			}
			if rng.IntN(2) == 0 {
				v.Pages = []string{"pa", "pb"}
				v.Attribution = &Attribution{
					LCP: &LCPAttribution{Element: "img#\"hero\"\x01\\", URL: "https://x.example/a.jpg", Phases: [4]float64{1.5, 2, 3e-9, 4e21}},
					INP: &INPAttribution{Target: "button", Type: "pointer", Phases: [3]float64{1, 2, 3},
						Scripts: []Script{{URL: "https://t.example/s.js", Function: "f<>", Entity: "T", Duration: 55.125}}},
					CLS: &CLSAttribution{Target: "p", Time: 123.456},
				}
				if rng.IntN(2) == 0 {
					v.Attribution.NotRestored = []string{"unload-listener", "masked"}
				}
				if rng.IntN(2) == 0 {
					v.Attribution.Start = &StartAttribution{Target: "nav>a.route", Type: "pointer"}
				}
			} else if rng.IntN(3) == 0 {
				// A back navigation the cache did not restore, with no other attribution.
				v.Attribution = &Attribution{NotRestored: []string{"response-cache-control-no-store"}}
			} else if rng.IntN(2) == 0 {
				// A soft navigation's start, alone.
				v.Attribution = &Attribution{Start: &StartAttribution{Target: "#to-about", Type: "keyboard"}}
			}
			batch.Views = append(batch.Views, v)
		}
		body, err := json.Marshal(batch)
		if err != nil || !json.Valid(body) {
			t.Fatalf("%s: %v", body, err)
		}
		var got WireBatch
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		want := WireBatch{ID: batch.ID, Account: batch.Account, Website: batch.Website}
		for _, v := range batch.Views {
			want.Views = append(want.Views, v.Wire())
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\nread %+v\nwant %+v", body, got, want)
		}
		var back Batch
		if err := json.Unmarshal(body, &back); err != nil || !reflect.DeepEqual(back, batch) {
			t.Fatalf("%s:\nback %+v\nwant %+v (%v)", body, back, batch, err)
		}
		// Without attribution, encoding/json reads the same (the format is plain JSON).
		if n == 0 {
			type plain WireBatch
			var slow plain
			plainBatch := batch
			plainBatch.Views = nil
			for _, v := range batch.Views {
				v.Attribution = nil
				plainBatch.Views = append(plainBatch.Views, v)
			}
			body, _ := json.Marshal(plainBatch)
			var fast WireBatch
			if json.Unmarshal(body, &slow) != nil || json.Unmarshal(body, &fast) != nil || !reflect.DeepEqual(fast, WireBatch(slow)) {
				t.Fatalf("%s: reader %+v, encoding/json %+v", body, fast, slow)
			}
		}
	}
	// Unknown members are skipped; broken input is refused.
	var b WireBatch
	if err := json.Unmarshal([]byte(`{"id":"x","new":{"a":[1,true,null,"s"]},"v":[{"d":"20261201","z":1e5,"t":[1,-1]}]}`), &b); err != nil ||
		b.ID != "x" || len(b.Views) != 1 || !reflect.DeepEqual(b.Views[0].Timings, []float64{1, -1}) {
		t.Errorf("%+v %v", b, err)
	}
	// A reader before the back/forward cache's reasons skips them: the views still count.
	type before struct {
		Views []struct {
			Day string `json:"d"`
		} `json:"v"`
	}
	var old before
	if err := json.Unmarshal([]byte(`{"z":["unload-listener"],"v":[{"d":"20261201","t":[],"a":[0],"r":[0]}]}`), &old); err != nil || len(old.Views) != 1 {
		t.Errorf("an older reader: %+v %v", old, err)
	}
	for _, bad := range []string{`{"id":1}`, `{"v":[{"t":[1,]}]}`, `{"v":[{"k":-1}]}`, `{"v":[{"k":1.5}]}`,
		`{"v":[{"a":[1,0,0,1,2,3,4]}]}`, `{"z":["x"],"v":[{"a":[9]}]}`, `{"z":["x"],"v":[{"r":[1]}]}`, `{"z":["x"],"v":[{"r":[0,0,0,0]}]}`, `{"z":["x"],"v":[{"a":[4,0]}]}`, `{"z":["x"],"v":[{"a":[2,0,0,1,2,3,4]}]}`} {
		if err := b.UnmarshalJSON([]byte(bad)); err == nil {
			t.Errorf("%s read", bad)
		}
	}
}

// The reader's numbers are strconv's, bit for bit, on either side of its fast path's limits
// (15 significant digits, 22 decimals, leading zeros).
func TestWireNumbersAreStrconvs(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	cases := []string{"0", "-0", "7", "0.1", "123456789012345", "1234567890123456", "123456789012345.6",
		"12345678901234.56", "9007199254740993", "0.000000000000000123", "00001234567890123456",
		"0.0000000000000000000001", "0.00000000000000000000001", "1e22", "1.5E-7", "123.40000000000146",
		"-98765.4321", "4e21", "1.7976931348623157e308", "1e400"}
	for range 2000 {
		x := math.Exp(rng.NormFloat64()*8) * float64(1-2*rng.IntN(2))
		cases = append(cases, strconv.FormatFloat(x, 'f', -1, 64), strconv.FormatFloat(x, 'f', rng.IntN(6), 64),
			strconv.FormatFloat(x, 'g', -1, 64))
	}
	for _, c := range cases {
		r := reader{b: []byte(c + "]"), src: c + "]"}
		got, err := r.number()
		want, werr := strconv.ParseFloat(c, 64)
		if werr != nil && !errors.Is(werr, strconv.ErrRange) {
			t.Fatalf("%s: %v", c, werr)
		}
		if err != nil || math.Float64bits(got) != math.Float64bits(want) || r.b[r.i] != ']' {
			t.Errorf("%s: read %v (%v), want %v", c, got, err, want)
		}
	}
}
