package lighthouse

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"slices"
	"testing"

	"github.com/openvitals/openvitals/internal/model"
)

func jpegOf(t *testing.T, w, h int, c color.Color) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// The trace's frames become the filmstrip: scaled to FrameWidth, a frame that looks like the
// one before left out (a white first paint after the blank frame), and so is another blank
// one (0 % complete), each image stored once.
func TestTraceFilmstrip(t *testing.T) {
	white, blue := jpegOf(t, 800, 600, color.White), jpegOf(t, 800, 600, color.RGBA{0, 0, 255, 255})
	grey := jpegOf(t, 800, 600, color.RGBA{250, 250, 250, 255})
	in, err := json.Marshal(map[string]any{"speedIndex": 412.34, "frames": []map[string]any{
		{"time": 0, "complete": 0, "jpeg": white},
		{"time": 95, "complete": 0, "jpeg": white},
		{"time": 120, "complete": 0, "jpeg": grey},
		{"time": 300.04, "complete": 100, "jpeg": blue},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var o Diagnosis
	if err := o.traceFilmstrip(in); err != nil {
		t.Fatal(err)
	}
	f := o.Diagnostics.Filmstrip
	if len(f) != 2 || f[0].Time != 0 || *f[0].Complete != 0 || f[1].Time != 300 || *f[1].Complete != 100 || f[0].Image == f[1].Image {
		t.Fatalf("filmstrip %+v, want the blank frame at 0 and the blue one at 300 ms", f)
	}
	if len(o.Images) != 2 || o.Diagnostics.SpeedIndex == nil || *o.Diagnostics.SpeedIndex != 412.3 {
		t.Errorf("%d images, Speed Index %v; want 2 and 412.3", len(o.Images), o.Diagnostics.SpeedIndex)
	}
	for _, im := range o.Images {
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(im.Data))
		if err != nil || cfg.Width != FrameWidth || cfg.Height != 180 {
			t.Errorf("image %s: %dx%d (%v), want %dx180", im.Name, cfg.Width, cfg.Height, err, FrameWidth)
		}
	}
	if err := o.traceFilmstrip([]byte(`{"frames":[{"time":1,"jpeg":"bm90IGEganBlZw=="}]}`)); err == nil {
		t.Error("a frame that is no JPEG was read")
	}
}

// noiseJPEG is a picture of random pixels, which no JPEG compresses: the worst case of a
// filmstrip's bytes (a photograph painted progressively is a new such picture at every pass).
func noiseJPEG(t *testing.T, w, h int, seed uint64) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	x := seed*2654435761 + 1
	for i := range img.Pix {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		img.Pix[i] = byte(x)
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// A filmstrip of pictures that do not compress stays within FilmstripBudget: at a lower
// quality, then without the frames that changed least, but never without the first, the last
// and those showing FCP, LCP and the largest shift; a filmstrip within the budget keeps every
// frame at the best quality.
func TestTraceFilmstripBudget(t *testing.T) {
	type frame struct {
		time, complete float64
	}
	// Completeness steps of 2 to 30 points; FCP at 300 ms, the largest shift at 650 (the frames
	// at 600 and 700 show it), LCP at 1,008 (the frame at 1,000 shows it: a screenshot may be
	// timed a few ms before the paint).
	frames := []frame{{0, 0}, {300, 10}, {400, 12}, {500, 20}, {600, 22}, {700, 40}, {800, 43}, {900, 60},
		{1000, 90}, {1100, 92}, {1200, 94}, {1300, 100}}
	var in []map[string]any
	for i, f := range frames {
		in = append(in, map[string]any{"time": f.time, "complete": f.complete, "jpeg": noiseJPEG(t, 480, 200, uint64(i+1))})
	}
	raw, err := json.Marshal(map[string]any{"speedIndex": 800, "frames": in})
	if err != nil {
		t.Fatal(err)
	}
	fcp, shift, lcp := 300.0, 650.0, 1008.0
	o := Diagnosis{}
	o.Diagnostics.Marks = model.Marks{FCP: &fcp, LCP: &lcp, LargestShift: &shift}
	if err := o.traceFilmstrip(raw); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, im := range o.Images {
		total += len(im.Data)
	}
	var times []float64
	for _, f := range o.Diagnostics.Filmstrip {
		times = append(times, f.Time)
	}
	if total > FilmstripBudget || len(times) >= len(frames) {
		t.Errorf("%d frames in %d bytes, want fewer than %d within %d", len(times), total, len(frames), FilmstripBudget)
	}
	for _, want := range []float64{0, 300, 600, 700, 1000, 1300} { // first, FCP, shift, LCP, last
		if !slices.Contains(times, want) {
			t.Errorf("frames at %v: the one at %v ms is gone", times, want)
		}
	}
	if !slices.IsSorted(times) {
		t.Errorf("frames at %v, not in order", times)
	}
	// The frames left out are those that changed the picture least: while any frame but those
	// that must stay is left, the one at 900 ms (+17 points, the most) is.
	if len(times) > 6 && !slices.Contains(times, 900) {
		t.Errorf("frames at %v: 900 ms (+17) left out before frames that changed less", times)
	}

	// A small filmstrip keeps every distinct frame at the best quality.
	white, blue := jpegOf(t, 800, 600, color.White), jpegOf(t, 800, 600, color.RGBA{0, 0, 255, 255})
	raw, _ = json.Marshal(map[string]any{"frames": []map[string]any{{"time": 0, "complete": 0, "jpeg": white}, {"time": 200, "complete": 100, "jpeg": blue}}})
	small := Diagnosis{}
	if err := small.traceFilmstrip(raw); err != nil || len(small.Diagnostics.Filmstrip) != 2 {
		t.Fatalf("filmstrip %+v, %v", small.Diagnostics.Filmstrip, err)
	}
	data, _ := base64.StdEncoding.DecodeString(blue)
	picture, err := scaled(data, FrameWidth)
	if err != nil {
		t.Fatal(err)
	}
	best, _ := encodeJPEG(picture, frameQualities[0])
	if small.Images[1].Name != imageName(best, ".jpg") {
		t.Errorf("a small filmstrip's frame was not stored at quality %d", frameQualities[0])
	}
}
